//! A rule bot for 升級 that decides from a player's [`View`] only (never the hidden state), so
//! the same view gives the same decision whatever the other hands hold.
//!
//! Rules, in order: declare a level card when its suit is long (or, once the deal is complete,
//! whenever it holds at least three trumps of that suit); bury short side suits' low non-point
//! cards, never trumps, aces or points while others remain (never points where the table forbids); lead side aces, else the lowest card
//! of its longest side suit (trumps last); follow with the lowest card that takes the trick when
//! an opponent is winning it, feed points to a partner who is winning, and trump in only when the
//! trick carries points (keeping trumps otherwise). Ties between equal choices are broken by a
//! generator seeded with (the bot's seed, the view's sequence number, the seat).
//! Pure: depends on the view and the card order only.

use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::game::{Action, Phase};
use super::order::SEATS;
use super::order::{EffSuit, Order, face_value, points, points_of};
use super::view::View;
use crate::cards::{Card, CardSet, Rank, Suit};
use crate::seat::Seat;

const SUITS: [Suit; 4] = [Suit::Spades, Suit::Hearts, Suit::Clubs, Suit::Diamonds];

/// The rule bot.
#[derive(Clone, Copy, Debug)]
pub struct RuleBot {
    pub seed: u64,
    /// The table's `bury_points` setting (a table rule, not hidden information).
    pub bury_points: bool,
}

impl RuleBot {
    /// A bot for a table that allows burying points (the default).
    pub fn new(seed: u64) -> RuleBot {
        RuleBot {
            seed,
            bury_points: true,
        }
    }

    /// The bot's action for its seat in this view, `None` when it has nothing to do (not its
    /// turn, or nothing worth declaring while dealing).
    pub fn decide(&self, view: &View) -> Option<Action> {
        let seat = view.your_seat?;
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed
                ^ view.seq.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ u64::from(seat.number()) << 56,
        );
        match view.phase {
            Phase::Dealing => declare(view, seat),
            Phase::Exchange if view.turn == Some(seat) => {
                let order = order_of(view)?;
                let cards = bury_choice(view, order, self.bury_points);
                Some(Action::Bury { seat, cards })
            }
            Phase::Playing if view.turn == Some(seat) => {
                let order = order_of(view)?;
                let card = play_choice(view, order, seat, &mut rng)?;
                Some(Action::Play { seat, card })
            }
            _ => None,
        }
    }
}

fn order_of(view: &View) -> Option<Order> {
    Some(Order {
        level: view.level,
        trump: view.trump?,
    })
}

/// The cards a trump suit would give this hand: the jokers, the level cards and the suit.
fn trump_count(hand: CardSet, view: &View, suit: Suit) -> usize {
    Order {
        level: view.level,
        trump: suit,
    }
    .trumps()
    .intersection(hand)
    .len()
}

fn declare(view: &View, seat: Seat) -> Option<Action> {
    if view.declaration.is_some() {
        return None;
    }
    let level = view.level.rank();
    let hand = view.hand;
    let (count, card) = hand
        .of_rank(level)
        .iter()
        .filter_map(|c| c.suit().map(|s| (trump_count(hand, view, s), c)))
        .max_by_key(|&(n, c)| (n, std::cmp::Reverse(c.id())))?;
    // Long enough for the share of the deck dealt so far, or the last chance with three.
    let dealt_done = view.stock_count as usize <= super::order::BOTTOM_SIZE;
    let long = count * 3 >= hand.len() + 3 && count >= 3;
    (long || (dealt_done && count >= 3)).then_some(Action::Declare { seat, card })
}

