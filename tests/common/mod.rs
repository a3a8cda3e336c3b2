//! Shared helpers of the service integration tests (`tests/service_*.rs`): an in-process server
//! on `127.0.0.1:0`, clients, authenticated requests, seeds, and a client that plays a whole
//! match with nothing but its own seat token (`WatchGame`, `GetState`, `GetHints`,
//! `SubmitPlay`), logging every message it receives.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::config::ServeConfig;
use shuangkou::service::app::App;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;
use shuangkou::service::status::reason_of;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

pub mod flags;
pub mod requests;
pub mod shengji;
pub mod store_fixtures;
pub mod temp;
pub mod trailers;
pub use requests::*;

/// A client of the game service.
pub type Client = GameEngineClient<Channel>;

/// Every embedded variant.
pub const VARIANTS: [&str; 6] = ["classic", "jj", "baibian", "huopin", "qianbian", "erren"];

pub const ADMIN_KEY: &str = "admin-key-0123456789";
pub const ACME_KEY: &str = "acme-key-0123456789";
pub const OTHER_KEY: &str = "other-key-0123456789";

/// The seed of a test: `SHUANGKOU_TEST_SEED` when set (to reproduce a failure), else `default`.
/// Printed, so a failing test shows it.
pub fn test_seed(default: u64) -> u64 {
    let seed = std::env::var("SHUANGKOU_TEST_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default);
    eprintln!("test seed = {seed} (rerun with SHUANGKOU_TEST_SEED={seed})");
    seed
}

/// A 256-bit game seed (64 hex digits) derived from a test seed.
pub fn game_seed(seed: u64) -> String {
    format!("{:064x}", u128::from(seed) * 0x9e37_79b9_7f4a_7c15 + 1)
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    serve: ServeConfig,
}

/// The test configuration: memory store, no metrics, no turn timers, no keys (open), no drain
/// delay. `tweak` changes it.
pub fn config(tweak: impl FnOnce(&mut ServeConfig)) -> ServeConfig {
    let mut c = Cli::try_parse_from(["shuangkou-test"])
        .expect("default serve configuration")
        .serve;
    c.listen = "127.0.0.1:0".parse().expect("address");
    c.no_metrics = true;
    c.no_turn_timers = true;
    c.store = "memory".into();
    c.variants_dir = None;
    c.api_keys = Vec::new();
    c.admin_key = None;
    c.drain_delay_seconds = 0;
    c.drain_seconds = 5;
    tweak(&mut c);
    c
}

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    pub app: Option<Arc<App>>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), String>>>,
}

impl TestServer {
    /// Starts a server with the test configuration changed by `tweak`.
    pub async fn start(tweak: impl FnOnce(&mut ServeConfig)) -> TestServer {
        TestServer::try_start(config(tweak))
            .await
            .expect("server starts")
    }

