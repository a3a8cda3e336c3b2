//! Whole matches over a real socket, one per variant: independent client tasks (one channel and
//! one seat token each) play two deals with `WatchGame`, `GetState`, `GetHints` and
//! `SubmitPlay` only, while a spectator watches. Then:
//! - the final scores equal the core's re-execution of the replay (`GetReplay` → `Game::replay`
//!   with the embedded variant, checking every recorded state hash);
//! - nothing leaked: every hand, partner hand, deal-start hand and hint any viewer received is
//!   exactly what that viewer may see at that seq (partners' hands only under 雙明, none for
//!   the spectator), and no card hidden from the viewer appears in it.

pub mod common;

use std::time::Duration;

use common::*;
use shuangkou::cards::CardSet;
use shuangkou::game::{Action, Game};
use shuangkou::seat::{Player, Seat};
use shuangkou::service::pb;
use shuangkou::service::pb::game_event::Event as E;

fn set(ids: &[u32]) -> CardSet {
    CardSet::from_ids(ids).expect("valid card ids")
}

/// What `player` may see of the hands at a state: its own hand and, under 雙明, its partner's.
fn visible(g: &Game, player: Option<u32>) -> (CardSet, Option<CardSet>) {
    let Some(p) = player else {
        return (CardSet::EMPTY, None);
    };
    let seat = g.seat_of(Player::new(p as u8)).expect("player seated");
    let partner = if g.partners_see_hands() {
        g.partner(seat).map(|s| g.hand(s))
    } else {
        None
    };
    (g.hand(seat), partner)
}

/// Cards hidden from `player` at a state: every other seat's hand (but a visible partner's)
/// and, in two-player games, the undealt cards.
fn hidden(g: &Game, player: Option<u32>) -> CardSet {
    let (own, partner) = visible(g, player);
    let all_hands = (0..g.players()).fold(CardSet::EMPTY, |a, s| a.union(g.hand(Seat::new(s))));
    all_hands
        .union(g.unused())
        .difference(own)
        .difference(partner.unwrap_or(CardSet::EMPTY))
}

fn check_no_hidden(ids: &[u32], g: &Game, player: Option<u32>, what: &str) {
    let leaked = set(ids).intersection(hidden(g, player));
    assert!(
        leaked.is_empty(),
        "{what}: viewer {player:?} received hidden cards {:?}",
        leaked.ids()
    );
}

fn check_hand_fields(
    hand: &[u32],
    partner_hand: &[u32],
    g: &Game,
    player: Option<u32>,
    what: &str,
) {
    check_no_hidden(hand, g, player, what);
    check_no_hidden(partner_hand, g, player, what);
    let (own, partner) = visible(g, player);
    assert_eq!(set(hand), own, "{what}: own hand of viewer {player:?}");
    assert_eq!(
        set(partner_hand),
        partner.unwrap_or(CardSet::EMPTY),
        "{what}: partner hand of viewer {player:?}"
    );
}

/// Checks one event received by `player` against the re-executed states.
fn check_event(ev: &pb::GameEvent, rebuilt: &Rebuilt, player: Option<u32>, what: &str) {
    let after = &rebuilt.states[ev.seq as usize];
    match ev.event.as_ref().expect("an event") {
        E::DealStarted(d) => {
            assert_eq!(d.deal_number, after.deal_number(), "{what}: deal number");
            assert_eq!(d.shown_card, after.shown_card().id(), "{what}: shown card");
            check_hand_fields(&d.hand, &d.partner_hand, after, player, what);
        }
        E::Played(p) => {
            // Public: the cards the acting seat played at that seq.
            let entry = &rebuilt.entries[ev.seq as usize - 1];
            let play = p.play.as_ref().expect("a play");
            match entry.action {
                Action::Play { cards, .. } => assert_eq!(set(&play.cards), cards, "{what}"),
                ref other => panic!("{what}: Played event for a {other:?}"),
            }
            for w in &play.wilds {
                assert!(
                    play.cards.contains(&w.card),
                    "{what}: wild not among the cards"
                );
            }
        }
        _ => {}
    }
}

