//! Hand-built 升級 tables for the tests: cards by name, decks laid out so that each seat gets the
//! named cards, and helpers that deal and bury.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{Card, CardSet, Rank, Suit};
use shuangkou::seat::Seat;
use shuangkou::shengji::order::ONE_DECK;
use shuangkou::shengji::{
    Action, EffSuit, Event, Game, Level, Phase, Setup, ShengjiHooks, Start, Viewer,
};

/// A card by name: rank then suit letter (`AS`, `TH`, `2D`), or `SJ` / `BJ`.
pub fn c(name: &str) -> Card {
    let up = name.to_ascii_uppercase();
    if up == "SJ" || up == "BJ" {
        let rank: Rank = up.parse().unwrap();
        return Card::from_parts(0, Suit::Spades, rank);
    }
    let (rank, suit) = up.split_at(up.len() - 1);
    let suit = match suit {
        "S" => Suit::Spades,
        "H" => Suit::Hearts,
        "C" => Suit::Clubs,
        "D" => Suit::Diamonds,
        other => panic!("bad suit {other} in {name}"),
    };
    Card::from_parts(0, suit, rank.parse().unwrap())
}

/// Cards by names separated by spaces.
pub fn cs(names: &str) -> Vec<Card> {
    names.split_whitespace().map(c).collect()
}

pub fn set(names: &str) -> CardSet {
    cs(names).into_iter().collect()
}

pub fn level(face: u8) -> Level {
    Level::new(face).unwrap()
}

/// A deck in dealing order from the first seat `first`: seat `s` gets `hands[s]` (in that order,
/// then filled up to 12 with the lowest unnamed cards), the bottom is `bottom` (filled up to 6).
pub fn deck(first: u8, hands: [&str; 4], bottom: &str) -> Vec<Card> {
    let mut named: Vec<Vec<Card>> = hands.iter().map(|h| cs(h)).collect();
    let mut bottom = cs(bottom);
    let used: CardSet = named
        .iter()
        .flatten()
        .chain(bottom.iter())
        .copied()
        .collect();
    assert_eq!(
        used.len(),
        named.iter().map(Vec::len).sum::<usize>() + bottom.len(),
        "a card is named twice"
    );
    let mut rest = ONE_DECK.difference(used).iter();
    for h in &mut named {
        while h.len() < 12 {
            h.push(rest.next().expect("enough cards"));
        }
    }
    while bottom.len() < 6 {
        bottom.push(rest.next().expect("enough cards"));
    }
    assert!(rest.next().is_none() && named.iter().all(|h| h.len() == 12));
    let mut order = Vec::with_capacity(54);
    for i in 0..48usize {
        let seat = (first as usize + i) % 4;
        order.push(named[seat][i / 4]);
    }
    order.extend(bottom);
    order
}

/// A match under way: `dealer` deals at `levels`, with the hand-built deck.
pub fn started(dealer: u8, levels: [u8; 2], hands: [&str; 4], bottom: &str) -> Game {
    let setup = Setup {
        seed: [1; 32],
        deck: Some(deck(dealer, hands, bottom)),
        start: Some(Start {
            dealer: Seat::new(dealer),
            levels: [level(levels[0]), level(levels[1])],
        }),
    };
    Game::new(setup).unwrap().0
}

/// The first seat a new match from this seed deals to (fixed by the seed, not by the deck).
pub fn seed_seat(seed: [u8; 32]) -> u8 {
    Game::new(Setup::seeded(seed))
        .unwrap()
        .0
        .first_seat()
        .number()
}

/// A new match (deal 1 contested) with the hand-built deck.
pub fn contested(seed: [u8; 32], hands: [&str; 4], bottom: &str) -> Game {
    let first = seed_seat(seed);
    let setup = Setup {
        seed,
        deck: Some(deck(first, hands, bottom)),
        start: None,
    };
    Game::new(setup).unwrap().0
}

/// Applies an action that must be accepted.
pub fn ok(game: &mut Game, hooks: &dyn ShengjiHooks, action: Action) -> Vec<Event> {
    game.apply(hooks, action)
        .unwrap_or_else(|e| panic!("{action:?} rejected: {e}"))
}

/// Deals every card, with `declare` made after the 48th card, and closes the deal.
pub fn deal_all(game: &mut Game, hooks: &dyn ShengjiHooks, declare: Option<&str>) -> Vec<Event> {
    let mut events = Vec::new();
    for _ in 0..48 {
        events.extend(ok(game, hooks, Action::Deal));
    }
    if let Some(name) = declare {
        let card = c(name);
        let seat = Seat::all(4).find(|&s| game.hand(s).contains(card)).unwrap();
        events.extend(ok(game, hooks, Action::Declare { seat, card }));
    }
    events.extend(ok(game, hooks, Action::Deal));
    events
}

