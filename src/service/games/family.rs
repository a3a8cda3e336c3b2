//! What the owner of live games ([`super::Games`]) needs from one game family: how a game is
//! built (created, restored from the store by replay), how an action goes to the log (prepared
//! on a copy, appended, accepted), and what the schedule and presence ask of it (the turn
//! deadline, bot seats, reconnect windows, the entries presence logs). Implemented by Shuangkou's
//! `session::Session` (`games::shuangkou`) and 升級's `shengji::table::Table`
//! (`shengji::family`).
//!
//! The turn and presence methods have default bodies meaning "nothing scheduled": no deadline, no
//! reconnect window, no 托管 decision, nothing presence logs. A family without turn timers or
//! presence is served with those defaults.

use crate::seat::Player;
use crate::service::auth::GameToken;
use crate::service::record::{Record, VerifiedTokens};
use crate::service::restored::Restored;
use crate::service::status::ApiError;
use crate::store::{GameRecord, LogEntry, Snapshot};

/// A step of presence that a game logs for a player (seed 002, 掉線逃跑).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresenceStep {
    /// The player's last stream closed a grace ago.
    Disconnect,
    /// The player is back (a stream, or a call with its seat token).
    Reconnect,
    /// The player's reconnect window ran out.
    Expire,
}

impl PresenceStep {
    /// The family's own entry kind for this step, given the one for each step.
    pub fn pick<T>(self, disconnect: T, reconnect: T, expire: T) -> T {
        match self {
            PresenceStep::Disconnect => disconnect,
            PresenceStep::Reconnect => reconnect,
            PresenceStep::Expire => expire,
        }
    }
}

/// One game family's live game, as the shared owner of live games holds it.
pub trait LiveGame: Send + Sized + 'static {
    /// The variant registry games of this family are built from.
    type Registry: Send + Sync + 'static;
    /// The creation record a client's CreateGame becomes.
    type Record: Clone + Send;
    /// An action prepared on a copy, waiting for the store.
    type Prepared: Send;
    /// What accepting a prepared action returns.
    type Submitted;

    /// The family's `game` metric label (`None`: Shuangkou's metrics, which have none).
    const METRIC_LABEL: Option<&'static str>;
    /// The family's name in log lines ("" or "升級 ").
    const LOG_NAME: &'static str;

    /// A new game from its record (nothing stored yet); `no_timers`: turn deadlines are off.
    fn create(
        registry: &Self::Registry,
        record: Self::Record,
        no_timers: bool,
    ) -> Result<Self, ApiError>;

    /// The store's record of a new game (`request_id`: its idempotency key).
    fn stored_record(
        record: Self::Record,
        request_id: Option<String>,
    ) -> Result<GameRecord, ApiError>;

    /// Rebuilds a game from its stored record and log, verifying every recorded state hash.
    fn restore(
        registry: &Self::Registry,
        record: &GameRecord,
        log: &[LogEntry],
        no_timers: bool,
    ) -> Result<Self, ApiError>;

    /// [`LiveGame::restore`] starting from the newest usable snapshot of `snapshots` (taken at
    /// or before the last `keep` entries, so the rebuilt backlog is full), given the log's
    /// entries after `from` only (`tail`; `from` 0: the whole log); a rebuild that needs earlier
    /// entries says which ([`Restored`]). A family without snapshots replays the whole log.
    fn restore_from_snapshots(
        registry: &Self::Registry,
        record: &GameRecord,
        from: u64,
        tail: &[LogEntry],
        _snapshots: &[Snapshot],
        _keep: usize,
        no_timers: bool,
    ) -> Result<Restored<Self>, ApiError> {
        if from > 0 {
            return Ok(Restored::WholeLog { covered: 0 });
        }
        Self::restore(registry, record, tail, no_timers).map(Restored::Game)
    }

    /// The whole `log` replayed after [`LiveGame::restore_from_snapshots`] asked for it
    /// (`covered`: the settled deals its snapshots hold), keeping `keep` actions.
    fn restore_whole(
        registry: &Self::Registry,
        record: &GameRecord,
        log: &[LogEntry],
        _keep: usize,
        _covered: u32,
        no_timers: bool,
    ) -> Result<Self, ApiError> {
        Self::restore(registry, record, log, no_timers)
    }

    /// The snapshot to store after the action just accepted (`(seq, body)`: at a deal's end),
    /// if the family keeps snapshots.
    fn take_snapshot(&mut self) -> Option<(u64, Vec<u8>)> {
        None
    }

    /// The creation record both families share (id, variant, platform, tokens' digests).
    fn record(&self) -> &Record;
    /// The record and the token secrets this game has verified (memory only).
    fn tokens(&mut self) -> (&Record, &mut VerifiedTokens);
    /// True if `token` is this game's for its role ([`Record::verify`]): a secret verified
    /// before is compared, not hashed again ([`VerifiedTokens`]).
    fn verify_token(&mut self, token: &GameToken) -> bool {
        let (record, tokens) = self.tokens();
        tokens.verify(record, token)
    }
    fn id(&self) -> &str {
        &self.record().id
    }
    fn variant(&self) -> &str {
        &self.record().variant
    }
    /// Actions accepted so far.
    fn seq(&self) -> u64;
    fn finished(&self) -> bool;

    /// Applies a stored entry (replay, catching up with another writer); entries at or before
    /// the seq are skipped.
    fn apply_entry(&mut self, entry: &LogEntry) -> Result<(), ApiError>;
    /// Makes a prepared action current (after the store acknowledged it).
    fn accept(&mut self, prepared: Self::Prepared) -> Self::Submitted;
    /// Wakes the game's watchers.
    fn notify(&self);

    /// The log entry of a prepared action.
    fn log_entry(prepared: &Self::Prepared) -> &LogEntry;
    /// The prepared action finishes the game.
    fn finishes(prepared: &Self::Prepared) -> bool;
    /// The player and request id of a prepared action, if it came with one.
    fn request_of(prepared: &Self::Prepared) -> Option<(Player, &str)>;
    /// True when this copy holds the action `player` made with `request_id`.
    fn has_request(&self, player: Player, request_id: &str) -> bool;

    /// Keeps the events and idempotency keys of at most `actions` actions (the bounded backlog).
    fn keep_actions(&mut self, _actions: usize) {}

    /// The bot seat that may act now, if any (人機).
    fn bot_to_act(&self) -> Option<Player>;
    /// The players seated by people, not by the server's bots: those presence tracks.
    fn human_players(&self) -> Vec<Player> {
        Vec::new()
    }
    /// Milliseconds a bot seat waits before it acts.
    fn bot_delay_ms(&self) -> u64 {
        0
    }

    // ---- turn timers, 托管 and presence (default: nothing scheduled) ----

    /// Unix ms when the current turn times out (`None`: no timer, or nobody to act).
    fn deadline(&self) -> Option<u64> {
        None
    }
    /// The current turn's deadline has passed at `now`.
    fn deadline_passed(&self, now: u64) -> bool {
        self.deadline().is_some_and(|d| d <= now)
    }
    /// The player to act is disconnected.
    fn turn_is_away(&self) -> bool {
        false
    }
    /// Disconnected players and when their reconnect window ends (Unix ms).
    fn open_windows(&self) -> Vec<(Player, u64)> {
        Vec::new()
    }
    /// True while `player` is disconnected.
    fn is_disconnected(&self, _player: Player) -> bool {
        false
    }
    /// True when presence's `step` applies to `player` now, in a game not finished: a
    /// disconnect of a connected player, a reconnect of a disconnected one, the expiry of an
    /// open window.
    fn presence_applies(&self, player: Player, step: PresenceStep, now: u64) -> bool {
        if self.finished() {
            return false;
        }
        let away = self.is_disconnected(player);
        match step {
            PresenceStep::Disconnect => !away,
            PresenceStep::Reconnect => away,
            PresenceStep::Expire => self
                .open_windows()
                .iter()
                .any(|&(p, at)| p == player && at <= now),
        }
    }
    /// The entry presence logs for `player` now, if `step` applies (a disconnect of a connected
    /// player, a reconnect of a disconnected one, the expiry of an open window); `None`: nothing.
    fn presence_entry(
        &self,
        player: Player,
        step: PresenceStep,
        now: u64,
    ) -> Option<Result<Self::Prepared, ApiError>> {
        self.presence_applies(player, step, now)
            .then(|| self.prepare_presence_step(player, step, now))
    }
    /// The log entry of presence `step` for `player` at `now`, prepared on a copy (the family's
    /// own entry kind: Shuangkou's presence actions, 升級's presence steps).
    fn prepare_presence_step(
        &self,
        player: Player,
        step: PresenceStep,
        now: u64,
    ) -> Result<Self::Prepared, ApiError>;
    /// 托管: the service's action for the player to act, whose deadline passed or who is away,
    /// decided from that player's view; `None`: nothing to do. (Shuangkou's is `service::bots`,
    /// whose search bot thinks off the async runtime.)
    fn auto_entry(&self, _now: u64) -> Option<Result<Self::Prepared, ApiError>> {
        None
    }
}

