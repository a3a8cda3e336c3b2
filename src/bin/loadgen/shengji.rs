//! `shuangkou-load --game shengji`: the same closed loop over `shengji.v1` (升級). Each worker plays
//! one match at a time with its seats' tokens; its seats are played by the core's rule bot
//! (`shengji::bot::RuleBot`, seeded), deciding from the seat's view as the server sends it
//! (`GetState`/`SubmitAction` responses read back with `wire::shengji_client::view`).
//! `--bot-seats K` makes the last K seats server bot seats (CreateGame `bot_seats`, at most 3).
//!
//! While dealing, the client's seats take turns to deal one card each (`Deal{count: 1}`), and a
//! seat whose bot wants to declare (亮主) does so right after its own step; the dealer buries; each
//! trick, the seat to act plays its bot's card. After `--deals-per-game` deals (or at the run's
//! end) the match is ended with `LeaveGame`, unless it is over by then, so that every match has
//! a replay: it is fetched with `GetReplay` and re-executed by the core with the pinned script
//! after the timed part (every state hash), and the plays acknowledged are compared with the log
//! (`shengji_verify`).

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use shuangkou::service::wire::shengji_client;
use shuangkou::shengji::bot::RuleBot;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;

use crate::client::{bearer, with_auth};
use crate::shared::Shared;
use crate::shengji_verify::Finished;
use crate::stats::{Rpc, Stats};

/// How many times a state that names a server bot seat to act is read again before the run
/// counts a desync, and the pause between two reads (at most 5 s in all).
const BOT_TURN_READS: u32 = 50;
const BOT_TURN_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// One worker: matches one after another until the run's budget or deadline.
pub struct Worker {
    pub client: ShengjiEngineClient<Channel>,
    pub shared: Arc<Shared>,
    pub rng: ChaCha8Rng,
    pub stats: Stats,
}

/// One match as the client drives it.
struct Match {
    id: String,
    auth: Vec<AsciiMetadataValue>,
    bot_seats: Vec<u32>,
    bots: RuleBot,
    plays: u64,
    /// The last state read and the seat it was read as.
    state: pb::GameState,
    seen_as: u32,
    /// The next client seat to deal.
    dealing: usize,
}

impl Match {
    fn client_seats(&self) -> Vec<u32> {
        (0..4).filter(|s| !self.bot_seats.contains(s)).collect()
    }

    fn phase(&self) -> pb::Phase {
        pb::Phase::try_from(self.state.phase).unwrap_or(pb::Phase::Unspecified)
    }
}

impl Worker {
    pub async fn play(mut self) -> Stats {
        while self.shared.take_game() {
            match self.one_match().await {
                Some(f) => self.stats.games_done.push(crate::stats::Done::Shengji(f)),
                None => self.stats.games_failed += 1,
            }
        }
        self.stats
    }

    async fn one_match(&mut self) -> Option<Finished> {
        let args = &self.shared.args;
        let key = match &args.api_key {
            Some(k) => Some(bearer(k).ok()?),
            None => None,
        };
        let bot_seats: Vec<u32> = (4 - u32::from(args.bot_seats.min(3))..4).collect();
        let deals = args.deals_per_game.max(1);
        let req = pb::CreateGameRequest {
            bot_seats: bot_seats.clone(),
            ..Default::default()
        };
        let created = self
            .stats
            .create(self.client.create_game(with_auth(req, key.as_ref())))
            .await?;
        let auth = created
            .seat_tokens
            .iter()
            .map(|t| bearer(t))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        let mut m = Match {
            id: created.game_id,
            auth,
            bot_seats,
            bots: RuleBot::new(self.rng.random()),
            plays: 0,
            state: pb::GameState::default(),
            seen_as: 0,
            dealing: 0,
        };
        let first = *m.client_seats().first()?;
        self.read(&mut m, first).await?;
        let mut deals_seen = 0;
        while m.phase() != pb::Phase::Finished {
            if m.state.results.len() > deals_seen {
                self.stats.deals += (m.state.results.len() - deals_seen) as u64;
                deals_seen = m.state.results.len();
            }
            if deals_seen >= deals as usize || self.shared.out_of_time() {
                self.leave(&mut m, first).await?;
                break;
            }
            self.step(&mut m).await?;
        }
        let replay = self
            .stats
            .timed(
                Rpc::Replay,
                self.client.get_replay(with_auth(
                    pb::GetReplayRequest {
                        game_id: m.id.clone(),
                    },
                    m.auth.get(first as usize),
                )),
            )
            .await?;
        Some(Finished {
            replay,
            plays: m.plays,
            bot_seats: m.bot_seats,
            winner: m.state.winner,
        })
    }

