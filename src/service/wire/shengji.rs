//! The wire boundary of `shengji.v1`: requests in (checked and bounded: malformed input stops
//! here), views, events, hints and replays out — always through the core's per-viewer view and
//! event redaction (`shengji::view`), so what a viewer may not see never reaches the wire.

use std::collections::BTreeMap;

use crate::cards::{Card, CardSet, Suit};
use crate::game::Viewer;
use crate::seat::{Player, Seat};
use crate::service::pb::shengji as pb;
use crate::service::record::{CreateBase, Tokens};
use crate::service::shengji::hints::Hints;
use crate::service::shengji::record::{NewShengji, ShengjiRecord};
use crate::service::shengji::table::{
    AutoReason, Command, LeaveReason, ReplayAction, Stored, Table, TableEvent,
};
use crate::service::status::{ApiError, Reason};
use crate::shengji::game::ENGINE_VERSION;
use crate::shengji::{Action, DealResult, Event, Level, Phase, Side};

/// The most cards one request may carry (a bury is 6; a deck 54).
const MAX_CARDS: usize = 54;

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::new(Reason::BadRequest, msg)
}

/// A card id of the one-deck game.
fn card(id: u32) -> Result<Card, ApiError> {
    if id > 53 {
        return Err(ApiError::new(
            Reason::BadCardId,
            format!("card {id} is not in the one-deck game (ids 0..=53)"),
        ));
    }
    Card::new(id).map_err(ApiError::from)
}

/// A CreateGameRequest as the domain reads it.
pub fn new_game(req: pb::CreateGameRequest) -> Result<NewShengji, ApiError> {
    if req.players.len() > 4
        || req.deck.len() > MAX_CARDS
        || req.options.len() > 64
        || req.bot_seats.len() > 4
    {
        return Err(bad("too many players, cards or options"));
    }
    Ok(NewShengji {
        base: CreateBase {
            variant: if req.variant.is_empty() {
                "shengji".into()
            } else {
                req.variant
            },
            players: req.players,
            options: req.options.into_iter().collect::<BTreeMap<_, _>>(),
            seed: req.seed,
            request_id: req.request_id,
        },
        deck: (!req.deck.is_empty()).then_some(req.deck),
        bot_seats: req.bot_seats,
    })
}

/// The command of a SubmitActionRequest.
pub fn command(req: &pb::SubmitActionRequest) -> Result<Command, ApiError> {
    use pb::submit_action_request::Action as A;
    match &req.action {
        None => Err(bad("the action (deal, declare, bury or play) is required")),
        Some(A::Deal(d)) => Ok(Command::Deal(d.count)),
        Some(A::Declare(d)) => Ok(Command::Declare(card(d.card)?)),
        Some(A::Play(p)) => Ok(Command::Play(card(p.card)?)),
        Some(A::Bury(b)) => {
            if b.cards.len() > MAX_CARDS {
                return Err(bad("too many cards"));
            }
            let mut set = CardSet::EMPTY;
            for &id in &b.cards {
                let c = card(id)?;
                if set.contains(c) {
                    return Err(ApiError::new(
                        Reason::DuplicateCard,
                        format!("card {id} twice"),
                    ));
                }
                set.insert(c);
            }
            Ok(Command::Bury(set))
        }
    }
}

pub fn created(tokens: &Tokens, record: &ShengjiRecord) -> pb::CreateGameResponse {
    pb::CreateGameResponse {
        game_id: record.base.id.clone(),
        seat_tokens: tokens.seats.clone(),
        spectator_token: tokens.spectator.clone(),
        variant: record.base.variant.clone(),
        variant_version: record.base.version.clone(),
        seed_commitment: record.base.seed_commitment(),
        engine_version: ENGINE_VERSION.into(),
    }
}

fn ids(cards: CardSet) -> Vec<u32> {
    cards.iter().map(Card::id).collect()
}

/// Cards in their order (the turned bottom, a trick).
fn list(cards: &[Card]) -> Vec<u32> {
    cards.iter().map(|c| c.id()).collect()
}

fn suit(s: Option<Suit>) -> i32 {
    (match s {
        None => pb::Suit::Unspecified,
        Some(Suit::Spades) => pb::Suit::Spades,
        Some(Suit::Hearts) => pb::Suit::Hearts,
        Some(Suit::Clubs) => pb::Suit::Clubs,
        Some(Suit::Diamonds) => pb::Suit::Diamonds,
    }) as i32
}

fn phase(p: Phase) -> i32 {
    (match p {
        Phase::Dealing => pb::Phase::Dealing,
        Phase::Exchange => pb::Phase::Exchange,
        Phase::Playing => pb::Phase::Playing,
        Phase::Finished => pb::Phase::Finished,
    }) as i32
}

fn levels(l: [Level; 2]) -> pb::Levels {
    pb::Levels {
        team0: u32::from(l[0].face()),
        team1: u32::from(l[1].face()),
    }
}

