//! What a viewer is sent: plays, events, states, hints, deal and match results, the create
//! response. Every function takes the core's values (the engine state, its events, a view) and
//! the creation record; what a viewer may see is decided by the core (`Game::view`,
//! `Game::event_view`), not here.

use crate::cards::{CardSet, Rank};
use crate::determinism::decimal;
use crate::game::hooks::{EscapeReason, Outcome};
use crate::game::{DealResult, Event, Game, Phase, Viewer};
use crate::hand::Hand;
use crate::seat::{Player, Seat, Seating};
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

/// A game in progress, for ListGames.
pub fn game_summary(game: &Game, record: &Record) -> pb::GameSummary {
    pb::GameSummary {
        game_id: record.id.clone(),
        variant: record.variant.clone(),
        variant_version: record.version.clone(),
        platform: record.platform.clone().unwrap_or_default(),
        phase: match game.phase() {
            Phase::Playing => pb::Phase::Playing,
            Phase::Finished => pb::Phase::Finished,
        } as i32,
        seq: game.seq(),
        deal_number: game.deal_number(),
        deals: game.config().deals,
        players: record.players.clone(),
        created_at: record.created_at as i64,
    }
}

fn match_result(game: &Game, totals: &[i64]) -> pb::MatchResult {
    pb::MatchResult {
        scores: all_points(totals),
        // Every deal settled in the match, not only the latest ones the game keeps in memory.
        deals: game.results_settled(),
    }
}

/// The SubmitPlay response for the action at `seq` (accepted at `at`, causing `events`), as
/// `player` sees it.
pub fn submit_response(
    game: &Game,
    seq: u64,
    at: u64,
    events: &[Event],
    player: Player,
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
    }
    resp.events = action_events(game, seq, at, events, viewer);
    resp
}

/// The LeaveGame response: the SubmitPlay response of the leave, reduced.
pub fn leave_response(r: pb::SubmitPlayResponse) -> pb::LeaveGameResponse {
    pb::LeaveGameResponse {
        seq: r.seq,
        deal_result: r.deal_result,
    }
}

/// The cursor of the `index`-th event `viewer` receives of the action at `seq`: `seq.index`,
/// written digit by digit into one allocation (every event of every reply has one, and
/// `format!` cost more than the rest of the cursor's event).
pub fn cursor(seq: u64, index: usize) -> String {
    let mut cursor = String::with_capacity(2 * 20 + 1);
    let mut buf = [0u8; 20];
    cursor.extend(decimal(seq, &mut buf).iter().map(|&d| char::from(d)));
    cursor.push('.');
    cursor.extend(
        decimal(index as u64, &mut buf)
            .iter()
            .map(|&d| char::from(d)),
    );
    cursor
}

/// A WatchGame cursor read back: (seq, index); `None` when malformed.
pub fn parse_cursor(c: &str) -> Option<(u64, usize)> {
    let (seq, index) = c.split_once('.')?;
    Some((seq.parse().ok()?, index.parse().ok()?))
}

/// The events of the action at `seq` (accepted at `at`) as `viewer` may see them, in order,
/// each with its cursor.
pub fn action_events(
    game: &Game,
    seq: u64,
    at: u64,
    events: &[Event],
    viewer: Viewer,
) -> Vec<pb::GameEvent> {
    events
        .iter()
        .flat_map(|e| event_kinds(game, at, e, viewer))
        .enumerate()
        .map(|(i, event)| pb::GameEvent {
            seq,
            at: at as i64,
            cursor: cursor(seq, i),
            event: Some(event),
        })
        .collect()
}