/// The [`LiveGame`] methods a family's type has as inherent methods of the same name and
/// signature (`seq`, `finished`, `apply_entry`, `accept`, `notify`, `deadline_passed`,
/// `turn_is_away`, `open_windows`), for its `impl LiveGame`, and its
/// [`LiveGame::prepare_presence_step`]: `presence: |step| KIND => PREPARE` logs the family's
/// `KIND` of a presence `step` with its inherent `PREPARE(player, KIND, now)`.
macro_rules! inherent_live_game_methods {
    (presence: |$step:ident| $kind:expr => $prepare:ident) => {
        fn prepare_presence_step(
            &self,
            player: $crate::seat::Player,
            $step: $crate::service::games::PresenceStep,
            now: u64,
        ) -> Result<Self::Prepared, $crate::service::status::ApiError> {
            Self::$prepare(self, player, $kind, now)
        }
        fn seq(&self) -> u64 {
            Self::seq(self)
        }
        fn finished(&self) -> bool {
            Self::finished(self)
        }
        fn apply_entry(
            &mut self,
            entry: &$crate::store::LogEntry,
        ) -> Result<(), $crate::service::status::ApiError> {
            Self::apply_entry(self, entry)
        }
        fn accept(&mut self, prepared: Self::Prepared) -> Self::Submitted {
            Self::accept(self, prepared)
        }
        fn notify(&self) {
            Self::notify(self)
        }
        fn log_entry(prepared: &Self::Prepared) -> &$crate::store::LogEntry {
            &prepared.log
        }
        fn finishes(prepared: &Self::Prepared) -> bool {
            prepared.finished()
        }
        fn deadline_passed(&self, now: u64) -> bool {
            Self::deadline_passed(self, now)
        }
        fn turn_is_away(&self) -> bool {
            Self::turn_is_away(self)
        }
        fn open_windows(&self) -> Vec<($crate::seat::Player, u64)> {
            Self::open_windows(self)
        }
    };
}
pub(crate) use inherent_live_game_methods;
