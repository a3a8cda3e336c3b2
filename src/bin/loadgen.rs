//! `shuangkou-load`: a load generator that plays real games against a running `shuangkou serve`.
//!
//! It creates `--games` games and drives every seat of every game with a bot (legal plays from
//! `GetHints`, or enumerated locally with `--hints local`; a random or greedy policy, seeded, or
//! `--policy suggest`: the server's suggested play, `GetHints.suggested`, made by the serve's
//! `--auto-policy` bot from the seat's view). `--bot-seats K --bot-policy NAME` makes the last K
//! players of every game server-side bot seats (any bot of docs/BOTS.md) that the server plays;
//! the client then waits for them (GetState as the spectator) and drives the other seats,
//! playing complete matches in a closed loop (`--concurrency` requests in flight) or at a target
//! rate (`--rate` plays per second). It reports plays per second, the latency of every rpc
//! (p50/p90/p99/max from HDR histograms) and errors by gRPC code.
//!
//! In the same run it measures the transport baseline: `grpc.health.v1.Health/Check` at the same
//! concurrency over the same connections (half before the games, half after), and prints the
//! ratio SubmitPlay/baseline.
//!
//! It verifies what it gets: every game it completes is fetched with `GetReplay` and re-executed
//! with the engine (`Game::replay` with the embedded variant's default hooks), checking every
//! action's state hash, the final totals against the replay's and against the match result the
//! bot received, and that every acknowledged play is in the log. The server must run with
//! `--no-turn-timers` (deadlines are part of the state) and the embedded variants.
//!
//! Exits non-zero on any rpc error, bot desync or replay mismatch — never on timing.
//!
//! `--game shengji` plays 升級 over `shengji.v1` the same way (the client's rule bot for every
//! seat, or server bot seats with `--bot-seats`), verifying every match's replay: see
//! `loadgen/shengji.rs`.
//!
//! `--populate N` instead creates N games, makes `--plays-per-game` plays in each and exits,
//! leaving them in progress (memory-at-scale measurements).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tonic::Request;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Channel, Endpoint};

use shuangkou::cards::CardSet;
use shuangkou::game::Phase;
use shuangkou::hand::Hand;
use shuangkou::rules::Rules;
use shuangkou::seat::Player;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::pb::game_event::Event as Ev;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use shuangkou::service::replay::{self, Replay};
use shuangkou::service::wire;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

#[path = "loadgen/shengji.rs"]
mod shengji;

/// The game family played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Family {
    /// Shuangkou over `shuangkou.v1`.
    Shuangkou,
    /// 升級 over `shengji.v1` (the client's rule bot; `--bot-seats` up to 3; `--variant`,
    /// `--policy`, `--hints` do not apply).
    Shengji,
}

/// How the bot chooses among the legal actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Policy {
    /// Pass with `--pass-probability` when passing is legal, else a uniform legal play.
    Random,
    /// The weakest legal play; pass only when nothing beats the trick.
    Greedy,
    /// The server's suggested play (`GetHints` with `suggest`: the game's 托管 bot, `--auto-policy`
    /// here or the serve's, deciding from the seat's view); needs `--hints server`.
    Suggest,
}

/// Where the legal plays come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Hints {
    /// `GetHints` before every play (two rpcs per turn).
    Server,
    /// Enumerated by the client from the hand it tracks (one rpc per turn: SubmitPlay only).
    Local,
}