fn seat_cards(cards: &[(Seat, Card)]) -> Vec<pb::SeatCard> {
    cards
        .iter()
        .map(|&(seat, card)| pb::SeatCard {
            seat: u32::from(seat),
            card: card.id(),
        })
        .collect()
}

fn deal_result(r: &DealResult) -> pb::DealResult {
    pb::DealResult {
        deal_number: r.deal_number,
        dealer: u32::from(r.dealer),
        level: u32::from(r.level.face()),
        trump: suit(Some(r.trump)),
        buried: ids(r.buried),
        buried_points: r.buried_points,
        trick_points: r.trick_points.to_vec(),
        last_trick_winner: u32::from(r.last_trick_winner),
        multiplier: r.multiplier,
        bottom_bonus: r.bottom_bonus,
        opponents_points: r.opponents_points,
        upgrade_side: (match r.upgrade.side {
            Side::Dealer => pb::Side::Dealer,
            Side::Opponents => pb::Side::Opponents,
        }) as i32,
        upgrade_levels: u32::from(r.upgrade.levels),
        levels_after: Some(levels(r.levels_after)),
        next_dealer: r.next_dealer.map(u32::from),
        winner: r.winner.map(u32::from),
    }
}

/// The state of a table as `viewer` may see it (the core's view, nothing else).
pub fn state(table: &Table, viewer: Viewer) -> pb::GameState {
    let v = table.view(viewer);
    let r = &table.record.base;
    let bottom = v.bottom.unwrap_or_default();
    pb::GameState {
        game_id: r.id.clone(),
        seq: v.seq,
        phase: phase(v.phase),
        deal_number: v.deal_number,
        levels: Some(levels(v.levels)),
        level: u32::from(v.level.face()),
        dealer: v.dealer.map(u32::from),
        first_seat: u32::from(v.first_seat),
        trump: suit(v.trump),
        declaration: v.declaration.map(|(seat, card)| pb::SeatCard {
            seat: u32::from(seat),
            card: card.id(),
        }),
        your_seat: v.your_seat.map(u32::from),
        hand: ids(v.hand),
        hand_counts: v.hand_counts.iter().map(|&n| u32::from(n)).collect(),
        stock_count: u32::from(v.stock_count),
        bottom: ids(bottom),
        bottom_visible: v.bottom.is_some(),
        turned: list(&v.turned),
        turn: v.turn.filter(|_| !table.finished()).map(u32::from),
        trick: seat_cards(&v.trick),
        last_trick: seat_cards(&v.last_trick),
        tricks_played: u32::from(v.tricks_played),
        won0: ids(v.won[0]),
        won1: ids(v.won[1]),
        points: v.points.to_vec(),
        legal: ids(v.legal),
        results: v.results.iter().map(deal_result).collect(),
        winner: v.winner.map(u32::from),
        left: table.left().map(u32::from),
        variant: r.variant.clone(),
        variant_version: r.version.clone(),
        players: r.players.clone(),
        bot_seats: table
            .record
            .bot_seats
            .iter()
            .map(|&s| u32::from(s))
            .collect(),
        turn_deadline: table.deadline().map_or(0, millis),
        to_act: table.player_to_act().map(|p| u32::from(p.number())),
        presence: presence(table),
    }
}

fn millis(at: u64) -> i64 {
    i64::try_from(at).unwrap_or(i64::MAX)
}

/// Each seat's connected flag and the end of its reconnect window.
fn presence(table: &Table) -> Vec<pb::SeatPresence> {
    let windows = table.open_windows();
    (0..4u8)
        .map(|seat| {
            let player = Player::new(seat);
            let window = windows.iter().find(|(p, _)| *p == player);
            pb::SeatPresence {
                seat: u32::from(seat),
                connected: !table.is_disconnected(player),
                reconnect_deadline: window.map_or(0, |&(_, at)| millis(at)),
            }
        })
        .collect()
}

fn bottom_cards(seat: Seat, cards: Option<CardSet>) -> pb::BottomCards {
    pb::BottomCards {
        seat: u32::from(seat),
        cards: ids(cards.unwrap_or_default()),
        visible: cards.is_some(),
    }
}

