//! Shuangkou's game family: a [`Session`] as the shared owner of live games holds it. Its
//! record's script text goes to the store's script table (once per version), not into the
//! record's body; its 托管 and bot seats' decisions are `service::bots` (a search bot thinks off
//! the async runtime), so [`LiveGame::auto_entry`] keeps its default here.

use std::sync::Arc;

use super::family::{LiveGame, inherent_live_game_methods};
use crate::game::Action;
use crate::seat::Player;
use crate::service::record::{Record, VerifiedTokens};
use crate::service::restored::Restored;
use crate::service::session::{Prepared, Session, Submitted};
use crate::service::status::ApiError;
use crate::store::{GameRecord, LogEntry, PinnedScript, Snapshot};
use crate::variants::Registry;

impl LiveGame for Session {
    type Registry = Registry;
    type Record = Record;
    type Prepared = Prepared;
    type Submitted = Submitted;

    const METRIC_LABEL: Option<&'static str> = None;
    const LOG_NAME: &'static str = "";

    fn create(registry: &Registry, record: Record, no_timers: bool) -> Result<Session, ApiError> {
        Session::create(registry, record, no_timers)
    }

    fn stored_record(record: Record, request_id: Option<String>) -> Result<GameRecord, ApiError> {
        // The script text goes to the store's script table (once per version), not into the
        // record's body (≈ 17 KB per game otherwise).
        let mut record = record;
        let text = std::mem::take(&mut record.script);
        Ok(GameRecord {
            id: record.id.clone(),
            platform: record.platform.clone(),
            request_id,
            body: record.encode()?,
            script: Some(PinnedScript {
                hash: record.version,
                text: Arc::from(text),
            }),
        })
    }

    fn restore(
        registry: &Registry,
        record: &GameRecord,
        log: &[LogEntry],
        no_timers: bool,
    ) -> Result<Session, ApiError> {
        Session::restore(registry, record, log, no_timers)
    }

    fn restore_from_snapshots(
        registry: &Registry,
        record: &GameRecord,
        from: u64,
        tail: &[LogEntry],
        snapshots: &[Snapshot],
        keep: usize,
        no_timers: bool,
    ) -> Result<Restored<Session>, ApiError> {
        Session::restore_from_tail(registry, record, from, tail, snapshots, keep, no_timers)
    }

    fn restore_whole(
        registry: &Registry,
        record: &GameRecord,
        log: &[LogEntry],
        keep: usize,
        covered: u32,
        no_timers: bool,
    ) -> Result<Session, ApiError> {
        Session::replay_whole(registry, record, log, keep, covered, no_timers)
    }

    fn take_snapshot(&mut self) -> Option<(u64, Vec<u8>)> {
        Session::take_snapshot(self)
    }

    fn record(&self) -> &Record {
        &self.record
    }

    fn tokens(&mut self) -> (&Record, &mut VerifiedTokens) {
        Session::tokens(self)
    }

    inherent_live_game_methods!(presence: |step| step.pick(
        Action::Disconnect,
        Action::Reconnect,
        Action::ReconnectExpired,
    ) => prepare_action);

    fn request_of(prepared: &Prepared) -> Option<(Player, &str)> {
        prepared.request()
    }

    fn has_request(&self, player: Player, request_id: &str) -> bool {
        self.request_seq(player, request_id).is_some()
    }

    fn keep_actions(&mut self, actions: usize) {
        Session::keep_actions(self, actions)
    }

    fn bot_to_act(&self) -> Option<Player> {
        Session::bot_to_act(self)
    }

    fn human_players(&self) -> Vec<Player> {
        (0..self.record.players.len())
            .filter_map(|i| u8::try_from(i).ok().map(Player::new))
            .filter(|&p| self.bot(p).is_none())
            .collect()
    }

    fn bot_delay_ms(&self) -> u64 {
        u64::from(self.record.bot_delay_ms)
    }

    fn deadline(&self) -> Option<u64> {
        self.game().deadline()
    }

    fn is_disconnected(&self, player: Player) -> bool {
        self.game().is_disconnected(player)
    }
}
