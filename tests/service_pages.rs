//! Bounded responses for every legal game, over a real socket: `GetHints` pages through the
//! worst hands of every variant and yields exactly the `shuangkou rules plays` list (the CLI,
//! run as a child process, is the oracle); `GetReplay` pages a long match within the message
//! limit, and the pages assemble into a replay that verifies (`wire::replay::assemble`,
//! `replay::verify`).
//!
//! The 1,000-deal match (the longest CreateGame allows) is `#[ignore]`d in the default debug
//! suite (minutes of play in a debug build) and run by CI's e2e step in release:
//! `cargo test --release --test service_pages -- --ignored`.

pub mod cli_support;
pub mod common;

use std::time::Duration;

use common::*;
use prost::Message;
use shuangkou::service::pb;
use shuangkou::service::replay;
use shuangkou::service::status::reason_of;
use shuangkou::service::wire::replay::assemble;

/// The 千變 hand of issue 14: eleven pairs 3..K, an ace and the four wild jokers (24,205 legal
/// leads in qianbian).
const WORST: &str = "3 3 4 4 5 5 6 6 7 7 8 8 9 9 T T J J Q Q K K A SJ SJ BJ BJ";

/// Its card ids: ranks 3..K of spades in both decks, the ace of spades, both decks' jokers.
/// A page of a reply encodes to at most `max_bytes`.
fn assert_fits(page: &impl Message, max_bytes: usize) {
    assert!(
        page.encoded_len() <= max_bytes,
        "{} bytes",
        page.encoded_len()
    );
}

fn worst_ids() -> Vec<u32> {
    let mut ids: Vec<u32> = (0..11).flat_map(|r| [r, 54 + r]).collect();
    ids.extend([11, 52, 106, 53, 107]);
    ids
}

/// A game of `variant` where player 0 holds `held` (the rest dealt in id order).
async fn game_with_hand(c: &mut Client, variant: &str, held: &[u32]) -> pb::CreateGameResponse {
    let players = if variant == "erren" { 2 } else { 4 };
    let mut rest = (0..108u32).filter(|id| !held.contains(id));
    let hands: Vec<pb::CardList> = (0..players)
        .map(|p| {
            let mut cards = if p == 0 { held.to_vec() } else { Vec::new() };
            while cards.len() < 27 {
                cards.push(rest.next().expect("108 cards"));
            }
            pb::CardList { cards }
        })
        .collect();
    let mut req = create_req(variant, 1, Some(77));
    req.preset_hands = Some(pb::PresetHands { hands });
    create(c, ADMIN_KEY, req).await
}

/// (cards, type, key) of every play of the CLI's `rules plays`, page by page.
fn cli_plays(variant: &str, types: &[&str]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    loop {
        let offset_text = offset.to_string();
        let mut args = vec![
            "rules",
            "plays",
            "--variant",
            variant,
            "--hand",
            WORST,
            "--json",
            "--limit",
            "500",
            "--offset",
            &offset_text,
        ];
        for t in types {
            args.extend(["--type", t]);
        }
        let o = cli_support::run(&args, "", false);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        for p in v["plays"].as_array().expect("plays") {
            let s = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            out.push((s("cards"), s("type"), s("key")));
        }
        match v["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => return out,
        }
    }
}