/// Load generator for `shuangkou serve`: plays real, verified games.
#[derive(Debug, Parser)]
#[command(name = "shuangkou-load", version, about)]
struct Args {
    /// Server address (host:port).
    #[arg(long, default_value = "127.0.0.1:50051")]
    target: String,
    /// The game family.
    #[arg(long, value_enum, default_value = "shuangkou")]
    game: Family,
    /// Games in play at once.
    #[arg(long, default_value_t = 64)]
    games: usize,
    /// Requests in flight at once (worker tasks; each drives games/concurrency games).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Variant id (an embedded variant, so the replay can be verified).
    #[arg(long, default_value = "baibian")]
    variant: String,
    /// Seed of the bots' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Target plays (SubmitPlay) per second; default: closed loop, as fast as it goes.
    #[arg(long)]
    rate: Option<f64>,
    /// Run for this many seconds (games are replaced as they finish).
    #[arg(long, conflicts_with = "deals")]
    duration: Option<f64>,
    /// Play this many deals in all, then stop (every game completes and is verified).
    #[arg(long)]
    deals: Option<u64>,
    /// Deals per match.
    #[arg(long, default_value_t = 1)]
    deals_per_game: u32,
    /// Bot policy.
    #[arg(long, value_enum, default_value = "random")]
    policy: Policy,
    /// Where legal plays come from.
    #[arg(long, value_enum, default_value = "server")]
    hints: Hints,
    /// Bot seats per game played by the server (CreateGame `bots`): the last K players. With
    /// K = players the server plays whole games by itself. Needs `--hints server`.
    #[arg(long, default_value_t = 0)]
    bot_seats: u8,
    /// The bot of those seats: any bot name of docs/BOTS.md (`heuristic`, `search`, `search:N`,
    /// `laoshou`, …).
    #[arg(long, default_value = "heuristic")]
    bot_policy: String,
    /// Every game's 托管 bot (CreateGame `auto_policy`; empty = the variant's or the serve's),
    /// which `--policy suggest` plays the driven seats with: any bot name of docs/BOTS.md.
    #[arg(long, default_value = "")]
    auto_policy: String,
    /// Probability of passing when passing is legal (random policy).
    #[arg(long, default_value_t = 0.3)]
    pass_probability: f64,
    /// HTTP/2 connections to the server (requests are spread over them).
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Seconds of health-check baseline (half before the games, half after); 0 = none.
    /// Default: 10, or the duration if shorter.
    #[arg(long)]
    baseline_secs: Option<f64>,
    /// Send no request_id with SubmitPlay (by default every play carries one, as real clients do).
    #[arg(long)]
    no_request_ids: bool,
    /// Platform API key for CreateGame (when the server has keys).
    #[arg(long, env = "SHUANGKOU_LOAD_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Client runtime threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Memory mode: create this many games, make --plays-per-game plays in each, exit (the games
    /// stay in progress on the server).
    #[arg(long)]
    populate: Option<u64>,
    /// Plays per game in --populate mode.
    #[arg(long, default_value_t = 4)]
    plays_per_game: u32,
    /// PID of the server (on this machine): also report its CPU time per request, read from
    /// /proc — unlike throughput, it does not depend on what else the machine is running.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// CPU time (user + system) of a process so far, in microseconds, from `/proc/<pid>/stat`
/// (clock ticks of 10 ms, the Linux default).
fn cpu_us(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) * 10_000)
}

/// CPU of the server (if known) and of this process, in µs.
#[derive(Clone, Copy, Default)]
struct Cpu {
    server: u64,
    client: u64,
}

fn cpu_now(server_pid: Option<u32>) -> Cpu {
    Cpu {
        server: server_pid.and_then(|p| cpu_us(&p.to_string())).unwrap_or(0),
        client: cpu_us("self").unwrap_or(0),
    }
}

impl Cpu {
    fn since(self, start: Cpu) -> Cpu {
        Cpu {
            server: self.server.saturating_sub(start.server),
            client: self.client.saturating_sub(start.client),
        }
    }
    fn add(self, o: Cpu) -> Cpu {
        Cpu {
            server: self.server + o.server,
            client: self.client + o.client,
        }
    }
}

// ---- rpc statistics ----

/// The rpcs timed, in the report's order; the transport baseline last. In `--game shengji`
/// SubmitPlay is `SubmitAction` with a card to play and SubmitAction every other action (deal,
/// declare, bury, leave).
const RPCS: [&str; 7] = [
    "CreateGame",
    "GetState",
    "GetHints",
    "SubmitPlay",
    "SubmitAction",
    "GetReplay",
    "Health/Check",
];

/// An index into [`RPCS`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rpc {
    Create,
    State,
    Hints,
    Submit,
    Act,
    Replay,
    Check,
}

const CHECK: usize = Rpc::Check as usize;

