//! What a viewer is sent: plays, events, states, hints, deal and match results, the create
//! response. Every function takes the core's values (the engine state, its events, a view) and
//! the creation record; what a viewer may see is decided by the core (`Game::view`,
//! `Game::event_view`), not here.

use crate::cards::{CardSet, Rank};
use crate::game::hooks::{EscapeReason, Outcome};
use crate::game::{DealResult, Event, Game, Phase, Viewer};
use crate::hand::Hand;
use crate::service::pb;
use crate::service::record::{Record, Tokens};
use crate::service::wire::request::hand_type;

/// Points from hundredths.
pub fn points(centi: i64) -> f64 {
    centi as f64 / 100.0
}

fn all_points(centi: &[i64]) -> Vec<f64> {
    centi.iter().map(|c| points(*c)).collect()
}

/// A classified play with its physical cards. Wild jokers are matched to the ranks they became
/// in order (small jokers first, then big).
pub fn play(cards: CardSet, hand: &Hand) -> pb::Play {
    let mut jokers: Vec<(Rank, u32)> = cards
        .iter()
        .filter(|c| c.rank().is_joker())
        .map(|c| (c.rank(), c.id()))
        .collect();
    let mut wilds = Vec::new();
    for (from, to) in hand.wilds.iter() {
        if let Some(i) = jokers.iter().position(|(r, _)| *r == from) {
            let (_, id) = jokers.remove(i);
            wilds.push(pb::WildUse {
                card: id,
                as_rank: to.symbol().to_string(),
            });
        }
    }
    pb::Play {
        cards: cards.ids(),
        r#type: hand_type(hand.kind) as i32,
        type_name: hand.kind.name().to_string(),
        length: u32::from(hand.len),
        key: hand
            .key()
            .map(|k| k.symbol().to_string())
            .unwrap_or_default(),
        stars: hand.stars.map(u32::from),
        wilds,
        notation: cards.rank_counts().to_string(),
        as_notation: hand.substituted.to_string(),
        group: u32::from(hand.group),
        links: u32::from(hand.links),
        cyclic: hand.cyclic,
    }
}

/// The CreateGame response (the tokens are returned once).
pub fn created(tokens: &Tokens, record: &Record) -> pb::CreateGameResponse {
    pb::CreateGameResponse {
        game_id: record.id.clone(),
        seat_tokens: tokens.seats.clone(),
        spectator_token: tokens.spectator.clone(),
        variant_version: record.version.clone(),
        seed_commitment: record.seed_commitment(),
    }
}

fn match_result(game: &Game, totals: &[i64]) -> pb::MatchResult {
    pb::MatchResult {
        scores: all_points(totals),
        deals: game.results().len() as u32,
    }
}

/// The SubmitPlay response for the action at `seq` (accepted at `at`, causing `events`), as
/// `player` sees it.
pub fn submit_response(
    game: &Game,
    seq: u64,
    at: u64,
    events: &[Event],
    player: u8,
) -> pb::SubmitPlayResponse {
    let viewer = Viewer::Player(player);
    let mut resp = pb::SubmitPlayResponse {
        seq,
        ..Default::default()
    };
    for e in events {
        match e {
            Event::Played { cards, hand, .. } if resp.play.is_none() => {
                resp.play = Some(play(*cards, hand));
            }
            Event::DealEnded(r) => resp.deal_result = Some(deal_result(r)),
            Event::MatchEnded { totals } => resp.match_result = Some(match_result(game, totals)),
            _ => {}
        }
        resp.events.push(event(game, seq, at, e, viewer));
    }
    resp
}

/// The LeaveGame response: the SubmitPlay response of the leave, reduced.
pub fn leave_response(r: pb::SubmitPlayResponse) -> pb::LeaveGameResponse {
    pb::LeaveGameResponse {
        seq: r.seq,
        deal_result: r.deal_result,
    }
}