/// Every page of GetHints for player 0 with `limit` and `types`, each within `max_bytes`.
async fn service_plays(
    c: &mut Client,
    g: &pb::CreateGameResponse,
    limit: u32,
    types: &[&str],
    max_bytes: usize,
) -> (Vec<(String, String, String)>, u32) {
    let mut out = Vec::new();
    let mut token = String::new();
    let mut total = None;
    loop {
        let req = pb::GetHintsRequest {
            game_id: g.game_id.clone(),
            limit,
            page_token: token.clone(),
            types: types.iter().map(|t| t.to_string()).collect(),
            suggest: false,
        };
        let page = c
            .get_hints(authed(req, &g.seat_tokens[0]))
            .await
            .expect("GetHints")
            .into_inner();
        assert_fits(&page, max_bytes);
        assert_eq!(page.offset as usize, out.len(), "pages chain");
        assert!(*total.get_or_insert(page.total) == page.total);
        out.extend(
            page.plays
                .iter()
                .map(|p| (p.notation.clone(), p.type_name.clone(), p.key.clone())),
        );
        if page.next_page_token.is_empty() {
            return (out, page.total);
        }
        token = page.next_page_token;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hints_page_through_the_worst_hands_of_every_variant_as_rules_plays_lists_them() {
    let mut c = shared_client().await;
    let held = worst_ids();
    for variant in ["classic", "jj", "baibian", "huopin", "qianbian", "erren"] {
        let g = game_with_hand(&mut c, variant, &held).await;
        let own = state(&mut c, &g.game_id, &g.seat_tokens[0]).await.hand;
        assert!(
            held.iter().all(|id| own.contains(id)),
            "{variant}: the hand is dealt"
        );
        let expected = cli_plays(variant, &[]);
        let (got, total) = service_plays(&mut c, &g, 500, &[], 1 << 20).await;
        assert_eq!(total as usize, expected.len(), "{variant}");
        if variant == "qianbian" {
            // The count of the issue.
            assert_eq!(total, 24_205);
        }
        assert!(
            got == expected,
            "{variant}: the pages differ from `rules plays`"
        );
        eprintln!("{variant}: {total} plays");
        // A type filter and the default page size (20).
        let types = ["bomb", "pair_chain"];
        let expected = cli_plays(variant, &types);
        let (got, _) = service_plays(&mut c, &g, 0, &types, 1 << 20).await;
        assert!(got == expected, "{variant}: the filtered pages differ");
    }
}

/// A small message limit bounds the hint pages too (a requested page larger than fits is cut
/// to what fits; the pages still chain to the whole list).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hint_pages_fit_a_small_message_limit() {
    let server = TestServer::start(|c| c.max_message_bytes = 16 * 1024).await;
    let mut c = server.client().await;
    let g = game_with_hand(&mut c, "qianbian", &worst_ids()).await;
    let (got, total) = service_plays(&mut c, &g, 500, &["bomb"], 16 * 1024).await;
    assert_eq!(got.len(), total as usize);
    assert_eq!(got, cli_plays("qianbian", &["bomb"]));
}

/// One GetHints (limit 1) for `token`: (your turn, can pass); GAME_OVER once the match is over.
async fn turn_of(
    c: &mut Client,
    game_id: &str,
    token: &str,
) -> Result<(bool, bool), tonic::Status> {
    let req = pb::GetHintsRequest {
        game_id: game_id.into(),
        limit: 1,
        ..Default::default()
    };
    let h = c.get_hints(authed(req, token)).await?.into_inner();
    Ok((h.your_turn, h.can_pass))
}

/// Plays a match to its end with the seat tokens only: the player to act (found by GetHints'
/// `your_turn`) passes when it may, and otherwise leads its weakest long combination (a chain,
/// straight or bomb when it has one): each deal takes a few dozen actions. Returns the seq.
/// Plays the match to its end; returns the last seq and the match result the last SubmitPlay
/// answered with.
async fn play_out(c: &mut Client, g: &pb::CreateGameResponse) -> (u64, Option<pb::MatchResult>) {
    let long = [
        "straight",
        "pair_chain",
        "triple_chain",
        "bomb",
        "chain_bomb",
    ];
    let mut seq = 0u64;
    let mut ended = None;
    loop {
        let mut actor = None;
        for (p, t) in g.seat_tokens.iter().enumerate() {
            match turn_of(c, &g.game_id, t).await {
                Ok((true, can_pass)) => {
                    actor = Some((p, can_pass));
                    break;
                }
                Ok(_) => {}
                Err(s) if reason_of(&s).as_deref() == Some("GAME_OVER") => return (seq, ended),
                Err(s) => panic!("GetHints: {s:?}"),
            }
        }
        let (p, can_pass) = actor.expect("a player to act");
        let t = &g.seat_tokens[p];
        let mut req = if can_pass {
            pb::SubmitPlayRequest {
                game_id: g.game_id.clone(),
                pass: true,
                ..Default::default()
            }
        } else {
            let mut h = hints_of(c, &g.game_id, t, &long).await;
            if h.plays.is_empty() {
                h = hints_of(c, &g.game_id, t, &[]).await;
            }
            play_req(&g.game_id, p as u32, &h.plays[0], 0)
        };
        req.seat = None;
        req.expected_seq = Some(seq);
        let resp = c
            .submit_play(authed(req, t))
            .await
            .expect("SubmitPlay")
            .into_inner();
        seq = resp.seq;
        ended = resp.match_result.or(ended);
    }
}

async fn hints_of(
    c: &mut Client,
    game_id: &str,
    token: &str,
    types: &[&str],
) -> pb::GetHintsResponse {
    let req = pb::GetHintsRequest {
        game_id: game_id.into(),
        limit: 1,
        types: types.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    };
    c.get_hints(authed(req, token))
        .await
        .expect("GetHints")
        .into_inner()
}

/// Plays a `deals`-deal classic match on a server with `max_bytes` as its message limit, reads
/// the replay page by page (each page within the limit), assembles and verifies it.
async fn long_match_replays(deals: u32, max_bytes: usize) {
    let server = TestServer::start(|c| c.max_message_bytes = max_bytes).await;
    let mut c = server.client().await;
    let g = create(
        &mut c,
        ADMIN_KEY,
        create_req("classic", deals, Some(deals.into())),
    )
    .await;
    let (seq, _) = play_out(&mut c, &g).await;
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let page = c
            .get_replay(authed(
                pb::GetReplayRequest {
                    page_token: token.clone(),
                    ..replay_req(&g.game_id)
                },
                "",
            ))
            .await
            .expect("GetReplay")
            .into_inner();
        assert_fits(&page, max_bytes);
        token = page.next_page_token.clone();
        pages.push(page);
        if token.is_empty() {
            break;
        }
    }
    eprintln!("{deals} deals: {seq} actions in {} pages", pages.len());
    let r = assemble(&pages).expect("the pages assemble");
    assert_eq!(r.entries.len() as u64, seq);
    let verified = replay::verify(&r).expect("the replay verifies");
    assert_eq!(verified.game.results_settled(), deals);
    // A page alone is not a replay.
    if pages.len() > 1 {
        assert!(shuangkou::service::replay::Replay::try_from(&pages[0]).is_err());
        assert!(assemble(&pages[1..]).is_err(), "pages without the first");
    }
}

