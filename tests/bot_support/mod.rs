//! Shared helpers of the bot tests: a table whose leader the test fixes, hands from rank
//! notation, and random mid-deal states reached by random legal play.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shuangkou::cards::{CardSet, RankCounts};
use shuangkou::game::hooks::{
    Centi, DealFacts, EscapeFacts, HookError, SeatingDecision, SeatingFacts, Settlement, SumRule,
    TimeoutFacts, VariantHooks,
};
use shuangkou::game::testing::{PlainHooks, random_turn};
use shuangkou::game::{Action, Entry, Game, GameConfig, Phase};
use shuangkou::rules::Rules;
use shuangkou::seat::Seat;

/// Plain hooks where seat 0 always leads and nobody swaps, optionally paying `bomb_bonus` to a
/// team for every bomb it played (taken from the other team): a scoring where bombs are worth
/// points.
pub struct Table {
    pub plain: PlainHooks,
    pub bomb_bonus: Centi,
}

impl Table {
    pub fn new(rules: Rules) -> Table {
        Table {
            plain: PlainHooks::new(rules).led_by(Seat::new(0)),
            bomb_bonus: 0,
        }
    }
}

impl VariantHooks for Table {
    fn rules(&self) -> &Rules {
        self.plain.rules()
    }
    fn partners_see_hands(&self) -> bool {
        self.plain.partners_see_hands()
    }
    fn sum_rule(&self) -> SumRule {
        SumRule::Zero
    }
    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        self.plain.seating(f)
    }
    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        let mut s = self.plain.settle(f)?;
        s.lines.clear();
        let n = f.table.players as usize;
        for b in &f.table.bombs_played {
            for seat in 0..n {
                let same = seat % 2 == b.seat.index() % 2;
                if let Some(v) = s.scores.get_mut(seat) {
                    *v += if same {
                        self.bomb_bonus
                    } else {
                        -self.bomb_bonus
                    };
                }
            }
        }
        Ok(s)
    }
    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.plain.settle_escape(f)
    }
    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.plain.timeout_is_escape(f)
    }
}

pub fn config() -> GameConfig {
    GameConfig::new("test", "test", 1)
}

/// A game with these hands (rank notation, by seat), seat 0 to lead.
pub fn game(hooks: &dyn VariantHooks, hands: &[&str]) -> Game {
    let mut pool = CardSet::FULL;
    let sets: Vec<CardSet> = hands
        .iter()
        .map(|h| {
            let counts: RankCounts = h.parse().expect("hand notation");
            let cards = pool.take(counts).expect("cards available");
            pool = pool.difference(cards);
            cards
        })
        .collect();
    Game::new(config(), hooks, [7; 32], Some(sets), 0)
        .expect("game")
        .0
}

/// The seat to act plays these ranks (or passes with "pass").
pub fn act(game: &mut Game, hooks: &dyn VariantHooks, play: &str) {
    let seat = game.turn().expect("a seat to act");
    let action = if play == "pass" {
        Action::Pass
    } else {
        let counts: RankCounts = play.parse().expect("play notation");
        Action::Play {
            cards: game.hand(seat).take(counts).expect("cards held"),
            declared: None,
        }
    };
    apply_at(game, hooks, seat, action, 0).unwrap_or_else(|e| panic!("seat {seat} {play}: {e}"));
}

/// Applies `action` for the player at `seat`.
pub fn apply_at(
    game: &mut Game,
    hooks: &dyn VariantHooks,
    seat: Seat,
    action: Action,
    at: u64,
) -> Result<(), String> {
    let player = game.seating()[seat];
    game.apply(hooks, Entry { player, action, at })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The card rules the bot tests run under, with whether partners see hands (雙明).
pub fn tables() -> Vec<(Rules, bool)> {
    vec![
        (Rules::CLASSIC, false),
        (Rules::BAIBIAN, false),
        (Rules::JJ, true),
        (Rules::HUOPIN, false),
        (Rules::QIANBIAN, false),
        (Rules::ERREN, false),
    ]
}

/// A random mid-deal state: a fresh deal from `seed`, then a random number of random legal
/// actions (passes when legal with probability 0.4). `None` if the deal ended on the way.
pub fn random_state(hooks: &dyn VariantHooks, seed: u64) -> Option<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = [0u8; 32];
    rng.fill(&mut s);
    let (mut game, _) = Game::new(config(), hooks, s, None, 0).ok()?;
    let steps = rng.random_range(0..120);
    for i in 0..steps {
        let seat = game.turn()?;
        let action = random_turn(&game, seat, &mut rng)?;
        apply_at(&mut game, hooks, seat, action, i).ok()?;
        if game.phase() != Phase::Playing || game.deal_number() > 1 {
            return None;
        }
    }
    Some(game)
}

/// The test seed: `BOT_TEST_SEED` or the default.
pub fn test_seed(default: u64) -> u64 {
    std::env::var("BOT_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