/// An event as `viewer` may see it.
pub fn event(seq: u64, at: u64, e: &TableEvent, viewer: Viewer) -> pb::GameEvent {
    use pb::game_event::Kind;
    let kind = match e.seen_by(viewer) {
        TableEvent::Left {
            seat,
            winner,
            reason,
        } => Kind::SeatLeft(pb::SeatLeft {
            seat: u32::from(seat),
            winner: u32::from(winner),
            reason: match reason {
                LeaveReason::Left => "left",
                LeaveReason::Disconnected => "disconnected",
            }
            .into(),
        }),
        TableEvent::Disconnected { seat, window_ends } => {
            Kind::SeatDisconnected(pb::SeatDisconnected {
                seat: u32::from(seat),
                reconnect_deadline: millis(window_ends),
            })
        }
        TableEvent::Reconnected { seat } => Kind::SeatReconnected(pb::SeatReconnected {
            seat: u32::from(seat),
        }),
        TableEvent::Auto { seat, reason } => Kind::AutoActed(pb::AutoActed {
            seat: u32::from(seat),
            reason: match reason {
                AutoReason::Timeout => "timeout",
                AutoReason::Disconnected => "disconnected",
            }
            .into(),
        }),
        TableEvent::Game(e) => match e {
            Event::DealStarted {
                deal_number,
                dealer,
                first_seat,
                levels: l,
                level,
            } => Kind::DealStarted(pb::DealStarted {
                deal_number,
                dealer: dealer.map(u32::from),
                first_seat: u32::from(first_seat),
                levels: Some(levels(l)),
                level: u32::from(level.face()),
            }),
            Event::CardDealt { seat, card } => Kind::CardDealt(pb::CardDealt {
                seat: u32::from(seat),
                card: card.map(Card::id),
            }),
            Event::Declared {
                seat,
                card,
                trump,
                becomes_dealer,
            } => Kind::Declared(pb::Declared {
                seat: u32::from(seat),
                card: card.id(),
                trump: suit(Some(trump)),
                becomes_dealer,
            }),
            Event::BottomTurned { cards, trump } => Kind::BottomTurned(pb::BottomTurned {
                cards: list(&cards),
                trump: suit(Some(trump)),
            }),
            Event::BottomTaken { seat, cards } => Kind::BottomTaken(bottom_cards(seat, cards)),
            Event::Buried { seat, cards } => Kind::Buried(bottom_cards(seat, cards)),
            Event::Played { seat, card } => Kind::Played(pb::SeatCard {
                seat: u32::from(seat),
                card: card.id(),
            }),
            Event::TrickWon {
                winner,
                cards,
                points,
            } => Kind::TrickWon(pb::TrickWon {
                winner: u32::from(winner),
                cards: list(&cards),
                points,
            }),
            Event::DealEnded(r) => Kind::DealEnded(deal_result(&r)),
            Event::MatchEnded { winner } => Kind::MatchEnded(pb::MatchEnded {
                winner: u32::from(winner),
            }),
        },
    };
    pb::GameEvent {
        seq,
        at_ms: at,
        kind: Some(kind),
    }
}

/// The SubmitAction response for the request at `seq` (accepted at `at`, with `events`), as
/// `player` sees it, with the table's state now.
pub fn submitted(
    table: &Table,
    (seq, at, events): (u64, u64, &[TableEvent]),
    player: u8,
) -> pb::SubmitActionResponse {
    let viewer = Viewer::Player(Player::new(player));
    pb::SubmitActionResponse {
        seq,
        events: events.iter().map(|e| event(seq, at, e, viewer)).collect(),
        state: Some(state(table, viewer)),
    }
}

pub fn hints(h: &Hints) -> pb::GetHintsResponse {
    pb::GetHintsResponse {
        your_turn: h.your_turn,
        legal_cards: ids(h.legal),
        declarable: ids(h.declarable),
        can_deal: h.can_deal,
        must_bury: h.must_bury,
        bury_points_allowed: h.bury_points_allowed,
        phase: phase(h.phase),
        seq: h.seq,
    }
}

/// The replay of a table from its stored log: the record, the seed and every core action with
/// its state hash, the leave and presence steps.
pub fn replay(table: &Table, log: &[Stored], script: String) -> pb::GetReplayResponse {
    use pb::replay_step::Action as A;
    let r = &table.record.base;
    let steps = crate::service::shengji::entry::replay_steps(log)
        .into_iter()
        .map(|s| pb::ReplayStep {
            seq: s.seq,
            at_ms: s.at,
            player: u32::from(s.player),
            action: Some(match s.what {
                ReplayAction::Leave => A::Leave(true),
                ReplayAction::Disconnect => A::Disconnect(true),
                ReplayAction::Reconnect => A::Reconnect(true),
                ReplayAction::Expire => A::Expire(true),
                ReplayAction::Core(Action::Deal) => A::Deal(true),
                ReplayAction::Core(Action::Declare { card, .. }) => {
                    A::Declare(pb::Declare { card: card.id() })
                }
                ReplayAction::Core(Action::Bury { cards, .. }) => {
                    A::Bury(pb::Bury { cards: ids(cards) })
                }
                ReplayAction::Core(Action::Play { card, .. }) => {
                    A::Play(pb::PlayCard { card: card.id() })
                }
            }),
            state_hash: s.hash,
            auto: s.auto,
        })
        .collect();
    let timers = table.timers();
    pb::GetReplayResponse {
        game_id: r.id.clone(),
        engine_version: ENGINE_VERSION.into(),
        variant: r.variant.clone(),
        variant_version: r.version.clone(),
        options: r.options.clone().into_iter().collect(),
        players: r.players.clone(),
        seed: r.seed.clone(),
        deck: table.record.deck.clone().unwrap_or_default(),
        steps,
        results: table.game().results().iter().map(deal_result).collect(),
        winner: table.winner().map(u32::from),
        script,
        created_at: r.created_at,
        turn_ms: timers.turn_ms,
        reconnect_ms: timers.reconnect_ms,
    }
}