/// A 12-deal match on a 32 KiB message limit: its replay takes many pages by size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_match_replays_page_by_page_and_verifies() {
    within(
        Duration::from_secs(600),
        "a 12-deal match",
        long_match_replays(12, 32 * 1024),
    )
    .await;
}

/// The longest match CreateGame allows, on the default 1 MiB limit (release: see the header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes in a debug build; CI's e2e runs it in release"]
async fn a_1000_deal_match_replays_page_by_page_and_verifies() {
    within(
        Duration::from_secs(1800),
        "a 1,000-deal match",
        long_match_replays(1000, 1 << 20),
    )
    .await;
}

/// GetState of a match longer than the deals a live game keeps (`game::RESULTS_KEPT`): a page
/// reaching before them (read from the store) holds the same deals as the latest page (read
/// from memory) where they overlap, and every deal from the first, numbered in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_state_pages_deals_older_than_the_kept_ones_from_the_store() {
    let deals = shuangkou::game::RESULTS_KEPT as u32 + 2;
    within(Duration::from_secs(600), "an 18-deal match", async {
        let server = TestServer::start(|_| {}).await;
        let mut c = server.client().await;
        let g = create(&mut c, ADMIN_KEY, create_req("classic", deals, Some(5))).await;
        let (_, ended) = play_out(&mut c, &g).await;
        assert_eq!(
            ended.map(|m| m.deals),
            Some(deals),
            "the match result counts every deal played"
        );
        let token = g.seat_tokens[0].clone();
        let scores = |from: u32, limit: u32| {
            let req = pb::GetStateRequest {
                game_id: g.game_id.clone(),
                results_from_deal: from,
                results_limit: limit,
            };
            let (mut c, token) = (c.clone(), token.clone());
            async move {
                let s = c.get_state(authed(req, &token)).await.expect("GetState");
                let s = s.into_inner();
                (s.scores.expect("scores"), s.results_next_from_deal)
            }
        };
        let (latest, next) = scores(0, 0).await;
        assert_eq!(
            (latest.deals_settled, latest.deals_from, next),
            (deals, 3, 0)
        );
        let (all, next) = scores(1, deals).await;
        assert_eq!((all.deals_settled, all.deals_from, next), (deals, 1, 0));
        assert_eq!(all.deals.len(), deals as usize);
        assert_eq!(
            all.deals[2..],
            latest.deals[..],
            "the store's deals are memory's"
        );
        let (first, next) = scores(1, 1).await;
        assert_eq!((first.deals_from, next), (1, 2));
        assert_eq!(first.deals[..], all.deals[..1]);
    })
    .await;
}