fn bury_choice(view: &View, order: Order, points_allowed: bool) -> CardSet {
    let hand = view.hand;
    let side_len = |c: Card| match order.effective_suit(c) {
        EffSuit::Side(s) => order.cards_of(EffSuit::Side(s)).intersection(hand).len(),
        EffSuit::Trump => usize::MAX,
    };
    let mut cards: Vec<Card> = hand.iter().collect();
    cards.sort_by_key(|&c| {
        (
            // At least 6 of 18 cards carry no points (the deck has 12 point cards).
            !points_allowed && points(c) > 0,
            order.is_trump(c),
            c.rank() == Rank::ACE,
            points(c) > 0,
            side_len(c),
            face_value(c.rank()),
            c.id(),
        )
    });
    cards.into_iter().take(6).collect()
}

fn pick(cards: &[Card], rng: &mut ChaCha8Rng) -> Option<Card> {
    cards.choose(rng).copied()
}

/// The lowest cards by `worth` (all cards of equal strength and points).
fn lowest(order: Order, set: CardSet) -> Vec<Card> {
    let key = |c: Card| (order.is_trump(c), order.strength(c), points(c));
    let min = set.iter().map(key).min();
    set.iter().filter(|&c| Some(key(c)) == min).collect()
}

fn play_choice(view: &View, order: Order, seat: Seat, rng: &mut ChaCha8Rng) -> Option<Card> {
    let legal = view.legal;
    if legal.is_empty() {
        return None;
    }
    let Some(&(_, lead)) = view.trick.first() else {
        return pick(&lead_choice(view.hand, order), rng);
    };
    let led = order.effective_suit(lead);
    let cards: Vec<Card> = view.trick.iter().map(|&(_, c)| c).collect();
    let w = order.trick_winner(&cards)?;
    let (winner_seat, winning) = *view.trick.get(w)?;
    let partner_winning = Some(winner_seat) == seat.partner(SEATS);
    let last = view.trick.len() == 3;
    let trick_points = points_of(cards.iter().copied().collect());
    let beats: CardSet = legal
        .iter()
        .filter(|&c| order.beats(c, winning, led))
        .collect();
    // A partner winning with a card nobody behind can easily top: feed points.
    let partner_safe =
        partner_winning && (last || order.is_trump(winning) || order.strength(winning) >= 12);
    if partner_safe {
        let feed: Vec<Card> = legal
            .iter()
            .filter(|&c| points(c) > 0 && !order.is_trump(c))
            .collect();
        if let Some(&best) = feed
            .iter()
            .max_by_key(|&&c| (points(c), std::cmp::Reverse(c.id())))
        {
            return Some(best);
        }
        return pick(&lowest(order, legal), rng);
    }
    // Holding the led suit, the legal cards are exactly those of it.
    let following = legal.is_subset(order.cards_of(led));
    let trumping = !following && led != EffSuit::Trump;
    let worth_taking = following || trick_points > 0 || last;
    if !beats.is_empty() && worth_taking && (!trumping || trick_points > 0) {
        return pick(&lowest(order, beats), rng);
    }
    // Not taking it: throw the least useful card, points and trumps kept where possible.
    let keep = |c: Card| points(c) == 0 && !order.is_trump(c);
    let throw: CardSet = legal.iter().filter(|&c| keep(c)).collect();
    let pool = if throw.is_empty() { legal } else { throw };
    pick(&lowest(order, pool), rng)
}

/// Leads: a side ace (from the longest suit holding one), else the lowest card of the longest
/// side suit, else the lowest trump.
fn lead_choice(hand: CardSet, order: Order) -> Vec<Card> {
    let side = |s: Suit| order.cards_of(EffSuit::Side(s)).intersection(hand);
    let mut suits: Vec<Suit> = SUITS
        .iter()
        .copied()
        .filter(|&s| !side(s).is_empty())
        .collect();
    suits.sort_by_key(|&s| std::cmp::Reverse(side(s).len()));
    for &s in &suits {
        let top = side(s).iter().max_by_key(|&c| order.strength(c));
        if let Some(c) = top.filter(|c| c.rank() == Rank::ACE) {
            return vec![c];
        }
    }
    match suits.first() {
        Some(&s) => lowest(order, side(s)),
        None => lowest(order, hand.intersection(order.trumps())),
    }
}