/// What one engine event is on the wire: one event, or two for a change of presence (the
/// change, then the 托管 flag it turns on or off).
fn event_kinds(game: &Game, at: u64, e: &Event, viewer: Viewer) -> Vec<pb::game_event::Event> {
    use pb::game_event::Event as E;
    let auto = |seat: Seat, on: bool, reason: &str| {
        E::AutoPlayChanged(pb::AutoPlayChanged {
            seat: u32::from(seat),
            on,
            reason: reason.into(),
        })
    };
    let e = game.event_view(e, viewer);
    let event = match e {
        Event::DealStarted {
            deal_number,
            players,
            leader,
            shown_card,
            hands,
        } => {
            let seat = viewer.seat_in(&players);
            let hand = seat
                .and_then(|s| hands.get(s.index()))
                .map(|h| h.ids())
                .unwrap_or_default();
            let partner_hand = seat
                .filter(|_| game.partners_see_hands())
                .and_then(|s| s.partner(players.len() as u8))
                .and_then(|p| hands.get(p.index()))
                .map(|h| h.ids())
                .unwrap_or_default();
            E::DealStarted(pb::DealStarted {
                deal_number,
                hand,
                shown_card: shown_card.id(),
                leader: u32::from(leader),
                players: players.players().iter().map(|&p| u32::from(p)).collect(),
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
        Event::Left { seat } => E::PlayerLeft(pb::PlayerLeft {
            seat: u32::from(seat),
        }),
        Event::DealEnded(r) => E::DealEnded(deal_result(&r)),
        Event::MatchEnded { totals } => E::MatchEnded(match_result(game, &totals)),
        Event::Disconnected { seat } => {
            let deadline = at.saturating_add(game.config().reconnect_ms);
            return vec![
                E::SeatDisconnected(pb::SeatDisconnected {
                    seat: u32::from(seat),
                    reconnect_deadline: deadline as i64,
                }),
                auto(seat, true, "disconnected"),
            ];
        }
        Event::Reconnected { seat } => {
            return vec![
                E::SeatReconnected(pb::SeatReconnected {
                    seat: u32::from(seat),
                }),
                auto(seat, false, "reconnected"),
            ];
        }
        Event::Aborted => E::GameAborted(pb::GameAborted {}),
    };
    vec![event]
}

/// Deal results a GetState returns when the request does not say.
pub const DEFAULT_RESULTS_LIMIT: u32 = 16;

/// The most deal results one GetState returns.
pub const MAX_RESULTS_LIMIT: u32 = 100;

/// The page of settled deals (numbered from 1; `settled` of them) a GetState asks for: from
/// deal `from` (0 = the latest `limit`), at most `limit` (0 = the default, capped at the
/// maximum). Returns the page's indexes (deal number − 1) and the `from` of the next one (0 when
/// the page reaches the latest deal). The deals are read from the game when it keeps them
/// ([`Game::results_in`]), else from the store (`service::history::settled_deals`).
pub fn results_range(settled: u32, from: u32, limit: u32) -> (std::ops::Range<u32>, u32) {
    let limit = match limit {
        0 => DEFAULT_RESULTS_LIMIT,
        l => l.min(MAX_RESULTS_LIMIT),
    };
    let start = match from {
        0 => settled.saturating_sub(limit),
        f => (f - 1).min(settled),
    };
    let end = start.saturating_add(limit).min(settled);
    let next = if end < settled { end + 1 } else { 0 };
    (start..end, next)
}

/// GetState for a viewer, with `page`, the settled deals `results_from_deal` / `results_limit`
/// asked for ([`results_range`]: `next` is its next page's `from`).
pub fn state(
    game: &Game,
    record: &Record,
    viewer: Viewer,
    page: &[DealResult],
    next: u32,
) -> pb::GetStateResponse {
    let v = game.view(viewer);
    let seats = v
        .seats
        .iter()
        .map(|s| pb::SeatState {
            seat: u32::from(s.seat),
            player: u32::from(s.player),
            name: record
                .players
                .get(s.player.index())
                .cloned()
                .unwrap_or_default(),
            card_count: u32::from(s.card_count),
            place: u32::from(s.place),
            team: u32::from(s.team),
            score: points(s.total),
            auto_play: s.disconnected,
            connected: !s.disconnected,
            reconnect_deadline: game
                .disconnected_since(s.player)
                .map_or(0, |d| d.saturating_add(game.config().reconnect_ms) as i64),
            bot: record
                .bots
                .get(&s.player.number())
                .cloned()
                .unwrap_or_default(),
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
            deals: page.iter().map(deal_result).collect(),
            deals_settled: game.results_settled(),
            deals_from: page.first().map_or(0, |r| r.deal_number),
        }),
        variant: record.variant.clone(),
        variant_version: record.version.clone(),
        your_seat: v.your_seat.map(u32::from),
        shown_card: Some(v.shown_card.id()),
        finishing_order: v.finishing_order.iter().map(|&s| u32::from(s)).collect(),
        deals: v.deals,
        options: record.options.clone().into_iter().collect(),
        results_next_from_deal: next,
        // The game's 托管 bot needs the serve's default: the rpc fills it in.
        auto_policy: String::new(),
    }
}

/// GetHints: one page of the legal plays (with their physical cards), whether passing is legal
/// now, whether it is the player's turn, the counts and the next page's token.
pub fn hints(
    plays: &[(CardSet, Hand)],
    can_pass: bool,
    your_turn: bool,
    page: &crate::hints::Page,
) -> pb::GetHintsResponse {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    pb::GetHintsResponse {
        plays: plays
            .iter()
            .map(|(cards, hand)| play(*cards, hand))
            .collect(),
        can_pass,
        your_turn,
        next_page_token: page.next_token.clone().unwrap_or_default(),
        total: count(page.total),
        total_all: count(page.total_all),
        offset: count(page.offset),
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
        players: r.players.players().iter().map(|&p| u32::from(p)).collect(),
        escaped: r.escaped.map(u32::from),
        player_scores: by_player(&r.players, &all_points(&r.settlement.scores)),
        player_places: r
            .places
            .iter()
            .filter_map(|&s| r.players.player_at(s))
            .map(u32::from)
            .collect(),
        escaped_player: r
            .escaped
            .and_then(|s| r.players.player_at(s))
            .map(u32::from),
    }
}

/// Values by seat re-indexed by player: `out[players[s]] = by_seat[s]`.
fn by_player(players: &Seating, by_seat: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; players.len()];
    for (seat, p) in players.iter() {
        if let (Some(slot), Some(v)) = (out.get_mut(p.index()), by_seat.get(seat.index())) {
            *slot = *v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cursor is `seq.index` as `format!` writes it, and reads back.
    #[test]
    fn cursors_are_seq_dot_index() {
        let seqs = [
            0,
            1,
            9,
            10,
            99,
            100,
            12_345,
            1 << 40,
            u64::MAX - 1,
            u64::MAX,
        ];
        for (seq, index) in seqs
            .into_iter()
            .zip([0, 1, 2, 10, 11, 99, 100, 7, 1_000, 3])
        {
            let c = cursor(seq, index);
            assert_eq!(c, format!("{seq}.{index}"));
            assert_eq!(parse_cursor(&c), Some((seq, index)));
        }
    }

    fn numbers((range, next): (std::ops::Range<u32>, u32)) -> (Vec<u32>, u32) {
        (range.map(|i| i + 1).collect(), next)
    }

    #[test]
    fn deal_results_come_a_page_at_a_time() {
        // Default: the latest 16, nothing after them.
        assert_eq!(numbers(results_range(40, 0, 0)), ((25..=40).collect(), 0));
        assert_eq!(numbers(results_range(40, 0, 3)), ((38..=40).collect(), 0));
        assert_eq!(numbers(results_range(40, 1, 10)), ((1..=10).collect(), 11));
        assert_eq!(
            numbers(results_range(40, 11, 10)),
            ((11..=20).collect(), 21)
        );
        assert_eq!(numbers(results_range(40, 35, 10)), ((35..=40).collect(), 0));
        assert_eq!(numbers(results_range(40, 41, 10)), (vec![], 0));
        assert_eq!(numbers(results_range(40, u32::MAX, u32::MAX)), (vec![], 0));
        let (range, next) = results_range(1_000, 1, u32::MAX);
        assert_eq!((range.len(), next), (100, 101), "a page is capped at 100");
        assert_eq!(numbers(results_range(0, 0, 0)), (vec![], 0));
    }
}