/// One worker's counters (merged at the end; no lock on the hot path).
struct Stats {
    latency: Vec<Histogram<u64>>,
    ok: [u64; RPCS.len()],
    errors: BTreeMap<(&'static str, String), u64>,
    /// First few error messages, for the report.
    samples: Vec<String>,
    deals: u64,
    desyncs: u64,
    games_created: u64,
    games_done: Vec<Done>,
    games_failed: u64,
}

impl Stats {
    fn new() -> Result<Stats, String> {
        let mut latency = Vec::new();
        for _ in RPCS {
            // Microseconds, 1 µs .. 100 s, 3 significant digits.
            latency.push(Histogram::new_with_bounds(1, 100_000_000, 3).map_err(|e| e.to_string())?);
        }
        Ok(Stats {
            latency,
            ok: [0; RPCS.len()],
            errors: BTreeMap::new(),
            samples: Vec::new(),
            deals: 0,
            desyncs: 0,
            games_created: 0,
            games_done: Vec::new(),
            games_failed: 0,
        })
    }

    /// Runs one rpc, recording its latency and outcome; its message when it succeeded.
    async fn timed<T>(
        &mut self,
        rpc: Rpc,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Option<T> {
        let t = Instant::now();
        let r = call.await;
        self.record(rpc, t, &r);
        r.ok().map(tonic::Response::into_inner)
    }

    /// CreateGame, timed and counted.
    async fn create<T>(
        &mut self,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Option<T> {
        let created = self.timed(Rpc::Create, call).await?;
        self.games_created += 1;
        Some(created)
    }

    fn record<T>(&mut self, rpc: Rpc, start: Instant, r: &Result<T, tonic::Status>) {
        let us = start.elapsed().as_micros().clamp(1, u128::from(u64::MAX)) as u64;
        let i = rpc as usize;
        self.latency[i].saturating_record(us);
        match r {
            Ok(_) => self.ok[i] += 1,
            Err(s) => self.error(RPCS[i], format!("{:?}", s.code()), s.message()),
        }
    }

    fn error(&mut self, rpc: &'static str, code: String, message: &str) {
        if self.samples.len() < 5 {
            self.samples.push(format!("{rpc} {code}: {message}"));
        }
        *self.errors.entry((rpc, code)).or_default() += 1;
    }

    fn merge(&mut self, other: Stats) {
        for (a, b) in self.latency.iter_mut().zip(&other.latency) {
            let _ = a.add(b);
        }
        for (a, b) in self.ok.iter_mut().zip(other.ok) {
            *a += b;
        }
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        for s in other.samples {
            if self.samples.len() < 5 {
                self.samples.push(s);
            }
        }
        self.deals += other.deals;
        self.desyncs += other.desyncs;
        self.games_created += other.games_created;
        self.games_done.extend(other.games_done);
        self.games_failed += other.games_failed;
    }

    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// A completed game of either family, for verification after the run.
enum Done {
    Shuangkou(Finished),
    Shengji(shengji::Finished),
}

/// A completed Shuangkou game.
struct Finished {
    replay: pb::GetReplayResponse,
    /// The match result the bot received with its last play.
    scores: Vec<f64>,
    /// SubmitPlays acknowledged in this game.
    plays: u64,
    /// Players that are server-side bot seats (from this index on).
    first_bot: u8,
}

// ---- one game, as the bots see it ----

struct Run {
    id: String,
    /// `authorization` values, by player.
    auth: Vec<AsciiMetadataValue>,
    seq: u64,
    /// Player at each seat.
    seating: Vec<u8>,
    /// Cards left at each seat.
    cards_left: Vec<u32>,
    /// The seat to act.
    turn: u8,
    finished: bool,
    scores: Vec<f64>,
    plays: u64,
    /// `--hints local`: the top play of the trick and the hands (by player) as far as known.
    top: Option<Hand>,
    hands: Vec<Option<CardSet>>,
    /// Players from this index on are server-side bot seats.
    first_bot: u8,
    /// The spectator's `authorization` (reads while bot seats act).
    spectator: Option<AsciiMetadataValue>,
    /// Deals of the match seen settled so far.
    deals_seen: usize,
}

impl Run {
    fn next_active(&self, seat: u8) -> u8 {
        let n = self.seating.len() as u8;
        let mut s = seat;
        for _ in 0..n {
            s = (s + 1) % n;
            if self.cards_left.get(s as usize).is_some_and(|&c| c > 0) {
                return s;
            }
        }
        seat
    }

    /// Follows the events of an accepted action (as its actor sees them): the seat to act next,
    /// cards left, deals ended, the match result.
    fn follow(
        &mut self,
        events: &[pb::GameEvent],
        actor: u8,
        chosen: Option<Hand>,
        stats: &mut Stats,
    ) -> Result<(), String> {
        for e in events {
            match &e.event {
                Some(Ev::DealStarted(d)) => {
                    self.seating = d.players.iter().map(|&p| p as u8).collect();
                    let size = d.hand.len() as u32;
                    self.cards_left = vec![size; self.seating.len()];
                    self.turn = d.leader as u8;
                    self.top = None;
                    self.hands = vec![None; self.seating.len()];
                    if let Some(h) = self.hands.get_mut(actor as usize) {
                        *h = CardSet::from_ids(&d.hand).ok();
                    }
                }
                Some(Ev::Played(p)) => {
                    if let Some(c) = self.cards_left.get_mut(p.seat as usize) {
                        *c = p.cards_left;
                    }
                    self.turn = self.next_active(p.seat as u8);
                    self.top = chosen;
                }
                Some(Ev::Passed(p)) => self.turn = self.next_active(p.seat as u8),
                Some(Ev::TrickWon(t)) => {
                    self.turn = t.leader as u8;
                    self.top = None;
                }
                // The load generator never opens a stream: its seats are never disconnected.
                Some(
                    Ev::PlayerOut(_)
                    | Ev::PlayerLeft(_)
                    | Ev::SeatDisconnected(_)
                    | Ev::SeatReconnected(_)
                    | Ev::AutoPlayChanged(_),
                ) => {}
                Some(Ev::DealEnded(_)) => {
                    stats.deals += 1;
                    self.deals_seen += 1;
                }
                Some(Ev::MatchEnded(m)) => {
                    self.finished = true;
                    self.scores = m.scores.clone();
                }
                Some(Ev::Escaped(x)) => {
                    return Err(format!("unexpected escape of seat {}", x.seat));
                }
                // The load generator's games are never aborted (no admin acts in a run).
                Some(Ev::GameAborted(_)) => return Err("the game was aborted".into()),
                None => return Err("an event without a body".into()),
            }
        }
        Ok(())
    }
}

// ---- the worker ----

struct Shared {
    args: Args,
    rules: Rules,
    /// Games still to create (`--deals` and `--populate`); u64::MAX = unbounded.
    games_left: AtomicU64,
    stop: AtomicBool,
    deadline: Option<Instant>,
    /// Rate schedule: plays scheduled so far.
    scheduled: AtomicU64,
    start: Instant,
}

struct Worker {
    index: usize,
    client: GameEngineClient<Channel>,
    shared: Arc<Shared>,
    rng: ChaCha8Rng,
    stats: Stats,
    requests: u64,
}

fn with_auth<T>(msg: T, auth: Option<&AsciiMetadataValue>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(a) = auth {
        r.metadata_mut().insert("authorization", a.clone());
    }
    r
}

fn bearer(token: &str) -> Result<AsciiMetadataValue, String> {
    format!("Bearer {token}")
        .parse()
        .map_err(|_| "a token is not valid metadata".to_string())
}

fn declared_of(hand: &Hand) -> pb::Declared {
    pb::Declared {
        r#type: wire::hand_type(hand.kind) as i32,
        key: hand
            .key()
            .map(|k| k.symbol().to_string())
            .unwrap_or_default(),
    }
}

impl Shared {
    /// Takes one game to play from the run's budget; false when the run is over.
    fn take_game(&self) -> bool {
        if self.out_of_time() {
            return false;
        }
        self.games_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| match n {
                u64::MAX => Some(u64::MAX),
                0 => None,
                n => Some(n - 1),
            })
            .is_ok()
    }

    fn out_of_time(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
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

    /// Chooses and submits the action of the seat to act. `None`: the game failed (recorded).
    async fn turn(&mut self, run: &mut Run) -> Option<()> {
        let seat = run.turn;
        let player = *run.seating.get(seat as usize)?;
        if player >= run.first_bot {
            return self.await_bots(run).await;
        }
        let a = &self.shared.args;
        let (policy, hints, pass_p, no_ids) =
            (a.policy, a.hints, a.pass_probability, a.no_request_ids);
        // The choice: (cards, declared) or None to pass; the chosen interpretation (local).
        let (choice, chosen): (Option<(Vec<u32>, pb::Declared)>, Option<Hand>) = match hints {
            Hints::Server => {
                // Every legal play in one page, as the policies choose among all of them.
                let req = pb::GetHintsRequest {
                    game_id: run.id.clone(),
                    limit: 500,
                    suggest: policy == Policy::Suggest,
                    ..Default::default()
                };
                let h = self
                    .stats
                    .timed(
                        Rpc::Hints,
                        self.client
                            .get_hints(with_auth(req, run.auth.get(player as usize))),
                    )
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
                    (None, None)
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
                    (Some((p.cards.clone(), declared)), None)
                }
            }
            Hints::Local => {
                if run.hands.get(player as usize).copied().flatten().is_none() {
                    self.sync(run, player).await?;
                }
                let hand = run.hands.get(player as usize).copied().flatten()?;
                let plays = shuangkou::moves::legal_plays(
                    hand.rank_counts(),
                    run.top.as_ref(),
                    &self.shared.rules,
                );
                let can_pass = run.top.is_some();
                let pass = can_pass
                    && (plays.is_empty()
                        || (policy == Policy::Random && self.rng.random_bool(pass_p)));
                if pass {
                    (None, None)
                } else {
                    let i = match policy {
                        Policy::Greedy | Policy::Suggest => 0,
                        Policy::Random => self.rng.random_range(0..plays.len().max(1)),
                    };
                    let p = plays.get(i)?;
                    let cards = hand.take(p.cards)?;
                    (Some((cards.ids(), declared_of(&p.hand))), Some(p.hand))
                }
            }
        };
        let request_id = if no_ids {
            String::new()
        } else {
            self.requests += 1;
            format!("w{}-{}", self.index, self.requests)
        };
        let played: Option<CardSet> = choice.as_ref().and_then(|(c, _)| CardSet::from_ids(c).ok());
        let req = match choice {
            Some((cards, declared)) => pb::SubmitPlayRequest {
                game_id: run.id.clone(),
                seat: None,
                cards,
                pass: false,
                declared: Some(declared),
                expected_seq: Some(run.seq),
                request_id,
            },
            None => pb::SubmitPlayRequest {
                game_id: run.id.clone(),
                seat: None,
                pass: true,
                expected_seq: Some(run.seq),
                request_id,
                ..Default::default()
            },
        };
        let resp = self
            .stats
            .timed(
                Rpc::Submit,
                self.client
                    .submit_play(with_auth(req, run.auth.get(player as usize))),
            )
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
    async fn play(mut self, slots: usize) -> Stats {
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
    async fn populate(mut self) -> Stats {
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

// ---- health baseline ----

async fn baseline(
    channels: &[Channel],
    concurrency: usize,
    secs: f64,
) -> Result<(Stats, f64), String> {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for i in 0..concurrency {
        let mut client = HealthClient::new(channels[i % channels.len()].clone());
        let mut stats = Stats::new()?;
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let t = Instant::now();
                let r = client
                    .check(HealthCheckRequest {
                        service: String::new(),
                    })
                    .await;
                stats.record(Rpc::Check, t, &r);
            }
            stats
        }));
    }
    let mut total = Stats::new()?;
    for t in tasks {
        total.merge(t.await.map_err(|e| e.to_string())?);
    }
    Ok((total, start.elapsed().as_secs_f64()))
}

// ---- verification ----

/// Verifies a finished game with the library's replay verification (`Replay::try_from` the
/// response, then `replay::verify`: the core re-executes the log with the embedded variant,
/// checking every state hash and the final totals), then checks it against what the bots saw.
fn verify(variant: &str, f: &Finished) -> Result<(), String> {
    let replay = Replay::try_from(&f.replay)?;
    if replay.config.variant != variant {
        return Err(format!(
            "the game's variant {} is not the embedded {variant}",
            replay.config.variant
        ));
    }
    let game = replay::verify(&replay)?.game;
    if game.phase() != Phase::Finished {
        return Err("the replayed match is not over".into());
    }
    let totals: Vec<f64> = game.totals().iter().map(|c| wire::points(*c)).collect();
    if totals != f.scores {
        return Err(format!(
            "replayed totals {totals:?} != the match result received {:?}",
            f.scores
        ));
    }
    // The client's own plays: every entry but the server-side bot seats'.
    let own = replay
        .entries
        .iter()
        .filter(|e| e.player < Player::new(f.first_bot))
        .count() as u64;
    if f.plays != own {
        return Err(format!(
            "{} plays acknowledged but {own} in the log",
            f.plays
        ));
    }
    Ok(())
}

// ---- report ----

fn quantiles(h: &Histogram<u64>) -> serde_json::Value {
    serde_json::json!({
        "count": h.len(),
        "p50_us": h.value_at_quantile(0.50),
        "p90_us": h.value_at_quantile(0.90),
        "p99_us": h.value_at_quantile(0.99),
        "max_us": h.max(),
        "mean_us": (h.mean() * 10.0).round() / 10.0,
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("shuangkou-load: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("shuangkou-load: {e}");
            ExitCode::from(2)
        }
    }
}

async fn connect(target: &str, n: usize) -> Result<Vec<Channel>, String> {
    let uri = if target.contains("://") {
        target.to_string()
    } else {
        format!("http://{target}")
    };
    let mut channels = Vec::new();
    for _ in 0..n.max(1) {
        let ch = Endpoint::from_shared(uri.clone())
            .map_err(|e| format!("bad target {target}: {e}"))?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {target}: {e}"))?;
        channels.push(ch);
    }
    Ok(channels)
}

/// The whole run; `Ok(false)` when something failed (errors, desyncs, mismatches).
async fn run(args: Args) -> Result<bool, String> {
    let rules = shuangkou::variants::builtin_rules(&args.variant).map_err(|e| e.to_string())?;
    if args.game == Family::Shengji && (args.bot_seats > 3 || args.populate.is_some()) {
        return Err("--game shengji takes --bot-seats 0..=3 and no --populate".into());
    }
    if args.game == Family::Shuangkou && args.bot_seats > rules.players {
        return Err(format!(
            "--bot-seats {} but {} has {} players",
            args.bot_seats, args.variant, rules.players
        ));
    }
    if args.hints == Hints::Local && (args.bot_seats > 0 || args.policy == Policy::Suggest) {
        return Err("--bot-seats and --policy suggest need --hints server".into());
    }
    shuangkou::bot::styles::spec(&args.bot_policy).map_err(|e| format!("--bot-policy: {e}"))?;
    if !args.auto_policy.is_empty() {
        shuangkou::bot::styles::spec(&args.auto_policy)
            .map_err(|e| format!("--auto-policy: {e}"))?;
    }
    let channels = connect(&args.target, args.connections).await?;
    let concurrency = args.concurrency.max(1);
    let populate = args.populate;
    let games_left = match (populate, args.deals) {
        (Some(n), _) => n,
        (None, Some(d)) => d.div_ceil(u64::from(args.deals_per_game.max(1))),
        (None, None) => u64::MAX,
    };
    let duration = match (populate, args.duration, args.deals) {
        (None, None, None) => Some(10.0),
        (_, d, _) => d,
    };
    let baseline_secs = match populate {
        Some(_) => 0.0,
        None => args
            .baseline_secs
            .unwrap_or_else(|| duration.unwrap_or(10.0).min(10.0)),
    };

    // Baseline, first half.
    let server_pid = args.server_pid;
    let mut check = Stats::new()?;
    let mut check_secs = 0.0;
    let mut check_cpu = Cpu::default();
    if baseline_secs > 0.0 {
        let c0 = cpu_now(server_pid);
        let (s, secs) = baseline(&channels, concurrency, baseline_secs / 2.0).await?;
        check_cpu = check_cpu.add(cpu_now(server_pid).since(c0));
        check.merge(s);
        check_secs += secs;
    }
    let check_first = check.ok[CHECK] as f64 / check_secs.max(1e-9);

    // The games.
    let games_cpu0 = cpu_now(server_pid);
    let start = Instant::now();
    let shared = Arc::new(Shared {
        rules,
        games_left: AtomicU64::new(games_left),
        stop: AtomicBool::new(false),
        deadline: duration.map(|d| start + Duration::from_secs_f64(d)),
        scheduled: AtomicU64::new(0),
        start,
        args,
    });
    let args = &shared.args;
    let games = args.games.max(1);
    let workers = concurrency.min(games);
    let mut tasks = Vec::new();
    for i in 0..workers {
        let slots = games / workers + usize::from(i < games % workers);
        let channel = channels[i % channels.len()].clone();
        let seed = args
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(i as u64);
        if args.game == Family::Shengji {
            let w = shengji::Worker {
                client: ShengjiEngineClient::new(channel).max_decoding_message_size(16 << 20),
                shared: Arc::clone(&shared),
                rng: ChaCha8Rng::seed_from_u64(seed),
                stats: Stats::new()?,
            };
            tasks.push(tokio::spawn(w.play()));
            continue;
        }
        let w = Worker {
            index: i,
            client: GameEngineClient::new(channel).max_decoding_message_size(16 << 20),
            shared: Arc::clone(&shared),
            rng: ChaCha8Rng::seed_from_u64(seed),
            stats: Stats::new()?,
            requests: 0,
        };
        tasks.push(tokio::spawn(async move {
            match populate {
                Some(_) => w.populate().await,
                None => w.play(slots).await,
            }
        }));
    }
    let mut total = Stats::new()?;
    for t in tasks {
        total.merge(t.await.map_err(|e| e.to_string())?);
    }
    let secs = start.elapsed().as_secs_f64();
    let games_cpu = cpu_now(server_pid).since(games_cpu0);

    // Baseline, second half.
    let mut check_second = 0.0;
    if baseline_secs > 0.0 {
        let c0 = cpu_now(server_pid);
        let (s, secs2) = baseline(&channels, concurrency, baseline_secs / 2.0).await?;
        check_cpu = check_cpu.add(cpu_now(server_pid).since(c0));
        check_second = s.ok[CHECK] as f64 / secs2.max(1e-9);
        check.merge(s);
        check_secs += secs2;
    }
    let check_rate = check.ok[CHECK] as f64 / check_secs.max(1e-9);

    // Verification (after the timed part, so it does not compete with the load).
    let verify_start = Instant::now();
    let mut mismatches = Vec::new();
    for done in &total.games_done {
        let checked = match done {
            Done::Shuangkou(f) => verify(&args.variant, f),
            Done::Shengji(f) => shengji::verify(f),
        };
        if let Err(e) = checked {
            mismatches.push(e);
        }
    }
    let verify_secs = verify_start.elapsed().as_secs_f64();

    let plays = total.ok[Rpc::Submit as usize];
    let plays_rate = plays as f64 / secs.max(1e-9);
    let game_rpcs: u64 = total.ok[..CHECK].iter().sum();
    let ratio = if check_rate > 0.0 {
        plays_rate / check_rate
    } else {
        0.0
    };
    let rpc_ratio = if check_rate > 0.0 {
        game_rpcs as f64 / secs.max(1e-9) / check_rate
    } else {
        0.0
    };
    let errors = total.error_count() + check.error_count();
    let ok = errors == 0 && mismatches.is_empty() && total.desyncs == 0 && total.games_failed == 0;
    // CPU per request: per Health/Check in the baseline, per SubmitPlay in the game phase (which
    // carries the phase's other rpcs too: creates, hints, states, replays).
    let per = |us: u64, n: u64| if n == 0 { 0.0 } else { us as f64 / n as f64 };
    let checks = check.ok[CHECK];
    let cpu_check = (per(check_cpu.server, checks), per(check_cpu.client, checks));
    let cpu_play = (per(games_cpu.server, plays), per(games_cpu.client, plays));
    let cpu_ratio = if cpu_play.0 + cpu_play.1 > 0.0 {
        (cpu_check.0 + cpu_check.1) / (cpu_play.0 + cpu_play.1)
    } else {
        0.0
    };

    if args.json {
        let mut rpcs = serde_json::Map::new();
        for (i, name) in RPCS.iter().enumerate() {
            let h = if i == CHECK {
                &check.latency[i]
            } else {
                &total.latency[i]
            };
            if !h.is_empty() {
                rpcs.insert(name.to_string(), quantiles(h));
            }
        }
        let errs: Vec<_> = total
            .errors
            .iter()
            .chain(check.errors.iter())
            .map(|((rpc, code), n)| serde_json::json!({"rpc": rpc, "code": code, "count": n}))
            .collect();
        let out = serde_json::json!({
            "target": args.target,
            "game": format!("{:?}", args.game).to_lowercase(),
            "variant": args.variant,
            "policy": format!("{:?}", args.policy).to_lowercase(),
            "hints": format!("{:?}", args.hints).to_lowercase(),
            "bot_seats": args.bot_seats,
            "bot_policy": args.bot_policy,
            "auto_policy": args.auto_policy,
            "games": games,
            "concurrency": concurrency,
            "connections": args.connections,
            "rate": args.rate,
            "seconds": (secs * 100.0).round() / 100.0,
            "games_created": total.games_created,
            "games_completed": total.games_done.len(),
            "games_failed": total.games_failed,
            "deals": total.deals,
            "plays": plays,
            "plays_per_second": plays_rate.round(),
            "baseline_checks_per_second": check_rate.round(),
            "baseline_before": check_first.round(),
            "baseline_after": check_second.round(),
            "ratio_submit_to_baseline": (ratio * 1000.0).round() / 1000.0,
            "ratio_game_rpcs_to_baseline": (rpc_ratio * 1000.0).round() / 1000.0,
            "rpcs": rpcs,
            "errors": errs,
            "desyncs": total.desyncs,
            "verified": total.games_done.len() - mismatches.len(),
            "mismatches": mismatches,
            "verify_seconds": (verify_secs * 100.0).round() / 100.0,
            "cpu_us_per_check": {"server": (cpu_check.0 * 10.0).round() / 10.0, "client": (cpu_check.1 * 10.0).round() / 10.0},
            "cpu_us_per_play": {"server": (cpu_play.0 * 10.0).round() / 10.0, "client": (cpu_play.1 * 10.0).round() / 10.0},
            "cpu_ratio_check_to_play": (cpu_ratio * 1000.0).round() / 1000.0,
            "server_pid_given": server_pid.is_some(),
            "ok": ok,
        });
        println!("{out}");
    } else {
        println!(
            "shuangkou-load → {}: game {:?}, variant {}, policy {:?}, hints {:?}, {} games in play, concurrency {}, {} connections{}",
            args.target,
            args.game,
            args.variant,
            args.policy,
            args.hints,
            games,
            concurrency,
            args.connections,
            args.rate
                .map(|r| format!(", target rate {r}/s"))
                .unwrap_or_default()
        );
        if baseline_secs > 0.0 {
            println!(
                "baseline: {:.0} Health/Check per second ({:.0} before, {:.0} after the games)",
                check_rate, check_first, check_second
            );
        }
        println!(
            "games: {} created, {} completed, {} failed; {} deals, {} plays in {:.2} s = {:.0} plays/s",
            total.games_created,
            total.games_done.len(),
            total.games_failed,
            total.deals,
            plays,
            secs,
            plays_rate
        );
        if baseline_secs > 0.0 {
            println!(
                "ratio SubmitPlay/baseline = {:.3}   (all game rpcs/baseline = {:.3})",
                ratio, rpc_ratio
            );
        }
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9}   (µs)",
            "rpc", "count", "p50", "p90", "p99", "max"
        );
        for (i, name) in RPCS.iter().enumerate() {
            let h = if i == CHECK {
                &check.latency[i]
            } else {
                &total.latency[i]
            };
            if h.is_empty() {
                continue;
            }
            println!(
                "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9}",
                name,
                h.len(),
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.9),
                h.value_at_quantile(0.99),
                h.max()
            );
        }
        if errors == 0 {
            println!("errors: none");
        } else {
            for ((rpc, code), n) in total.errors.iter().chain(check.errors.iter()) {
                println!("errors: {rpc} {code} × {n}");
            }
            for s in &total.samples {
                println!("  e.g. {s}");
            }
        }
        if total.desyncs > 0 {
            println!("bot desyncs: {}", total.desyncs);
        }
        println!(
            "verified: {} of {} completed games replayed with matching state hashes and scores ({:.2} s)",
            total.games_done.len() - mismatches.len(),
            total.games_done.len(),
            verify_secs
        );
        for m in mismatches.iter().take(5) {
            println!("  MISMATCH {m}");
        }
        if server_pid.is_some() && baseline_secs > 0.0 {
            println!(
                "cpu per request (µs, server + client): Health/Check {:.1} + {:.1}, SubmitPlay {:.1} + {:.1}; ratio {:.3}",
                cpu_check.0, cpu_check.1, cpu_play.0, cpu_play.1, cpu_ratio
            );
        }
        println!("{}", if ok { "OK" } else { "FAILED" });
    }
    Ok(ok)
}
