//! Seeded random facts, coherent with a variant's rules, for the activation self-check of a
//! script (every hook called on them under its sum rule). Depends on the core and `input`'s bomb
//! classification.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::input::bomb_fact;
use crate::cards::{Card, Rank, RankCounts, Suit};
use crate::game::hooks::{
    BombFact, DealFacts, EscapeFacts, EscapeReason, Outcome, PreviousDeal, Seat, SeatingFacts,
    TableFacts, TimeoutFacts,
};
use crate::rules::{ChainBombs, Rules, WildJokers};

/// A generator of random, coherent facts for one variant's rules.
pub struct RandomFacts {
    rng: ChaCha8Rng,
    rules: Rules,
}

impl RandomFacts {
    pub fn new(seed: u64, rules: Rules) -> RandomFacts {
        RandomFacts {
            rng: ChaCha8Rng::seed_from_u64(seed),
            rules,
        }
    }

    fn candidate(&mut self) -> RankCounts {
        let r = &self.rules;
        let rng = &mut self.rng;
        let wild_avail = match r.wild_jokers {
            WildJokers::None => 0u8,
            WildJokers::Big => 2,
            WildJokers::All => 4,
        };
        let pick = rng.random_range(0..100u32);
        let mut rc = RankCounts::EMPTY;
        let add_wilds = |rc: &mut RankCounts, n: u8| {
            for i in 0..n {
                // Big jokers first, then small ones where they are wild.
                let rank = if i < 2 {
                    Rank::BIG_JOKER
                } else {
                    Rank::SMALL_JOKER
                };
                rc.add(rank, 1);
            }
        };
        if pick < 8 {
            return "SJ SJ BJ BJ".parse().unwrap_or(RankCounts::EMPTY);
        }
        if pick < 16 && r.three_jokers {
            let text = if rng.random_bool(0.5) {
                "SJ SJ BJ"
            } else {
                "SJ BJ BJ"
            };
            return text.parse().unwrap_or(RankCounts::EMPTY);
        }
        if pick < 36 && r.chain_bombs != ChainBombs::None {
            let links = rng.random_range(3..=r.max_chain_links.clamp(3, 6));
            let start = rng.random_range(0..=(12 - links));
            let equal = rng.random_range(4..=8u8);
            let mut total = 0u32;
            for i in 0..links {
                let x = if r.chain_bombs == ChainBombs::Unequal {
                    rng.random_range(4..=8u8)
                } else {
                    equal
                };
                total += x as u32;
                if let Some(rank) = Rank::from_index(start + i) {
                    rc.add(rank, x);
                }
            }
            if total > r.hand_size as u32 {
                rc = RankCounts::EMPTY;
            }
            return rc;
        }
        let rank = Rank::from_index(rng.random_range(0..=12u8)).unwrap_or(Rank::THREE);
        let natural = rng.random_range(4..=8u8);
        let wilds = if wild_avail > 0 && rng.random_bool(0.3) {
            rng.random_range(1..=wild_avail)
        } else {
            0
        };
        rc.add(rank, natural);
        add_wilds(&mut rc, wilds);
        rc
    }

    /// A random bomb of `seat` with at most `max_cards` cards.
    pub fn bomb(&mut self, seat: Seat, max_cards: u8) -> Option<BombFact> {
        for _ in 0..64 {
            let cards = self.candidate();
            if cards.is_empty() || cards.total() > max_cards as u32 {
                continue;
            }
            if let Ok(b) = bomb_fact(seat, cards, &self.rules) {
                return Some(b);
            }
        }
        None
    }

    fn bombs_played(&mut self, players: u8) -> Vec<BombFact> {
        let n = self.rng.random_range(0..=6);
        (0..n)
            .filter_map(|_| {
                let seat = Seat::new(self.rng.random_range(0..players));
                self.bomb(seat, self.rules.hand_size)
            })
            .collect()
    }

    fn bombs_in_hand(&mut self, cards_left: &[u8]) -> Vec<Vec<BombFact>> {
        cards_left
            .iter()
            .enumerate()
            .map(|(seat, &left)| {
                let mut out = Vec::new();
                let mut room = left;
                for _ in 0..self.rng.random_range(0..=2) {
                    if room < 3 {
                        break;
                    }
                    if let Some(b) = self.bomb(Seat::at(seat), room) {
                        room -= b.len.min(room);
                        out.push(b);
                    }
                }
                out
            })
            .collect()
    }