    pub async fn try_start(mut config: ServeConfig) -> Result<TestServer, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // Replicas on a shared store forward to the port actually bound.
        config
            .advertise_addr
            .get_or_insert_with(|| addr.to_string());
        let app = App::open(config).await?;
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(shuangkou::service::server::serve(
            Arc::clone(&app),
            listener,
            async move {
                let _ = rx.await;
            },
        ));
        Ok(TestServer {
            addr,
            app: Some(app),
            shutdown: Some(tx),
            handle: Some(handle),
        })
    }

    /// Starts a server on a store that a previous server of the test may still hold for a moment
    /// (its lock is let go when its last task ends): retried every 100 ms for up to 60 s.
    pub async fn restart(config: impl Fn() -> ServeConfig) -> TestServer {
        poll_until(
            Duration::from_secs(60),
            Duration::from_millis(100),
            "the server to start on the store the previous one held",
            async || TestServer::try_start(config()).await.ok(),
        )
        .await
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A client on a new channel (its own HTTP/2 connection).
    pub async fn client(&self) -> GameEngineClient<Channel> {
        GameEngineClient::new(self.channel().await)
    }

    pub async fn channel(&self) -> Channel {
        channel(self.addr).await
    }

    /// Begins the shutdown (as SIGTERM does).
    pub fn begin_shutdown(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    /// Waits for `serve` to return (after `begin_shutdown`).
    pub async fn stopped(&mut self) -> Result<(), String> {
        match self.handle.take() {
            Some(h) => tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .map_err(|_| "server did not stop within 30 s".to_string())?
                .map_err(|e| e.to_string())?,
            None => Ok(()),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.begin_shutdown();
    }
}

/// The configuration of the shared server: admin key and two platforms (`acme`, `other`).
pub fn keyed(c: &mut ServeConfig) {
    c.admin_key = Some(ADMIN_KEY.into());
    c.api_keys = vec![format!("acme={ACME_KEY}"), format!("other={OTHER_KEY}")];
}

/// The address of this test binary's shared server (keys as in [`keyed`], memory store, no
/// timers), started once on its own thread and runtime so every test of the binary can use it
/// (starting a server compiles and checks every variant: seconds in debug builds).
pub fn shared() -> SocketAddr {
    static SHARED: std::sync::OnceLock<SocketAddr> = std::sync::OnceLock::new();
    *SHARED.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let server = TestServer::try_start(config(keyed))
                    .await
                    .expect("shared server starts");
                tx.send(server.addr).expect("report the address");
                // Serve until the test process exits.
                std::future::pending::<()>().await;
                drop(server);
            });
        });
        rx.recv().expect("shared server address")
    })
}

/// A client of the shared server on a new channel.
pub async fn shared_client() -> GameEngineClient<Channel> {
    shared_addr_client().await.1
}

/// The shared server's address and a client of it on a new channel (for tests that also start
/// clients of their own, e.g. [`spawn_players`]).
pub async fn shared_addr_client() -> (SocketAddr, GameEngineClient<Channel>) {
    let addr = tokio::task::spawn_blocking(shared)
        .await
        .expect("shared server");
    (addr, GameEngineClient::new(channel(addr).await))
}

/// A channel to `addr` (connects at once).
pub async fn channel(addr: SocketAddr) -> Channel {
    Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("connect")
}

/// Asserts that `r` failed with `code` and `reason`; returns the status.
#[track_caller]
pub fn expect_reject<T: std::fmt::Debug>(
    r: Result<tonic::Response<T>, Status>,
    code: Code,
    reason: &str,
) -> Status {
    match r {
        Ok(resp) => panic!("expected {code:?}/{reason}, got OK: {:?}", resp.get_ref()),
        Err(s) => {
            assert_eq!(
                (s.code(), reason_of(&s).as_deref()),
                (code, Some(reason)),
                "status: {s:?}"
            );
            // Every reason sent is one the proto documents (`ErrorReason`).
            assert!(
                pb::ErrorReason::from_str_name(reason).is_some(),
                "{reason} is not an ErrorReason of the proto"
            );
            s
        }
    }
}

/// A CreateGame request for `variant` with `deals` deals and an admin-only seed.
pub fn create_req(variant: &str, deals: u32, seed: Option<u64>) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: variant.into(),
        deals,
        seed: seed.map(game_seed).unwrap_or_default(),
        ..Default::default()
    }
}

/// Creates a game with `token` (empty: anonymous) and returns the response.
pub async fn create(
    client: &mut GameEngineClient<Channel>,
    token: &str,
    req: pb::CreateGameRequest,
) -> pb::CreateGameResponse {
    client
        .create_game(authed(req, token))
        .await
        .expect("CreateGame")
        .into_inner()
}

