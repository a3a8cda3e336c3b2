//! A load client of `shengji.v1` (升級): plays real matches against a running `shuangkou serve`
//! and measures plays per second against the transport baseline (`grpc.health.v1.Health/Check`
//! at the same concurrency over the same connections, half of the time before the games and half
//! after), printing one JSON line.
//!
//! Each task plays whole matches in a closed loop with its seats' tokens: one `Deal{count: 54}`
//! per deal, the dealer's `GetState` and a bury, then each seat plays a uniformly random legal
//! card, computed locally from the seat's own hand and the public trick with the core's follow
//! rule (`Order::legal_cards`) — a card the server refuses is an error. Seeded; exits non-zero on
//! any rpc error, never on timing.
//!
//! usage: `cargo run --release --example shengji_load -- ADDR [TASKS] [SECONDS] [SEED]`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet, Suit};
use shuangkou::service::pb::shengji as pb;
use shuangkou::service::pb::shengji::shengji_engine_client::ShengjiEngineClient;
use shuangkou::shengji::{Level, Order};
use tonic::Request;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use pb::submit_action_request::Action as A;

fn authed<T>(m: T, token: &str) -> Request<T> {
    let mut r = Request::new(m);
    if let Ok(v) = format!("Bearer {token}").parse() {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

fn suit(s: i32) -> Option<Suit> {
    match pb::Suit::try_from(s).ok()? {
        pb::Suit::Spades => Some(Suit::Spades),
        pb::Suit::Hearts => Some(Suit::Hearts),
        pb::Suit::Clubs => Some(Suit::Clubs),
        pb::Suit::Diamonds => Some(Suit::Diamonds),
        pb::Suit::Unspecified => None,
    }
}

fn set(ids: &[u32]) -> Result<CardSet, String> {
    CardSet::from_ids(ids).map_err(|e| e.to_string())
}

struct Counts {
    plays: AtomicU64,
    actions: AtomicU64,
    matches: AtomicU64,
}

/// Plays matches until `end`.
async fn player(
    channel: Channel,
    seed: u64,
    end: Instant,
    counts: Arc<Counts>,
) -> Result<(), String> {
    let mut c = ShengjiEngineClient::new(channel);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let err = |e: tonic::Status| format!("{}: {}", e.code(), e.message());
    'matches: while Instant::now() < end {
        let created = c
            .create_game(pb::CreateGameRequest::default())
            .await
            .map_err(err)?
            .into_inner();
        let (gid, seats) = (created.game_id, created.seat_tokens);
        let act = |seat: u32, seq: u64, action: A| pb::SubmitActionRequest {
            game_id: gid.clone(),
            seat,
            expected_seq: seq,
            request_id: String::new(),
            action: Some(action),
        };
        let mut seq = 0;
        loop {
            if Instant::now() >= end {
                break 'matches;
            }
            // Deal the whole deal in one request.
            let r = c
                .submit_action(authed(
                    act(0, seq, A::Deal(pb::Deal { count: 54 })),
                    &seats[0],
                ))
                .await
                .map_err(err)?
                .into_inner();
            counts.actions.fetch_add(1, Ordering::Relaxed);
            seq = r.seq;
            let st = r.state.ok_or("no state")?;
            let dealer = st.turn.ok_or("no dealer to bury")?;
            let mut hands = Vec::with_capacity(4);
            for s in 0..4u32 {
                let v = c
                    .get_state(authed(
                        pb::GetStateRequest {
                            game_id: gid.clone(),
                        },
                        &seats[s as usize],
                    ))
                    .await
                    .map_err(err)?
                    .into_inner()
                    .state
                    .ok_or("no state")?;
                hands.push(set(&v.hand)?);
            }
            let bury: Vec<u32> = hands[dealer as usize]
                .iter()
                .take(6)
                .map(Card::id)
                .collect();
            hands[dealer as usize] = hands[dealer as usize].difference(set(&bury)?);
            let r = c
                .submit_action(authed(
                    act(dealer, seq, A::Bury(pb::Bury { cards: bury })),
                    &seats[dealer as usize],
                ))
                .await
                .map_err(err)?
                .into_inner();
            counts.actions.fetch_add(1, Ordering::Relaxed);
            seq = r.seq;
            let mut st = r.state.ok_or("no state")?;
            let order = Order {
                level: Level::new(st.level as u8).ok_or("bad level")?,
                trump: suit(st.trump).ok_or("no trump")?,
            };
            while st.phase == pb::Phase::Playing as i32 {
                let seat = st.turn.ok_or("no seat to play")?;
                let lead = st
                    .trick
                    .first()
                    .map(|t| Card::new(t.card))
                    .transpose()
                    .map_err(|e| e.to_string())?;
                let legal: Vec<Card> = order
                    .legal_cards(hands[seat as usize], lead)
                    .iter()
                    .collect();
                let card = legal[rng.random_range(0..legal.len())];
                hands[seat as usize].remove(card);
                let r = c
                    .submit_action(authed(
                        act(seat, seq, A::Play(pb::PlayCard { card: card.id() })),
                        &seats[seat as usize],
                    ))
                    .await
                    .map_err(err)?
                    .into_inner();
                counts.plays.fetch_add(1, Ordering::Relaxed);
                counts.actions.fetch_add(1, Ordering::Relaxed);
                seq = r.seq;
                st = r.state.ok_or("no state")?;
            }
            if st.phase == pb::Phase::Finished as i32 {
                counts.matches.fetch_add(1, Ordering::Relaxed);
                continue 'matches;
            }
        }
    }
    Ok(())
}

async fn baseline(channels: &[Channel], tasks: usize, secs: f64) -> Result<u64, String> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut handles = Vec::new();
    for i in 0..tasks {
        let mut h = HealthClient::new(channels[i % channels.len()].clone());
        handles.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < end {
                h.check(HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .map_err(|e| e.to_string())?;
                n += 1;
            }
            Ok::<u64, String>(n)
        }));
    }
    let mut total = 0;
    for h in handles {
        total += h.await.map_err(|e| e.to_string())??;
    }
    Ok(total)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .get(1)
        .ok_or("usage: shengji_load ADDR [TASKS] [SECONDS] [SEED]")?;
    let tasks: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
    let secs: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let seed: u64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut channels = Vec::new();
    for _ in 0..4 {
        let ch = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| e.to_string())?
            .tcp_nodelay(true)
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        channels.push(ch);
    }
    let half = secs / 4.0;
    let before = baseline(&channels, tasks, half).await?;
    let counts = Arc::new(Counts {
        plays: AtomicU64::new(0),
        actions: AtomicU64::new(0),
        matches: AtomicU64::new(0),
    });
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs / 2.0);
    let mut handles = Vec::new();
    for i in 0..tasks {
        let ch = channels[i % channels.len()].clone();
        handles.push(tokio::spawn(player(
            ch,
            seed ^ (i as u64) << 20,
            end,
            Arc::clone(&counts),
        )));
    }
    for h in handles {
        h.await.map_err(|e| e.to_string())??;
    }
    let played = start.elapsed().as_secs_f64();
    let after = baseline(&channels, tasks, half).await?;
    let plays = counts.plays.load(Ordering::Relaxed) as f64 / played;
    let actions = counts.actions.load(Ordering::Relaxed) as f64 / played;
    let checks = (before + after) as f64 / (2.0 * half);
    println!(
        "{}",
        serde_json::json!({
            "game": "shengji",
            "tasks": tasks,
            "seconds": secs,
            "seed": seed,
            "plays_per_second": plays.round(),
            "submit_actions_per_second": actions.round(),
            "health_checks_per_second": checks.round(),
            "plays_vs_health": (plays / checks * 1000.0).round() / 1000.0,
            "matches_finished": counts.matches.load(Ordering::Relaxed),
        })
    );
    Ok(())
}
