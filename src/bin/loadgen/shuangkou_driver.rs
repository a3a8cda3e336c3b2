//! The Shuangkou driver: a worker plays its games over `shuangkou.v1` in a closed loop (or at
//! the `--rate` schedule), choosing each play with the `--policy` bot from the legal plays of
//! `GetHints` or enumerated locally, waiting for server-side bot seats, and fetches every
//! completed game's replay for verification after the run.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::CardSet;
use shuangkou::hand::Hand;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::wire;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;

use crate::args::{Hints, Policy};
use crate::client::{bearer, with_auth};
use crate::shared::Shared;
use crate::shuangkou_game::Run;
use crate::stats::{Done, Rpc, Stats};
use crate::verify::Finished;

/// A play chosen: its cards and declared reading or `None` to pass, and (local hints) the hand
/// it makes, which becomes the trick's top.
type Choice = (Option<(Vec<u32>, pb::Declared)>, Option<Hand>);

/// One worker: its client, its seeded bot and its statistics.
pub struct Worker {
    pub index: usize,
    pub client: GameEngineClient<Channel>,
    pub shared: Arc<Shared>,
    pub rng: ChaCha8Rng,
    pub stats: Stats,
    pub requests: u64,
}

/// The play's declared type and key, as SubmitPlay takes them.
fn declared_of(hand: &Hand) -> pb::Declared {
    pb::Declared {
        r#type: wire::hand_type(hand.kind) as i32,
        key: hand
            .key()
            .map(|k| k.symbol().to_string())
            .unwrap_or_default(),
    }
}

impl Worker {
    fn take_game(&self) -> bool {
        self.shared.take_game()
    }

    fn out_of_time(&self) -> bool {
        self.shared.out_of_time()
    }

    async fn create(&mut self) -> Option<Run> {
        let a = &self.shared.args;
        let auth = match &a.api_key {
            Some(k) => Some(bearer(k).ok()?),
            None => None,
        };
        let players = self.shared.rules.players;
        let first_bot = players.saturating_sub(a.bot_seats);
        let req = pb::CreateGameRequest {
            variant: a.variant.clone(),
            deals: a.deals_per_game,
            bots: (first_bot..players)
                .map(|p| (u32::from(p), a.bot_policy.clone()))
                .collect(),
            auto_policy: a.auto_policy.clone(),
            ..Default::default()
        };
        let resp = self
            .stats
            .create(self.client.create_game(with_auth(req, auth.as_ref())))
            .await?;
        let mut auth = Vec::new();
        for tok in &resp.seat_tokens {
            // A bot seat has no token (nothing acts for it).
            let tok = if tok.is_empty() {
                &resp.spectator_token
            } else {
                tok
            };
            match bearer(tok) {
                Ok(v) => auth.push(v),
                Err(e) => {
                    self.stats.error("CreateGame", "BadToken".into(), &e);
                    return None;
                }
            }
        }
        let n = auth.len();
        let mut run = Run {
            id: resp.game_id,
            auth,
            seq: 0,
            seating: (0..n as u8).collect(),
            cards_left: vec![u32::from(self.shared.rules.hand_size); n],
            turn: 0,
            finished: false,
            scores: Vec::new(),
            plays: 0,
            top: None,
            hands: vec![None; n],
            first_bot,
            spectator: bearer(&resp.spectator_token).ok(),
            deals_seen: 0,
        };
        if first_bot == 0 {
            self.await_bots(&mut run).await?;
        } else {
            self.sync(&mut run, 0).await?;
        }
        Some(run)
    }

    /// GetState with `auth`, taking the seating and the cards left of every seat from it.
    async fn read_seats(
        &mut self,
        run: &mut Run,
        auth: Option<&AsciiMetadataValue>,
    ) -> Option<pb::GetStateResponse> {
        let req = pb::GetStateRequest {
            game_id: run.id.clone(),
            ..Default::default()
        };
        let s = self
            .stats
            .timed(Rpc::State, self.client.get_state(with_auth(req, auth)))
            .await?;
        for seat in &s.seats {
            if let Some(p) = run.seating.get_mut(seat.seat as usize) {
                *p = seat.player as u8;
            }
            if let Some(c) = run.cards_left.get_mut(seat.seat as usize) {
                *c = seat.card_count;
            }
        }
        Some(s)
    }