/// GetState with `token` (panics on a rejection).
pub async fn state(client: &mut Client, game_id: &str, token: &str) -> pb::GetStateResponse {
    let r = viewer_state(client, game_id, token, "GetState").await;
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// GetHints with `token` (panics on a rejection).
pub async fn hints(client: &mut Client, game_id: &str, token: &str) -> pb::GetHintsResponse {
    let asked = client.get_hints(authed(hints_req(game_id), token)).await;
    let r = answer(asked, "GetHints", "GetHints");
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// The player sitting at `seat` in a state.
pub fn player_at(state: &pb::GetStateResponse, seat: u32) -> u32 {
    state
        .seats
        .iter()
        .find(|s| s.seat == seat)
        .map(|s| s.player)
        .expect("seat in state")
}

/// The player whose turn it is.
pub fn turn_player(state: &pb::GetStateResponse) -> u32 {
    player_at(state, state.turn_seat.expect("a seat to act"))
}

/// A SubmitPlay request playing `play` (declaring its interpretation, so wild plays that fit
/// several types are accepted).
pub fn play_req(
    game_id: &str,
    player: u32,
    play: &pb::Play,
    expected_seq: u64,
) -> pb::SubmitPlayRequest {
    pb::SubmitPlayRequest {
        game_id: game_id.into(),
        seat: Some(player),
        cards: play.cards.clone(),
        pass: false,
        declared: Some(pb::Declared {
            r#type: play.r#type,
            key: play.key.clone(),
        }),
        expected_seq: guard(expected_seq),
        request_id: String::new(),
    }
}

/// The `expected_seq` of the helpers: 0 sends none (no check), as these helpers always did; a
/// test of the guarded first action sets `Some(0)` itself.
/// A SubmitPlay request of `player` playing `cards` (undeclared, no `expected_seq`).
pub fn cards_req(
    g: &pb::CreateGameResponse,
    player: u32,
    cards: Vec<u32>,
) -> pb::SubmitPlayRequest {
    pb::SubmitPlayRequest {
        game_id: g.game_id.clone(),
        seat: Some(player),
        cards,
        ..Default::default()
    }
}

pub fn guard(expected_seq: u64) -> Option<u64> {
    Some(expected_seq).filter(|&s| s != 0)
}

pub fn pass_req(game_id: &str, player: u32, expected_seq: u64) -> pb::SubmitPlayRequest {
    pb::SubmitPlayRequest {
        game_id: game_id.into(),
        seat: Some(player),
        pass: true,
        expected_seq: guard(expected_seq),
        ..Default::default()
    }
}

/// Everything one viewer received during a match.
#[derive(Debug, Default, Clone)]
pub struct ViewerLog {
    /// The player index, or `None` for the spectator.
    pub player: Option<u32>,
    pub events: Vec<pb::GameEvent>,
    pub states: Vec<pb::GetStateResponse>,
    /// Hints with the seq of the state they were asked at.
    pub hints: Vec<(u64, pb::GetHintsResponse)>,
    pub submits: Vec<pb::SubmitPlayResponse>,
}

/// How a playing client chooses.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    pub seed: u64,
    /// Probability of passing when passing is legal.
    pub pass_prob: f64,
    /// Stop (return the log) once the game's seq reaches this.
    pub stop_at_seq: Option<u64>,
}

impl Policy {
    /// Passing when legal with probability 0.3, stopping once the game reaches `seq`.
    pub fn stopping_at(seed: u64, seq: u64) -> Policy {
        Policy {
            seed,
            pass_prob: 0.3,
            stop_at_seq: Some(seq),
        }
    }
}

/// The message of a reply, or an error naming the viewer and the rpc.
fn answer<T>(r: Result<tonic::Response<T>, Status>, who: &str, rpc: &str) -> Result<T, String> {
    r.map(tonic::Response::into_inner)
        .map_err(|s| format!("{who}: {rpc}: {s:?}"))
}

/// `WatchGame` from the start (the creation events included) with `token`; `who` names the
/// viewer in errors.
async fn watch_from_start(
    client: &mut GameEngineClient<Channel>,
    game_id: &str,
    token: &str,
    who: &str,
) -> Result<tonic::Streaming<pb::GameEvent>, String> {
    let req = watch_req(game_id, 0);
    answer(
        client.watch_game(authed(req, token)).await,
        who,
        "WatchGame",
    )
}

/// `GetState` with `token`; `who` names the viewer in errors.
async fn viewer_state(
    client: &mut GameEngineClient<Channel>,
    game_id: &str,
    token: &str,
    who: &str,
) -> Result<pb::GetStateResponse, String> {
    let req = state_req(game_id);
    answer(client.get_state(authed(req, token)).await, who, "GetState")
}

/// A viewer following a game: its stream from the start and the state read after every new seq.
struct Follow {
    stream: tonic::Streaming<pb::GameEvent>,
    game_id: String,
    token: String,
    who: String,
    /// The seq of the last state read.
    checked: Option<u64>,
}

impl Follow {
    async fn start(
        client: &mut GameEngineClient<Channel>,
        game_id: &str,
        token: &str,
        who: &str,
    ) -> Result<Follow, String> {
        Ok(Follow {
            stream: watch_from_start(client, game_id, token, who).await?,
            game_id: game_id.into(),
            token: token.into(),
            who: who.into(),
            checked: None,
        })
    }

    /// Logs the events up to one of a seq not read yet, then reads (and logs) the state; `None`
    /// when the stream ends.
    async fn next(
        &mut self,
        client: &mut GameEngineClient<Channel>,
        log: &mut ViewerLog,
    ) -> Result<Option<pb::GetStateResponse>, String> {
        while let Some(ev) = self
            .stream
            .message()
            .await
            .map_err(|s| format!("{}: stream: {s:?}", self.who))?
        {
            let seq = ev.seq;
            log.events.push(ev);
            if self.checked.is_some_and(|c| c >= seq) {
                continue;
            }
            let st = viewer_state(client, &self.game_id, &self.token, &self.who).await?;
            log.states.push(st.clone());
            self.checked = Some(st.seq.max(seq));
            return Ok(Some(st));
        }
        Ok(None)
    }
}

/// Plays a match for `player` with its own channel and token only: watches the game from the
/// start, reads its state after every new seq, and when it is to act asks for hints and plays a
/// random one (or passes, sometimes, when legal), with `expected_seq`. Returns what it received.
pub async fn play_as(
    addr: SocketAddr,
    game_id: String,
    player: u32,
    token: String,
    policy: Policy,
) -> Result<ViewerLog, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(policy.seed ^ (u64::from(player) << 40));
    let mut client = GameEngineClient::new(channel(addr).await);
    let mut log = ViewerLog {
        player: Some(player),
        ..Default::default()
    };
    let who = format!("player {player}");
    let mut follow = Follow::start(&mut client, &game_id, &token, &who).await?;
    let mut n = 0u64;
    while let Some(st) = follow.next(&mut client, &mut log).await? {
        if policy.stop_at_seq.is_some_and(|s| st.seq >= s) {
            return Ok(log);
        }
        if st.phase == pb::Phase::Finished as i32
            || st.turn_seat.is_none()
            || st.turn_seat != st.your_seat
        {
            continue;
        }
        let asked = client.get_hints(authed(hints_req(&game_id), &token)).await;
        let h = answer(asked, &who, "GetHints")?;
        log.hints.push((st.seq, h.clone()));
        if !h.your_turn {
            return Err(format!(
                "player {player}: hints say not my turn at seq {}",
                st.seq
            ));
        }
        let pass = h.can_pass && (h.plays.is_empty() || rng.random_bool(policy.pass_prob));
        n += 1;
        let mut req = if pass {
            pass_req(&game_id, player, st.seq)
        } else {
            if h.plays.is_empty() {
                return Err(format!(
                    "player {player}: no hint and cannot pass at seq {}",
                    st.seq
                ));
            }
            let i = rng.random_range(0..h.plays.len());
            play_req(&game_id, player, &h.plays[i], st.seq)
        };
        req.request_id = format!("p{player}-{n}");
        let resp = client
            .submit_play(authed(req.clone(), &token))
            .await
            .map_err(|s| {
                format!(
                    "player {player}: SubmitPlay {req:?} at seq {}: {s:?}",
                    st.seq
                )
            })?
            .into_inner();
        if resp.seq != st.seq + 1 {
            return Err(format!(
                "player {player}: acted at {} but got seq {}",
                st.seq, resp.seq
            ));
        }
        log.submits.push(resp);
    }
    Ok(log)
}

