//! One game played with a race at every turn: the player to act sends one SubmitPlay on each
//! client at once with the same `expected_seq` (`durability_redis`: three replicas sharing
//! Redis; `durability_embedded`: three connections to one server on the embedded store).
//!
//! With different request ids exactly one is OK (seq + 1) and every other is ABORTED with
//! reason STALE_SEQ (never a second append; never judged on the newer state), except for the
//! first action, where `expected_seq` 0 means "no check": a loser judged after the winner gets
//! NOT_YOUR_TURN, one that prepared first loses the compare-and-append (STALE_SEQ). With the
//! same request id every reply is OK with the same seq and play (one append). After every race
//! each client reads the same seq.

use rand::Rng;
use shuangkou::service::pb;
use tonic::Code;

use super::{
    ADMIN_KEY, Client, Table, authed, choose, create_request, hints_req, player_to_act, reason,
    rng, spectated,
};

/// What [`race_every_turn`] played.
pub struct Raced {
    pub game_id: String,
    pub spectator: String,
    /// The game's seq at its end.
    pub seq: u64,
}

/// Plays one game (created as `<name>-<seed>`) to its end with a race at every turn.
pub async fn race_every_turn(clients: &[Client], seed: u64, name: &str) -> Raced {
    let mut rng = rng(seed, 1);
    let what = |m: &str| format!("seed {seed}: {m}");
    let created = clients[0]
        .clone()
        .create_game(authed(create_request(&format!("{name}-{seed}")), ADMIN_KEY))
        .await
        .expect("create")
        .into_inner();
    let t = Table::from_response(&created);
    let (mut different, mut same) = (0, 0);
    let mut last = 0;
    loop {
        let client = &clients[rng.random_range(0..clients.len())];
        let state = spectated(client, &t.game_id, &t.spectator)
            .await
            .expect("GetState");
        let Some(player) = player_to_act(&state) else {
            break;
        };
        let token = t.seat_tokens[player as usize].clone();
        let hints = clients[rng.random_range(0..clients.len())]
            .clone()
            .get_hints(authed(hints_req(&t.game_id), &token))
            .await
            .expect("GetHints")
            .into_inner();
        let shared_rid = rng.random_bool(0.3);
        let reqs: Vec<pb::SubmitPlayRequest> = (0..3)
            .map(|i| {
                let rid = if shared_rid {
                    format!("{}-{}", t.game_id, state.seq + 1)
                } else {
                    format!("{}-{}-{i}", t.game_id, state.seq + 1)
                };
                choose(&mut rng, &t.game_id, player, state.seq, &hints, rid)
            })
            .collect();
        let reqs = if shared_rid {
            // One request, sent to every replica at once.
            vec![reqs[0].clone(); 3]
        } else {
            reqs
        };
        let calls: Vec<_> = reqs
            .iter()
            .zip(clients)
            .map(|(req, c)| {
                let mut c = c.clone();
                let req = authed(req.clone(), &token);
                tokio::spawn(async move { c.submit_play(req).await.map(|r| r.into_inner()) })
            })
            .collect();
        let mut results = Vec::new();
        for call in calls {
            results.push(call.await.expect("call task"));
        }
        let next = state.seq + 1;
        last = next;
        if shared_rid {
            same += 1;
            for r in &results {
                match r {
                    Ok(resp) => assert_eq!(resp.seq, next, "{}", what("same request id: seq")),
                    Err(s) => panic!(
                        "{}",
                        what(&format!("same request id on three replicas: {s:?}"))
                    ),
                }
            }
            let first = results[0].as_ref().ok();
            assert!(
                results.iter().all(|r| r.as_ref().ok() == first),
                "{}",
                what("same request id: replies differ")
            );
        } else {
            different += 1;
            let wins = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(
                wins,
                1,
                "{}",
                what(&format!("seq {next}: {wins} winners: {results:?}"))
            );
            for r in &results {
                match r {
                    Ok(resp) => assert_eq!(resp.seq, next, "{}", what("winner's seq")),
                    // expected_seq 0 means "no check" (the first action): a loser is judged
                    // on the state after the winner's play, where it is another seat's turn,
                    // or loses the compare-and-append when it prepared first (STALE_SEQ).
                    Err(s) if state.seq == 0 => {
                        let got = (s.code(), reason(s));
                        assert!(
                            got == (Code::FailedPrecondition, "NOT_YOUR_TURN".into())
                                || got == (Code::Aborted, "STALE_SEQ".into()),
                            "{}",
                            what(&format!("first-action loser: {s:?}"))
                        );
                    }
                    Err(s) => {
                        assert_eq!(
                            s.code(),
                            Code::Aborted,
                            "{}",
                            what(&format!("loser: {s:?}"))
                        );
                        assert_eq!(reason(s), "STALE_SEQ", "{}", what(&format!("loser: {s:?}")));
                    }
                }
            }
        }
        // Exactly one append, seen by every replica.
        for c in clients {
            let s = spectated(c, &t.game_id, &t.spectator)
                .await
                .expect("GetState");
            assert_eq!(s.seq, next, "{}", what("seq after a race"));
        }
    }
    assert!(
        different > 0 && same > 0,
        "{}",
        what("both kinds of races ran")
    );
    println!("seed {seed}: {different} races with different request ids, {same} with the same one");
    Raced {
        game_id: t.game_id.clone(),
        spectator: t.spectator.clone(),
        seq: last,
    }
}