fn check_viewer(log: &ViewerLog, rebuilt: &Rebuilt) {
    let who = match log.player {
        Some(p) => format!("player {p}"),
        None => "spectator".to_string(),
    };
    assert!(!log.events.is_empty(), "{who}: no events");
    // The stream: every seq in order, no gap, no duplicate event.
    let last = rebuilt.entries.len() as u64;
    let mut prev = 0u64;
    for ev in &log.events {
        assert!(
            ev.seq >= prev && ev.seq <= last,
            "{who}: event seq {} after {prev}",
            ev.seq
        );
        assert!(
            ev.seq <= prev + 1,
            "{who}: gap in the stream before seq {}",
            ev.seq
        );
        prev = ev.seq;
    }
    assert_eq!(prev, last, "{who}: the stream ended before the last seq");
    let starts = log
        .events
        .iter()
        .filter(|e| matches!(e.event, Some(E::DealStarted(_))))
        .count();
    assert_eq!(
        starts,
        rebuilt.last().results_settled() as usize,
        "{who}: one DealStarted per deal"
    );
    for (i, ev) in log.events.iter().enumerate() {
        check_event(
            ev,
            rebuilt,
            log.player,
            &format!("{who} event #{i} (seq {})", ev.seq),
        );
    }
    for st in &log.states {
        let what = format!("{who} GetState at seq {}", st.seq);
        let g = &rebuilt.states[st.seq as usize];
        check_hand_fields(&st.hand, &st.partner_hand, g, log.player, &what);
        let top = st.trick.as_ref().and_then(|t| t.top.as_ref());
        assert_eq!(
            top.map(|t| set(&t.cards)),
            g.top().map(|t| t.cards),
            "{what}: trick top"
        );
        for s in &st.seats {
            assert_eq!(
                s.card_count as usize,
                g.hand(Seat::new(s.seat as u8)).len(),
                "{what}: card count"
            );
        }
        assert_eq!(
            st.your_seat,
            log.player
                .and_then(|p| g.seat_of(Player::new(p as u8)))
                .map(u32::from)
        );
    }
    for (seq, h) in &log.hints {
        let g = &rebuilt.states[*seq as usize];
        let (own, _) = visible(g, log.player);
        for play in &h.plays {
            let what = format!("{who} hint at seq {seq}");
            check_no_hidden(&play.cards, g, log.player, &what);
            assert!(
                set(&play.cards).is_subset(own),
                "{what}: hint not from the hand"
            );
        }
    }
    for r in &log.submits {
        for ev in &r.events {
            assert_eq!(ev.seq, r.seq);
            check_event(
                ev,
                rebuilt,
                log.player,
                &format!("{who} SubmitPlay response seq {}", r.seq),
            );
        }
    }
}

