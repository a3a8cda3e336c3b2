//! `SubmitPlay` latency by deal number over one long match through the service (issue 21,
//! BENCHMARKS.md "Long matches"): creates one match of DEALS deals against a running `shuangkou
//! serve` (`--no-turn-timers`), and plays it to its end, every seat from its own token: for
//! each turn `GetState` (the spectator's view: the seat to act, the deal number, the seating),
//! `GetHints` of the seat to act, then its `SubmitPlay` (a pass with probability 0.4 where
//! passing is legal, otherwise a uniformly random hint; seeded). Only `SubmitPlay` is timed.
//! Prints, for deal 1, every tenth of the match and the last deal, the p50 and p90 of
//! `SubmitPlay` in ms, and one JSON line with the p50 at deals 1, 100, 500 and the last, and the
//! ratio of the last deal's p50 to the first's (the target: ≤ 2).
//!
//! usage: `cargo run --release --example match_latency -- ADDR [DEALS] [SEED]` (defaults: 1000, 21)

#[path = "support/client.rs"]
mod client;

use std::time::Instant;

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::service::pb;
use shuangkou::service::pb::game_engine_client::GameEngineClient;

/// Hints asked for per turn: a random choice among the weakest 64 plays.
const HINTS: u32 = 64;

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let addr = args
        .next()
        .ok_or("usage: match_latency ADDR [DEALS] [SEED]")?;
    let deals: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(21);
    let channel = client::connect(&addr, 1).await?.remove(0);
    let mut c = GameEngineClient::new(channel);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    let created = c
        .create_game(pb::CreateGameRequest {
            variant: "baibian".into(),
            deals,
            ..Default::default()
        })
        .await
        .map_err(client::status)?
        .into_inner();
    let (id, tokens, watcher) = (
        created.game_id,
        created.seat_tokens,
        created.spectator_token,
    );
    // SubmitPlay milliseconds, by deal number.
    let mut by_deal: Vec<Vec<f64>> = vec![Vec::new(); deals as usize + 1];
    let started = Instant::now();
    loop {
        let state = c
            .get_state(client::authed(
                pb::GetStateRequest {
                    game_id: id.clone(),
                    ..Default::default()
                },
                &watcher,
            ))
            .await
            .map_err(client::status)?
            .into_inner();
        let Some(seat) = state.turn_seat else {
            break;
        };
        let player = state
            .seats
            .iter()
            .find(|s| s.seat == seat)
            .map(|s| s.player as usize)
            .ok_or("the seat to act is not in the state")?;
        let token = tokens.get(player).ok_or("no token for the player to act")?;
        let hints = c
            .get_hints(client::authed(
                pb::GetHintsRequest {
                    game_id: id.clone(),
                    limit: HINTS,
                    ..Default::default()
                },
                token,
            ))
            .await
            .map_err(client::status)?
            .into_inner();
        let mut play = pb::SubmitPlayRequest {
            game_id: id.clone(),
            expected_seq: Some(state.seq),
            ..Default::default()
        };
        if hints.can_pass && (hints.plays.is_empty() || rng.random_bool(0.4)) {
            play.pass = true;
        } else {
            let p = hints
                .plays
                .choose(&mut rng)
                .ok_or("no legal play and no pass")?;
            play.cards = p.cards.clone();
            play.declared = Some(pb::Declared {
                r#type: p.r#type,
                key: p.key.clone(),
            });
        }
        let t = Instant::now();
        c.submit_play(client::authed(play, token))
            .await
            .map_err(client::status)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if let Some(d) = by_deal.get_mut(state.deal_number as usize) {
            d.push(ms);
        }
    }
    let p50 = |deal: usize| -> f64 {
        let mut v = by_deal.get(deal).cloned().unwrap_or_default();
        v.sort_by(f64::total_cmp);
        client::quantile(&v, 0.5)
    };
    let step = (deals / 10).max(1) as usize;
    let mut rows: Vec<usize> = (1..=deals as usize).step_by(step).collect();
    if rows.last() != Some(&(deals as usize)) {
        rows.push(deals as usize);
    }
    println!("deal | plays | SubmitPlay p50 ms | p90 ms");
    for d in rows {
        let mut v = by_deal[d].clone();
        v.sort_by(f64::total_cmp);
        println!(
            "{d:>5} | {:>5} | {:.3} | {:.3}",
            v.len(),
            client::quantile(&v, 0.5),
            client::quantile(&v, 0.9)
        );
    }
    let last = deals as usize;
    let mut all: Vec<f64> = by_deal.iter().flatten().copied().collect();
    let line = serde_json::json!({
        "deals": deals,
        "seed": seed,
        "seconds": started.elapsed().as_secs_f64().round(),
        "submit_play_ms": client::summary(&mut all),
        "p50_ms_deal_1": p50(1),
        "p50_ms_deal_100": p50(100.min(last)),
        "p50_ms_deal_500": p50(500.min(last)),
        "p50_ms_last_deal": p50(last),
        "ratio_last_to_first": p50(last) / p50(1),
    });
    println!("{line}");
    Ok(())
}