/// Watches the game as a spectator (or any token) until the stream ends, reading the state
/// after every new seq.
pub async fn watch_as(
    addr: SocketAddr,
    game_id: String,
    token: String,
) -> Result<ViewerLog, String> {
    let mut client = GameEngineClient::new(channel(addr).await);
    let mut log = ViewerLog::default();
    let mut follow = Follow::start(&mut client, &game_id, &token, "spectator").await?;
    while follow.next(&mut client, &mut log).await?.is_some() {}
    Ok(log)
}

/// One [`play_as`] task per seat token of `created`, in player order.
pub fn spawn_players(
    addr: SocketAddr,
    created: &pb::CreateGameResponse,
    policy: Policy,
) -> Vec<JoinHandle<Result<ViewerLog, String>>> {
    created
        .seat_tokens
        .iter()
        .enumerate()
        .map(|(p, token)| {
            tokio::spawn(play_as(
                addr,
                created.game_id.clone(),
                p as u32,
                token.clone(),
                policy,
            ))
        })
        .collect()
}

/// A `variant` match of `deals` deals from test seed `seed` on the shared server, played by one
/// [`play_as`] task per player until seq `stop` ([`Policy::stopping_at`]): the server's
/// address, a client, the game and the players' tasks.
pub async fn shared_match_until(
    variant: &str,
    deals: u32,
    seed: u64,
    stop: u64,
) -> (
    SocketAddr,
    Client,
    pb::CreateGameResponse,
    Vec<JoinHandle<Result<ViewerLog, String>>>,
) {
    let (addr, mut c) = shared_addr_client().await;
    let g = create(&mut c, ADMIN_KEY, create_req(variant, deals, Some(seed))).await;
    let players = spawn_players(addr, &g, Policy::stopping_at(seed, stop));
    (addr, c, g, players)
}