/// Plays a two-deal match of `variant` on the shared server and checks scores against the core's
/// replay and every received message against what the viewer may see. Errors carry the seed.
async fn full_match(variant: &'static str, seed: u64) -> Result<String, String> {
    let addr = tokio::task::spawn_blocking(shared)
        .await
        .map_err(|e| e.to_string())?;
    let mut client =
        shuangkou::service::pb::game_engine_client::GameEngineClient::new(channel(addr).await);
    let created = create(&mut client, ADMIN_KEY, create_req(variant, 2, Some(seed))).await;
    let policy = Policy {
        seed,
        pass_prob: 0.25,
        stop_at_seq: None,
    };
    let (players, spectator) = play_match(addr, &created, policy, Duration::from_secs(150)).await?;

    // Final state, as a seat sees it.
    let fin = state(&mut client, &created.game_id, &created.seat_tokens[0]).await;
    assert_eq!(fin.phase, pb::Phase::Finished as i32);
    assert_eq!(fin.deals, 2);
    assert_eq!(fin.scores.as_ref().map(|s| s.deals.len()), Some(2));

    // The core's re-execution of the log (anyone holding the game id may fetch the replay).
    let replay = client
        .get_replay(authed(replay_req(&created.game_id), ""))
        .await
        .map_err(|s| format!("GetReplay after the match: {s:?}"))?
        .into_inner();
    assert_eq!(replay.variant, variant);
    assert_eq!(replay.variant_version, created.variant_version);
    assert_eq!(replay.seed, game_seed(seed));
    let rebuilt = rebuild(&replay)?;
    let core = rebuilt.last();
    let totals = points(core.totals());
    assert_eq!(
        fin.scores.as_ref().map(|s| s.total.clone()),
        Some(totals.clone())
    );
    assert_eq!(replay.final_scores, totals);
    assert_eq!(fin.seq, replay.actions.len() as u64);
    assert_eq!(core.results().len(), 2);
    for (i, d) in fin
        .scores
        .as_ref()
        .expect("scores")
        .deals
        .iter()
        .enumerate()
    {
        assert_eq!(
            d.scores,
            points(&core.results()[i].settlement.scores),
            "deal {}",
            i + 1
        );
    }
    for log in &players {
        let ended = log
            .events
            .iter()
            .find_map(|e| match &e.event {
                Some(E::MatchEnded(m)) => Some(m.scores.clone()),
                _ => None,
            })
            .expect("MatchEnded event");
        assert_eq!(ended, totals, "MatchEnded of player {:?}", log.player);
        assert!(!log.submits.is_empty(), "every player acted");
    }
    // Nothing leaked, to any seat or the spectator.
    for log in players.iter().chain(std::iter::once(&spectator)) {
        check_viewer(log, &rebuilt);
    }
    Ok(format!(
        "{variant}: {} actions, totals {totals:?}",
        replay.actions.len()
    ))
}

/// Every variant, all at once (the matches are latency-bound; running them together keeps the
/// suite fast): each match's result is reported with its variant and seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_variant_plays_full_matches_scored_as_the_core_replays_them_without_leaks() {
    let base = test_seed(11);
    let runs: Vec<_> = VARIANTS
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let seed = base + i as u64;
            (*v, seed, tokio::spawn(full_match(v, seed)))
        })
        .collect();
    let mut failures = Vec::new();
    for (variant, seed, run) in runs {
        match run.await {
            Ok(Ok(summary)) => eprintln!("{summary}"),
            Ok(Err(e)) => failures.push(format!("{variant} (seed {seed}): {e}")),
            Err(panic) => failures.push(format!("{variant} (seed {seed}): {panic}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A match that ends by an escape (LeaveGame) in its first deal of two: the replay still
/// re-executes to the same state hashes and scores.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_ended_by_leaving_replays_exactly() {
    let seed = test_seed(41);
    let (_, mut client, created, players) = shared_match_until("classic", 2, seed, 9).await;
    // Wait until the players stopped at seq 9, then player 2 leaves.
    let token = &created.seat_tokens[2];
    let st = poll_until(
        Duration::from_secs(60),
        Duration::from_millis(10),
        &format!("the players to reach seq 9 (seed {seed})"),
        async || Some(state(&mut client, &created.game_id, token).await).filter(|s| s.seq >= 9),
    )
    .await;
    assert_eq!(st.seq, 9, "seed {seed}");
    let left = client
        .leave_game(authed(leave_req(&created.game_id), token))
        .await
        .expect("LeaveGame")
        .into_inner();
    assert_eq!(left.seq, 10);
    let result = left.deal_result.expect("the escape settles the deal");
    assert_eq!(result.outcome, pb::Outcome::Escape as i32);
    assert_eq!(Some(result.escaped.expect("escaped seat")), st.your_seat);
    for p in players {
        p.await.expect("player task").expect("player");
    }
    let fin = state(&mut client, &created.game_id, token).await;
    assert_eq!(fin.phase, pb::Phase::Finished as i32);
    let replay = get_replay(&mut client, &created.game_id, "").await;
    assert_eq!(
        replay.deals, 2,
        "the replay gives the deals the match was created with"
    );
    assert_eq!(
        replay.actions.last().map(|a| a.kind.as_str()),
        Some("leave")
    );
    let rebuilt = rebuild(&replay).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(
        fin.scores.map(|s| s.total),
        Some(points(rebuilt.last().totals()))
    );
}