    /// While server-side bot seats act: reads the state (as the spectator) until a seat of this
    /// client is to act or the match is over, and catches up with it.
    async fn await_bots(&mut self, run: &mut Run) -> Option<()> {
        loop {
            let spectator = run.spectator.clone();
            let s = self.read_seats(run, spectator.as_ref()).await?;
            run.seq = s.seq;
            let settled = s.scores.as_ref().map_or(0, |sc| sc.deals.len());
            if settled > run.deals_seen {
                self.stats.deals += (settled - run.deals_seen) as u64;
                run.deals_seen = settled;
            }
            if s.phase == pb::Phase::Finished as i32 {
                run.finished = true;
                run.scores = s.scores.map(|sc| sc.total).unwrap_or_default();
                return Some(());
            }
            let turn = s.turn_seat.unwrap_or(0) as u8;
            run.turn = turn;
            let player = run.seating.get(turn as usize).copied()?;
            if player < run.first_bot {
                return Some(());
            }
            if self.out_of_time() {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// GetState as `player`: the seating, cards left, the seat to act, and the player's hand.
    async fn sync(&mut self, run: &mut Run, player: u8) -> Option<()> {
        let auth = run.auth.get(player as usize).cloned();
        let s = self.read_seats(run, auth.as_ref()).await?;
        if run.seq != s.seq || run.turn != s.turn_seat.unwrap_or(0) as u8 {
            if run.seq != 0 {
                self.stats.desyncs += 1;
                self.stats.error(
                    "bot",
                    "Desync".into(),
                    "the tracked turn or seq differs from GetState",
                );
            }
            run.seq = s.seq;
            run.turn = s.turn_seat.unwrap_or(0) as u8;
        }
        if let Some(h) = run.hands.get_mut(player as usize) {
            *h = CardSet::from_ids(&s.hand).ok();
        }
        Some(())
    }

    /// The `--policy` bot's choice among every legal play of `GetHints` (in one page).
    async fn server_choice(&mut self, run: &Run, player: u8) -> Option<Choice> {
        let a = &self.shared.args;
        let (policy, pass_p) = (a.policy, a.pass_probability);
        // Every legal play in one page, as the policies choose among all of them.
        let req = pb::GetHintsRequest {
            game_id: run.id.clone(),
            limit: 500,
            suggest: policy == Policy::Suggest,
            ..Default::default()
        };
        let auth = run.auth.get(player as usize);
        let h = self
            .stats
            .timed(Rpc::Hints, self.client.get_hints(with_auth(req, auth)))
            .await?;
        if !h.your_turn {
            self.stats.desyncs += 1;
            self.stats.error(
                "bot",
                "Desync".into(),
                "GetHints says it is not this seat's turn",
            );
            return None;
        }
        let pass = match (&h.suggested, policy) {
            (Some(s), Policy::Suggest) => s.pass,
            _ => {
                h.can_pass
                    && (h.plays.is_empty()
                        || (policy == Policy::Random && self.rng.random_bool(pass_p)))
            }
        };
        if pass {
            Some((None, None))
        } else {
            let suggested = h.suggested.as_ref().and_then(|s| s.play.as_ref());
            let p = match policy {
                Policy::Suggest => suggested?,
                Policy::Greedy => h.plays.first()?,
                Policy::Random => h
                    .plays
                    .get(self.rng.random_range(0..h.plays.len().max(1)))?,
            };
            let declared = pb::Declared {
                r#type: p.r#type,
                key: p.key.clone(),
            };
            Some((Some((p.cards.clone(), declared)), None))
        }
    }

    /// The `--policy` bot's choice among the legal plays enumerated from the tracked hand.
    async fn local_choice(&mut self, run: &mut Run, player: u8) -> Option<Choice> {
        let a = &self.shared.args;
        let (policy, pass_p) = (a.policy, a.pass_probability);
        if run.hands.get(player as usize).copied().flatten().is_none() {
            self.sync(run, player).await?;
        }
        let hand = run.hands.get(player as usize).copied().flatten()?;
        let plays =
            shuangkou::moves::legal_plays(hand.rank_counts(), run.top.as_ref(), &self.shared.rules);
        let can_pass = run.top.is_some();
        let pass = can_pass
            && (plays.is_empty() || (policy == Policy::Random && self.rng.random_bool(pass_p)));
        if pass {
            Some((None, None))
        } else {
            let i = match policy {
                Policy::Greedy | Policy::Suggest => 0,
                Policy::Random => self.rng.random_range(0..plays.len().max(1)),
            };
            let p = plays.get(i)?;
            let cards = hand.take(p.cards)?;
            Some((Some((cards.ids(), declared_of(&p.hand))), Some(p.hand)))
        }
    }

    /// Chooses and submits the action of the seat to act. `None`: the game failed (recorded).
    async fn turn(&mut self, run: &mut Run) -> Option<()> {
        let seat = run.turn;
        let player = *run.seating.get(seat as usize)?;
        if player >= run.first_bot {
            return self.await_bots(run).await;
        }
        let (choice, chosen) = match self.shared.args.hints {
            Hints::Server => self.server_choice(run, player).await?,
            Hints::Local => self.local_choice(run, player).await?,
        };
        let request_id = if self.shared.args.no_request_ids {
            String::new()
        } else {
            self.requests += 1;
            format!("w{}-{}", self.index, self.requests)
        };
        let played: Option<CardSet> = choice.as_ref().and_then(|(c, _)| CardSet::from_ids(c).ok());
        let (cards, declared) = match choice {
            Some((cards, declared)) => (cards, Some(declared)),
            None => (Vec::new(), None),
        };
        let req = pb::SubmitPlayRequest {
            game_id: run.id.clone(),
            seat: self.shared.args.send_seat.then_some(u32::from(player)),
            pass: declared.is_none(),
            cards,
            declared,
            expected_seq: Some(run.seq),
            request_id,
        };
        let auth = run.auth.get(player as usize);
        let resp = self
            .stats
            .timed(Rpc::Submit, self.client.submit_play(with_auth(req, auth)))
            .await?;
        run.seq = resp.seq;
        run.plays += 1;
        if let (Some(c), Some(Some(h))) = (played, run.hands.get_mut(player as usize)) {
            *h = h.difference(c);
        }
        if let Err(e) = run.follow(&resp.events, player, chosen, &mut self.stats) {
            self.stats.error("bot", "Events".into(), &e);
            return None;
        }
        Some(())
    }

    async fn finish(&mut self, run: Run) {
        // One page of the most actions: a load game is far shorter (verify refuses a partial
        // replay).
        let req = pb::GetReplayRequest {
            game_id: run.id.clone(),
            max_actions: 5_000,
            ..Default::default()
        };
        let r = self
            .stats
            .timed(
                Rpc::Replay,
                self.client.get_replay(with_auth(req, run.auth.first())),
            )
            .await;
        match r {
            Some(replay) => self.stats.games_done.push(Done::Shuangkou(Finished {
                replay,
                scores: run.scores,
                plays: run.plays,
                first_bot: run.first_bot,
            })),
            None => self.stats.games_failed += 1,
        }
    }

    /// Waits for this play's slot of the `--rate` schedule.
    async fn pace(&self) {
        if let Some(rate) = self.shared.args.rate {
            let n = self.shared.scheduled.fetch_add(1, Ordering::Relaxed);
            let at = self.shared.start + Duration::from_secs_f64(n as f64 / rate.max(1e-3));
            tokio::time::sleep_until(at.into()).await;
        }
    }

    /// Closed loop over this worker's games until the deadline or the deal budget.
    pub async fn play(mut self, slots: usize) -> Stats {
        let mut runs: Vec<Option<Run>> = Vec::with_capacity(slots);
        for _ in 0..slots {
            let r = self.next_game().await;
            runs.push(r);
        }
        loop {
            let mut any = false;
            for slot in runs.iter_mut() {
                if self.out_of_time() {
                    return self.stats;
                }
                let Some(mut run) = slot.take() else {
                    continue;
                };
                any = true;
                self.pace().await;
                match self.turn(&mut run).await {
                    Some(()) if !run.finished => *slot = Some(run),
                    Some(()) => {
                        self.finish(run).await;
                        *slot = self.next_game().await;
                    }
                    None => {
                        self.stats.games_failed += 1;
                        *slot = self.next_game().await;
                    }
                }
            }
            if !any {
                return self.stats;
            }
        }
    }

    /// A new game if the budget and the clock allow; a failed creation counts as a failed game.
    async fn next_game(&mut self) -> Option<Run> {
        if !self.take_game() {
            return None;
        }
        let r = self.create().await;
        if r.is_none() {
            self.stats.games_failed += 1;
        }
        r
    }

    /// `--populate`: creates games and makes a few plays in each; leaves them in progress.
    pub async fn populate(mut self) -> Stats {
        let plays = self.shared.args.plays_per_game;
        while self.take_game() {
            let Some(mut run) = self.create().await else {
                self.stats.games_failed += 1;
                continue;
            };
            for _ in 0..plays {
                if run.finished || self.turn(&mut run).await.is_none() {
                    break;
                }
            }
        }
        self.stats
    }
}