/// Plays a whole match with one task per player (each its own channel) and a spectator task;
/// returns the players' logs (by player) and the spectator's.
pub async fn play_match(
    addr: SocketAddr,
    created: &pb::CreateGameResponse,
    policy: Policy,
    timeout: Duration,
) -> Result<(Vec<ViewerLog>, ViewerLog), String> {
    let spectator = tokio::spawn(watch_as(
        addr,
        created.game_id.clone(),
        created.spectator_token.clone(),
    ));
    let players = spawn_players(addr, created, policy);
    let all = async {
        let mut logs = Vec::new();
        for p in players {
            logs.push(p.await.map_err(|e| e.to_string())??);
        }
        let spec = spectator.await.map_err(|e| e.to_string())??;
        Ok::<_, String>((logs, spec))
    };
    tokio::time::timeout(timeout, all)
        .await
        .map_err(|_| format!("the match did not finish within {timeout:?}"))?
}

/// Ends the match by an escape of the player to act in `st` (with its own token) and returns
/// the admin's replay.
pub async fn escape_and_replay(
    client: &mut Client,
    g: &pb::CreateGameResponse,
    st: &pb::GetStateResponse,
) -> pb::GetReplayResponse {
    let token = &g.seat_tokens[turn_player(st) as usize];
    leave(client, &g.game_id, token).await.expect("LeaveGame");
    get_replay(client, &g.game_id, ADMIN_KEY).await
}

/// `GetReplay` of `game_id` with `token`, verified by the library ([`rebuild`]: every recorded
/// state hash checked by `replay::verify`); panics naming the game when it does not verify.
pub async fn verified_replay(
    client: &mut GameEngineClient<Channel>,
    game_id: &str,
    token: &str,
) -> (pb::GetReplayResponse, Rebuilt) {
    let replay = get_replay(client, game_id, token).await;
    let rebuilt = rebuild(&replay).unwrap_or_else(|e| panic!("the replay of {game_id}: {e}"));
    (replay, rebuilt)
}

/// A match re-executed from its replay with the embedded variant: the state after every seq.
pub struct Rebuilt {
    /// `states[s]` is the state after seq `s` (`states[0]`: as created).
    pub states: Vec<shuangkou::game::Game>,
    /// The action log, as re-executed.
    pub entries: Vec<shuangkou::game::Entry>,
}

impl Rebuilt {
    pub fn last(&self) -> &shuangkou::game::Game {
        self.states.last().expect("at least the initial state")
    }
}