/// Plays the rest of the deal, each seat playing its lowest-id legal card.
pub fn play_out(game: &mut Game, hooks: &dyn ShengjiHooks) -> Vec<Event> {
    let deal = game.deal_number();
    let mut events = Vec::new();
    while game.deal_number() == deal && game.winner().is_none() {
        let seat = game.turn().unwrap();
        let card = game.legal_cards(seat).iter().next().unwrap();
        events.extend(ok(game, hooks, Action::Play { seat, card }));
    }
    events
}

/// The cards `viewer` may see now, from the rules: its hand, the cards played, the turned-over
/// bottom, the shown card, and for the dealer after taking it the bottom and what it buried.
pub fn visible(g: &Game, viewer: Viewer) -> CardSet {
    let mut v = g.played();
    v = v.union(g.turned().iter().copied().collect());
    if let Some((_, card)) = g.declaration() {
        v.insert(card);
    }
    if let Viewer::Player(p) = viewer {
        let s = Seat::new(p.number());
        v = v.union(g.hand(s));
        let taken = matches!(g.phase(), Phase::Exchange | Phase::Playing);
        if taken && g.dealer() == Some(s) {
            let original: CardSet = g.deck()[48..].iter().copied().collect();
            v = v.union(original).union(g.bottom());
        }
    }
    v
}

/// A random permutation of the hidden cards, within effective suits once trump is fixed.
pub fn permute(g: &Game, hidden: CardSet, rng: &mut ChaCha8Rng) -> HashMap<Card, Card> {
    let class = |c: Card| match g.order() {
        Some(o) => match o.effective_suit(c) {
            EffSuit::Trump => 4,
            EffSuit::Side(s) => s.index(),
        },
        None => 0,
    };
    let mut map: HashMap<Card, Card> = ONE_DECK.iter().map(|c| (c, c)).collect();
    for k in 0..5 {
        let from: Vec<Card> = hidden.iter().filter(|&c| class(c) == k).collect();
        let mut to = from.clone();
        to.shuffle(rng);
        for (a, b) in from.into_iter().zip(to) {
            map.insert(a, b);
        }
    }
    map
}

/// An action with its cards renamed by the permutation.
pub fn map_action(a: Action, m: &HashMap<Card, Card>) -> Action {
    let f = |c: Card| m[&c];
    match a {
        Action::Deal => Action::Deal,
        Action::Declare { seat, card } => Action::Declare {
            seat,
            card: f(card),
        },
        Action::Play { seat, card } => Action::Play {
            seat,
            card: f(card),
        },
        Action::Bury { seat, cards } => Action::Bury {
            seat,
            cards: cards.iter().map(f).collect(),
        },
    }
}

/// A random game from `seed` cut after `cut` actions of deal 1 (before the last trick): the game,
/// its actions, and the events of its start and of each action.
pub fn random_prefix(
    seed: [u8; 32],
    cut: usize,
    rng: &mut ChaCha8Rng,
) -> (Game, Vec<Action>, Vec<Vec<Event>>) {
    let hooks = shuangkou::shengji::StandardHooks::default();
    let (mut g, start) = Game::new(Setup::seeded(seed)).unwrap();
    let mut log = Vec::new();
    let mut events = vec![start];
    while log.len() < cut {
        let action = shuangkou::shengji::sim::random_action(&g, &hooks, rng, 0.08).unwrap();
        if matches!(action, Action::Play { .. }) && g.tricks_played() == 11 {
            break;
        }
        events.push(g.apply(&hooks, action).unwrap());
        log.push(action);
    }
    (g, log, events)
}

/// The same actions replayed on the deck renamed by `map`: the game and the events (start first).
pub fn permuted_replay(
    a: &Game,
    log: &[Action],
    map: &HashMap<Card, Card>,
) -> (Game, Vec<Vec<Event>>) {
    let hooks = shuangkou::shengji::StandardHooks::default();
    let setup = Setup {
        deck: Some(a.deck().iter().map(|c| map[c]).collect()),
        ..a.setup().clone()
    };
    let (mut b, start) = Game::new(setup).unwrap();
    let mut events = vec![start];
    for (i, action) in log.iter().enumerate() {
        let ev = b
            .apply(&hooks, map_action(*action, map))
            .unwrap_or_else(|e| panic!("step {} rejected on the permuted deck: {e}", i + 1));
        events.push(ev);
    }
    (b, events)
}
