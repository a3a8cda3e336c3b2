//! Full deals over the wire, scored against hand-worked figures: the `deals` of
//! `tests/data/scoring.json` (preset hands, the plays of the seats that play, scores worked from
//! docs/rules/RULES.md §6) are played through the service — admin CreateGame with the preset hands and a
//! seed searched so that player 0 leads and nobody swaps seats — and the settled deal must carry
//! exactly the expected scores (a case may set options and have a seat leave before any play).
//! The oracle is the rules text, not a replay by the same engine.

pub mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;
use shuangkou::service::pb;

const DATA: &str = include_str!("data/scoring.json");

/// The rank index of a notation token (3..2 → 0..=12, SJ 13, BJ 14).
fn rank_index(token: &str) -> Result<u32, String> {
    const ORDER: [&str; 15] = [
        "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "SJ", "BJ",
    ];
    ORDER
        .iter()
        .position(|r| *r == token)
        .map(|i| i as u32)
        .ok_or_else(|| format!("no rank {token}"))
}

/// The card ids of a rank, lowest first (the proto's numbering: id % 54 is the card of one
/// deck, suits of 13 then the two jokers).
fn ids_of(rank: u32) -> Vec<u32> {
    match rank {
        13 => vec![52, 106],
        14 => vec![53, 107],
        r => (0..8).map(|k| (k / 4) * 54 + (k % 4) * 13 + r).collect(),
    }
}

fn rank_of(id: u32) -> u32 {
    match id % 54 {
        52 => 13,
        53 => 14,
        r => r % 13,
    }
}

/// Hands in notation → card ids, each rank's lowest free ids first.
fn deal_ids(hands: &[String]) -> Result<Vec<Vec<u32>>, String> {
    let mut used = std::collections::BTreeSet::new();
    hands
        .iter()
        .map(|h| {
            h.split_whitespace()
                .map(|t| {
                    let id = ids_of(rank_index(t)?)
                        .into_iter()
                        .find(|id| !used.contains(id))
                        .ok_or_else(|| format!("more {t} than the decks hold"))?;
                    used.insert(id);
                    Ok(id)
                })
                .collect()
        })
        .collect()
}

/// `cards` (notation) taken from `hand` (ids).
fn take(hand: &[u32], cards: &str) -> Result<Vec<u32>, String> {
    let mut left = hand.to_vec();
    cards
        .split_whitespace()
        .map(|t| {
            let r = rank_index(t)?;
            let i = left
                .iter()
                .position(|&id| rank_of(id) == r)
                .ok_or_else(|| format!("{t} not in the hand"))?;
            Ok(left.remove(i))
        })
        .collect()
}

/// Creates the case's game: preset hands and the first seed that lets player 0 lead with every
/// player at its own seat.
async fn create_case(c: &mut Client, case: &Value) -> Result<pb::CreateGameResponse, String> {
    let hands: Vec<String> =
        serde_json::from_value(case["hands"].clone()).map_err(|e| e.to_string())?;
    let ids = deal_ids(&hands)?;
    for seed in 1..400 {
        let mut req = create_req(case["variant"].as_str().ok_or("variant")?, 1, Some(seed));
        if let Some(options) = case.get("options").and_then(Value::as_object) {
            for (name, v) in options {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                req.options.insert(name.clone(), text);
            }
        }
        req.preset_hands = Some(pb::PresetHands {
            hands: ids
                .iter()
                .map(|h| pb::CardList { cards: h.clone() })
                .collect(),
        });
        let g = c
            .create_game(authed(req, ADMIN_KEY))
            .await
            .map_err(|s| format!("CreateGame: {s:?}"))?
            .into_inner();
        let st = state(c, &g.game_id, ADMIN_KEY).await;
        let identity = st.seats.iter().all(|s| s.seat == s.player);
        if identity && turn_player(&st) == 0 {
            return Ok(g);
        }
    }
    Err("no seed in 1..400 lets player 0 lead without a seat swap".into())
}

/// Plays the case: each listed play when its seat is to lead (every listed play is a lead),
/// a pass from everyone else; returns the settled deal's scores by seat.
async fn play_case(c: &mut Client, case: &Value) -> Result<Vec<f64>, String> {
    let g = create_case(c, case).await?;
    let plays: Vec<(u32, String)> =
        serde_json::from_value(case["plays"].clone()).map_err(|e| e.to_string())?;
    let mut next = plays.iter().peekable();
    if let Some(seat) = case.get("leave").and_then(Value::as_u64) {
        // The seat escapes before any play (player = seat: the case's seed keeps the seating).
        leave(c, &g.game_id, &g.seat_tokens[seat as usize])
            .await
            .map_err(|s| format!("LeaveGame of seat {seat}: {s:?}"))?;
    }
    for _ in 0..400 {
        let st = state(c, &g.game_id, ADMIN_KEY).await;
        if st.phase == pb::Phase::Finished as i32 {
            if next.peek().is_some() {
                return Err(format!("the deal ended before the play {:?}", next.peek()));
            }
            let scores = st.scores.ok_or("no scores")?;
            let deal = scores.deals.first().ok_or("no settled deal")?;
            return Ok(deal.scores.clone());
        }
        let seat = st.turn_seat.ok_or("no seat to act")?;
        let token = &g.seat_tokens[seat as usize];
        let leading = st.trick.as_ref().is_none_or(|t| t.top.is_none());
        let req = match next.peek() {
            Some((s, cards)) if *s == seat && leading => {
                let hand = state(c, &g.game_id, token).await.hand;
                next.next();
                pb::SubmitPlayRequest {
                    game_id: g.game_id.clone(),
                    seat: Some(seat),
                    cards: take(&hand, cards)?,
                    expected_seq: Some(st.seq),
                    ..Default::default()
                }
            }
            _ => pass_req(&g.game_id, seat, st.seq),
        };
        c.submit_play(authed(req, token))
            .await
            .map_err(|s| format!("seat {seat} at seq {}: {s:?}", st.seq))?;
    }
    Err("the deal did not end within 400 actions".into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_worked_deals_score_as_the_rules_say_over_the_wire() {
    let data: Value = serde_json::from_str(DATA).expect("scoring.json is JSON");
    let cases = data["deals"].as_array().expect("deals");
    let mut c = shared_client().await;
    let mut failures = Vec::new();
    let mut variants = std::collections::BTreeSet::new();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        variants.insert(case["variant"].as_str().unwrap_or("?").to_string());
        let want: Vec<f64> = serde_json::from_value(case["expect"].clone()).expect("expect");
        match within(Duration::from_secs(120), id, play_case(&mut c, case)).await {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!("{id}: expected {want:?}, got {got:?}")),
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for v in VARIANTS {
        assert!(variants.contains(v), "no full-deal case for {v}");
    }
}