/// Rebuilds a match from `GetReplay` with the library's replay (`Replay::try_from` and
/// `replay::verify`: the core's `Game::replay`, checking every recorded state hash, with the
/// embedded variant's hooks), and keeps the state after every seq.
pub fn rebuild(replay: &pb::GetReplayResponse) -> Result<Rebuilt, String> {
    use shuangkou::game::Game;
    use shuangkou::service::replay::{self, Replay};

    let replay = Replay::try_from(replay)?;
    let verified = replay::verify(&replay)?;
    // The same, step by step, keeping every state.
    let hooks = &verified.hooks;
    let (mut game, _) = Game::new(
        replay.config.clone(),
        hooks,
        replay.seed,
        replay.preset()?,
        replay.created_at,
    )
    .map_err(|e| e.to_string())?;
    let mut states = vec![game.clone()];
    for e in &replay.entries {
        game.apply(hooks, *e).map_err(|err| err.to_string())?;
        states.push(game.clone());
    }
    if game.state_hash() != verified.game.state_hash() {
        return Err("step-by-step replay differs from Game::replay".into());
    }
    Ok(Rebuilt {
        states,
        entries: replay.entries,
    })
}

/// Points (as on the wire) from the core's hundredths.
pub fn points(centi: &[i64]) -> Vec<f64> {
    centi.iter().map(|c| *c as f64 / 100.0).collect()
}

/// Awaits `fut` for at most `limit` and panics naming `what` when it does not finish: every wait
/// of a test has a deadline and says what it waited for.
pub async fn within<F: std::future::Future>(limit: Duration, what: &str, fut: F) -> F::Output {
    tokio::time::timeout(limit, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {limit:?}"))
}

/// Asks `probe` every `every` until it answers `Some(value)` and returns the value; panics naming
/// `what` when `limit` passes first (a probe that hangs is cut off by the same deadline). Every
/// polling loop of the service tests goes through here, so none waits without a deadline.
pub async fn poll_until<T>(
    limit: Duration,
    every: Duration,
    what: &str,
    mut probe: impl AsyncFnMut() -> Option<T>,
) -> T {
    within(limit, what, async {
        loop {
            if let Some(value) = probe().await {
                return value;
            }
            tokio::time::sleep(every).await;
        }
    })
    .await
}

/// A fresh directory under the system's temp dir (name, process id and time keep tests apart).
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// LeaveGame with `token`; the seq of the escape.
pub async fn leave(
    client: &mut GameEngineClient<Channel>,
    game_id: &str,
    token: &str,
) -> Result<u64, Status> {
    client
        .leave_game(authed(leave_req(game_id), token))
        .await
        .map(|r| r.into_inner().seq)
}

/// Preset hands (admin only) where player 0 holds `cards` and the rest is dealt in id order;
/// the seed is searched so that player 0 leads.
pub async fn preset_game(
    c: &mut GameEngineClient<Channel>,
    variant: &str,
    cards: &[u32],
) -> pb::CreateGameResponse {
    let mut hands = [cards.to_vec(), Vec::new(), Vec::new(), Vec::new()];
    let mut rest = (0..108u32).filter(|id| !cards.contains(id));
    for (i, hand) in hands.iter_mut().enumerate() {
        while hand.len() < 27 {
            hand.push(rest.next().expect("108 cards"));
        }
        assert_eq!(hand.len(), 27, "hand {i}");
    }
    for seed in 1..200 {
        let mut req = create_req(variant, 1, Some(seed));
        req.preset_hands = Some(pb::PresetHands {
            hands: hands
                .iter()
                .map(|h| pb::CardList { cards: h.clone() })
                .collect(),
        });
        let g = create(c, ADMIN_KEY, req).await;
        let st = state(c, &g.game_id, ADMIN_KEY).await;
        let p = turn_player(&st);
        let own = state(c, &g.game_id, &g.seat_tokens[0]).await.hand;
        assert!(cards.iter().all(|id| own.contains(id)), "preset hand dealt");
        if p == 0 {
            assert_eq!(st.seq, 0);
            return g;
        }
    }
    panic!("no seed in 1..200 lets player 0 lead");
}