    /// GetState as `seat`.
    async fn read(&mut self, m: &mut Match, seat: u32) -> Option<()> {
        let req = pb::GetStateRequest {
            game_id: m.id.clone(),
        };
        let call = self
            .client
            .get_state(with_auth(req, m.auth.get(seat as usize)));
        m.state = self.stats.timed(Rpc::State, call).await?.state?;
        m.seen_as = seat;
        Some(())
    }

    /// One action of a client seat: a deal step (and the dealing seat's declaration, if its bot
    /// wants one), the bury, or a play.
    async fn step(&mut self, m: &mut Match) -> Option<()> {
        if m.phase() == pb::Phase::Dealing {
            let seats = m.client_seats();
            let seat = seats[m.dealing % seats.len()];
            m.dealing += 1;
            let deal = pb::submit_action_request::Action::Deal(pb::Deal { count: 1 });
            self.submit(m, seat, deal).await?;
            return self.bot_acts(m).await;
        }
        let mut turn = m.state.turn?;
        // The server's bots act within the request that gives them the turn, or (a bot dealing
        // seat dealing the rest and closing the deal) from its schedule at once: a state read
        // between the two may still name a bot. Read again, a bounded number of times.
        for _ in 0..BOT_TURN_READS {
            if !m.bot_seats.contains(&turn) {
                break;
            }
            tokio::time::sleep(BOT_TURN_PAUSE).await;
            self.read(m, m.seen_as).await?;
            turn = m.state.turn?;
        }
        if m.bot_seats.contains(&turn) {
            self.stats
                .error("bot", "Desync".into(), "a server bot seat still to act");
            self.stats.desyncs += 1;
            return None;
        }
        if m.seen_as != turn {
            self.read(m, turn).await?;
        }
        self.bot_acts(m).await
    }

    /// The rule bot of the seat the state was read as decides; its action is submitted.
    async fn bot_acts(&mut self, m: &mut Match) -> Option<()> {
        let view = match shengji_client::view(&m.state) {
            Ok(v) => v,
            Err(e) => {
                self.stats.error("bot", "BadState".into(), &e);
                return None;
            }
        };
        let Some(action) = m.bots.decide(&view) else {
            if m.phase() == pb::Phase::Dealing || m.state.turn != Some(m.seen_as) {
                return Some(());
            }
            self.stats.error(
                "bot",
                "NoAction".into(),
                "the rule bot has no action on its turn",
            );
            return None;
        };
        let (seat, a) = shengji_client::request(&action);
        self.submit(m, seat.map_or(m.seen_as, u32::from), a).await
    }

    async fn submit(
        &mut self,
        m: &mut Match,
        seat: u32,
        action: pb::submit_action_request::Action,
    ) -> Option<()> {
        let play = matches!(action, pb::submit_action_request::Action::Play(_));
        let req = pb::SubmitActionRequest {
            game_id: m.id.clone(),
            seat,
            expected_seq: m.state.seq,
            request_id: if self.shared.args.no_request_ids {
                String::new()
            } else {
                format!("{}-{}", m.id, m.state.seq)
            },
            action: Some(action),
        };
        let rpc = if play { Rpc::Submit } else { Rpc::Act };
        let dealing = m.phase() == pb::Phase::Dealing;
        let t = std::time::Instant::now();
        let answer = self
            .client
            .submit_action(with_auth(req, m.auth.get(seat as usize)))
            .await;
        if dealing && matches!(&answer, Err(s) if s.code() == tonic::Code::Aborted) {
            // A bot dealing seat dealt (or closed the deal) between our read and this step: an
            // expected race (its `expected_seq` refused the step, nothing was applied). Read the
            // state again and go on from it.
            return self.read(m, seat).await;
        }
        self.stats.record(rpc, t, &answer);
        let r = answer.ok()?.into_inner();
        if play {
            m.plays += 1;
        }
        m.state = r.state?;
        m.seen_as = seat;
        Some(())
    }

    async fn leave(&mut self, m: &mut Match, seat: u32) -> Option<()> {
        let req = pb::LeaveGameRequest {
            game_id: m.id.clone(),
        };
        self.stats
            .timed(
                Rpc::Act,
                self.client
                    .leave_game(with_auth(req, m.auth.get(seat as usize))),
            )
            .await?;
        self.read(m, seat).await
    }
}