/// One event of the action at `seq`, as `viewer` may see it.
pub fn event(game: &Game, seq: u64, at: u64, e: &Event, viewer: Viewer) -> pb::GameEvent {
    use pb::game_event::Event as E;
    let e = game.event_view(e, viewer);
    let event = match e {
        Event::DealStarted {
            deal_number,
            players,
            leader,
            shown_card,
            hands,
        } => {
            let seat = match viewer {
                Viewer::Player(p) => players.iter().position(|&x| x == p),
                _ => None,
            };
            let hand = seat
                .and_then(|s| hands.get(s))
                .map(|h| h.ids())
                .unwrap_or_default();
            let partner_hand = seat
                .filter(|_| game.partners_see_hands() && players.len() == 4)
                .and_then(|s| hands.get((s + 2) % 4))
                .map(|h| h.ids())
                .unwrap_or_default();
            E::DealStarted(pb::DealStarted {
                deal_number,
                hand,
                shown_card: shown_card.id(),
                leader: u32::from(leader),
                players: players.iter().map(|&p| u32::from(p)).collect(),
                partner_hand,
            })
        }
        Event::Played {
            seat,
            cards,
            hand,
            cards_left,
            auto,
        } => E::Played(pb::Played {
            seat: u32::from(seat),
            play: Some(play(cards, &hand)),
            cards_left: u32::from(cards_left),
            auto,
        }),
        Event::Passed { seat, auto } => E::Passed(pb::Passed {
            seat: u32::from(seat),
            auto,
        }),
        Event::TrickWon {
            winner,
            leader,
            jie_feng,
        } => E::TrickWon(pb::TrickWon {
            winner: u32::from(winner),
            leader: u32::from(leader),
            jie_feng,
        }),
        Event::PlayerOut { seat, place } => E::PlayerOut(pb::PlayerOut {
            seat: u32::from(seat),
            place: u32::from(place),
        }),
        Event::Escaped { seat, reason } => E::Escaped(pb::Escaped {
            seat: u32::from(seat),
            reason: match reason {
                EscapeReason::Left => "left",
                EscapeReason::Disconnected => "disconnected",
                EscapeReason::Timeouts => "timeouts",
            }
            .into(),
        }),
        Event::DealEnded(r) => E::DealEnded(deal_result(&r)),
        Event::MatchEnded { totals } => E::MatchEnded(match_result(game, &totals)),
        Event::Disconnected { seat } | Event::Reconnected { seat } => E::Passed(pb::Passed {
            seat: u32::from(seat),
            auto: true,
        }),
    };
    pb::GameEvent {
        seq,
        at: at as i64,
        event: Some(event),
    }
}

/// GetState for a viewer.
pub fn state(game: &Game, record: &Record, viewer: Viewer) -> pb::GetStateResponse {
    let v = game.view(viewer);
    let seats = v
        .seats
        .iter()
        .map(|s| pb::SeatState {
            seat: u32::from(s.seat),
            player: u32::from(s.player),
            name: record
                .players
                .get(s.player as usize)
                .cloned()
                .unwrap_or_default(),
            card_count: u32::from(s.card_count),
            place: u32::from(s.place),
            team: u32::from(s.team),
            score: points(s.total),
            auto_play: s.disconnected,
            bot: record.bots.get(&s.player).cloned().unwrap_or_default(),
        })
        .collect();
    let trick = pb::Trick {
        leader: u32::from(v.trick_leader),
        top: v.top.map(|t| play(t.cards, &t.hand)),
        top_seat: v.top.map(|t| u32::from(t.seat)),
        passed: v.passed.iter().map(|&s| u32::from(s)).collect(),
    };
    pb::GetStateResponse {
        seq: v.seq,
        phase: match v.phase {
            Phase::Playing => pb::Phase::Playing,
            Phase::Finished => pb::Phase::Finished,
        } as i32,
        deal_number: v.deal_number,
        turn_seat: v.turn.map(u32::from),
        turn_deadline: v.deadline.map_or(0, |d| d as i64),
        hand: v.hand.ids(),
        partner_hand: v.partner_hand.map(|h| h.ids()).unwrap_or_default(),
        seats,
        trick: Some(trick),
        scores: Some(pb::Scores {
            total: all_points(&v.totals),
            deals: v.results.iter().map(deal_result).collect(),
        }),
        variant: record.variant.clone(),
        variant_version: record.version.clone(),
        your_seat: v.your_seat.map(u32::from),
        shown_card: Some(v.shown_card.id()),
        finishing_order: v.finishing_order.iter().map(|&s| u32::from(s)).collect(),
        deals: v.deals,
    }
}

/// GetHints: the legal plays (with their physical cards), whether passing is legal now, and
/// whether it is the player's turn.
pub fn hints(plays: &[(CardSet, Hand)], can_pass: bool, your_turn: bool) -> pb::GetHintsResponse {
    pb::GetHintsResponse {
        plays: plays
            .iter()
            .map(|(cards, hand)| play(*cards, hand))
            .collect(),
        can_pass,
        your_turn,
        suggested: None,
    }
}

/// GetHints' `suggested`: the bot's play (its cards and combination), or a pass.
pub fn suggested(play_: Option<(CardSet, Hand)>, bot: &str) -> pb::SuggestedPlay {
    pb::SuggestedPlay {
        pass: play_.is_none(),
        play: play_.map(|(cards, hand)| play(cards, &hand)),
        bot: bot.to_string(),
    }
}

fn deal_result(r: &DealResult) -> pb::DealResult {
    pb::DealResult {
        deal_number: r.deal_number,
        outcome: match r.outcome {
            Some(Outcome::Double) => pb::Outcome::Double,
            Some(Outcome::Single) => pb::Outcome::Single,
            Some(Outcome::Draw) => pb::Outcome::Draw,
            None => pb::Outcome::Escape,
        } as i32,
        places: r.places.iter().map(|&s| u32::from(s)).collect(),
        scores: all_points(&r.settlement.scores),
        lines: r
            .settlement
            .lines
            .iter()
            .map(|l| pb::ScoreLine {
                seat: u32::from(l.seat),
                label: l.label.clone(),
                amount: points(l.amount),
                detail: l.detail.clone(),
            })
            .collect(),
        players: r.players.iter().map(|&p| u32::from(p)).collect(),
        escaped: r.escaped.map(u32::from),
    }
}
