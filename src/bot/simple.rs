//! The two yardstick policies: `basic` (托管 as the engine plays it) and `greedy` (a simple rule
//! bot). Both are deterministic functions of the view. Pure: view, rules and `moves` only.

use super::{Decision, PlayerView};
use crate::moves::{self, Play};

/// An opponent with at most this many cards is "down to a few": `greedy` bombs it.
pub const FEW_CARDS: u8 = 5;

/// The legal plays of the view's seat against the trick, weakest first.
pub fn legal(view: &PlayerView) -> Vec<Play> {
    let top = view.top().map(|(_, h)| h);
    moves::legal_plays(view.hand(), top.as_ref(), view.rules())
}

/// 托管 (the engine's auto-play, `Game::auto_play`): pass whenever passing is legal, otherwise
/// lead the weakest legal play.
pub fn basic(view: &PlayerView) -> Decision {
    if view.top().is_some() {
        return Decision::Pass;
    }
    match moves::weakest_lead(view.hand(), view.rules()) {
        Some(p) => Decision::Play(p),
        None => Decision::Pass,
    }
}

/// Leads its longest non-bomb play (the weakest of the longest), follows with the weakest
/// non-bomb play that beats, passes when its partner holds the trick, and bombs (weakest first)
/// only when an opponent is down to [`FEW_CARDS`] cards.
pub fn greedy(view: &PlayerView) -> Decision {
    let plays = legal(view);
    let Some((top_seat, _)) = view.top() else {
        let longest = plays
            .iter()
            .filter(|p| !p.hand.is_bomb())
            .fold(None::<&Play>, |best, p| match best {
                Some(b) if b.hand.len >= p.hand.len => Some(b),
                _ => Some(p),
            });
        return match longest.or(plays.first()) {
            Some(p) => Decision::Play(*p),
            None => Decision::Pass,
        };
    };
    if Some(top_seat) == view.partner() {
        return Decision::Pass;
    }
    if let Some(p) = plays.iter().find(|p| !p.hand.is_bomb()) {
        return Decision::Play(*p);
    }
    if view.closest_opponent() <= FEW_CARDS {
        if let Some(p) = plays.iter().find(|p| p.hand.is_bomb()) {
            return Decision::Play(*p);
        }
    }
    Decision::Pass
}