    /// Random facts of a deal that ended normally.
    pub fn deal(&mut self) -> DealFacts {
        let players = self.rules.players;
        let hand = self.rules.hand_size.max(1);
        let (outcome, places, cards_left) = if players == 2 {
            let winner = self.rng.random_range(0..2u8);
            let loser = 1 - winner;
            let mut left = vec![0u8; 2];
            left[loser as usize] = self.rng.random_range(1..=hand);
            let outcome = Outcome::from_loser_cards(left[loser as usize], &self.rules);
            (outcome, Seat::list(&[winner, loser]), left)
        } else {
            let first = self.rng.random_range(0..4u8);
            let partner = (first + 2) % 4;
            let (a, b) = ((first + 1) % 4, (first + 3) % 4);
            let (a, b) = if self.rng.random_bool(0.5) {
                (a, b)
            } else {
                (b, a)
            };
            let outcome = match self.rng.random_range(0..3) {
                0 => Outcome::Double,
                1 => Outcome::Single,
                _ => Outcome::Draw,
            };
            let mut places = match outcome {
                Outcome::Double => vec![first, partner, a, b],
                Outcome::Single => vec![first, a, partner, b],
                Outcome::Draw => vec![first, a, b, partner],
            };
            let out = if outcome == Outcome::Double { 2 } else { 3 };
            let mut left = vec![0u8; 4];
            for &s in &places[out..] {
                left[s as usize] = self.rng.random_range(1..=hand);
            }
            places[out..].sort_by_key(|s| (left[*s as usize], *s));
            (outcome, Seat::list(&places), left)
        };
        DealFacts {
            // Fields in the order the generator draws them.
            table: TableFacts {
                players,
                deal_number: self.rng.random_range(1..=8),
                bombs_played: self.bombs_played(players),
                bombs_in_hand: self.bombs_in_hand(&cards_left),
                places,
                cards_left,
            },
            outcome,
        }
    }

    /// Random facts of an escape.
    pub fn escape(&mut self) -> EscapeFacts {
        let players = self.rules.players;
        let hand = self.rules.hand_size.max(1);
        let escaper = self.rng.random_range(0..players);
        let mut places = Vec::new();
        if players == 4 && self.rng.random_bool(0.5) {
            places.push((escaper + self.rng.random_range(1..4u8)) % 4);
        }
        let cards_left: Vec<u8> = (0..players)
            .map(|s| {
                if places.contains(&s) {
                    0
                } else {
                    self.rng.random_range(1..=hand)
                }
            })
            .collect();
        let reason = match self.rng.random_range(0..3) {
            0 => EscapeReason::Left,
            1 => EscapeReason::Disconnected,
            _ => EscapeReason::Timeouts,
        };
        EscapeFacts {
            // Fields in the order the generator draws them.
            table: TableFacts {
                players,
                deal_number: self.rng.random_range(1..=8),
                places: Seat::list(&places),
                bombs_played: self.bombs_played(players),
                bombs_in_hand: self.bombs_in_hand(&cards_left),
                cards_left,
            },
            escaper: Seat::new(escaper),
            reason,
        }
    }

    /// Random seating facts.
    pub fn seating(&mut self) -> SeatingFacts {
        let players = self.rules.players;
        let shown = Card::new(self.rng.random_range(0..108u32)).unwrap_or(Card::from_parts(
            0,
            Suit::Spades,
            Rank::THREE,
        ));
        let holder = self.rng.random_range(0..players);
        let twin = if players == 2 && self.rng.random_bool(0.5) {
            None
        } else {
            Some(self.rng.random_range(0..players))
        };
        let deal_number = self.rng.random_range(1..=8u32);
        let previous = (deal_number > 1).then(|| {
            let escaped = self
                .rng
                .random_bool(0.2)
                .then(|| Seat::new(self.rng.random_range(0..players)));
            let mut places: Vec<Seat> = Seat::all(players).collect();
            let rot = self.rng.random_range(0..players);
            places.rotate_left(rot as usize);
            if players == 4 && self.rng.random_bool(0.5) {
                places.swap(1, 2);
            }
            let outcome = if escaped.is_some() {
                None
            } else if players == 4 {
                Outcome::from_places(&places)
            } else {
                Some(match self.rng.random_range(0..3) {
                    0 => Outcome::Double,
                    1 => Outcome::Single,
                    _ => Outcome::Draw,
                })
            };
            PreviousDeal {
                outcome,
                places,
                escaped,
            }
        });
        SeatingFacts {
            players,
            deal_number,
            shown_card: shown,
            shown_holders: [Some(Seat::new(holder)), twin.map(Seat::new)],
            previous,
            random: self.rng.random(),
        }
    }

    /// Random timeout facts.
    pub fn timeout(&mut self) -> TimeoutFacts {
        TimeoutFacts {
            seat: Seat::new(self.rng.random_range(0..self.rules.players)),
            consecutive_timeouts: self.rng.random_range(1..=6),
            disconnected: self.rng.random_bool(0.3),
        }
    }
}
