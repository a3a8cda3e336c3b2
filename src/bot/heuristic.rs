//! The `heuristic` policy: plans the hand, plays with the partner, keeps bombs for when they
//! matter, fights 雙扣 against its team and prices bombs by the variant's scoring.
//!
//! The rules, in the order they apply:
//! 1. go out when one play empties the hand;
//! 2. leading: feed a partner who is close to going out (雙明: a play the partner's shown hand can
//!    beat and go out over; otherwise its weakest single or pair) — this is also how it plays the
//!    lead it gets by 接風; otherwise lead the play that leaves the cheapest hand (fewest plays,
//!    bombs kept, wild jokers kept, weak cards first), never a play an opponent close to going
//!    out could go out over unless nothing else is left, and lead plays nobody can beat (記牌:
//!    from the cards still out) when the hand is nearly done;
//! 3. following its partner: pass, unless the opponents are close to going out and the
//!    partner's play can still be beaten;
//! 4. following an opponent: the non-bomb that leaves the cheapest hand, unless it breaks the
//!    hand and nobody is close; a bomb (the one that breaks the least, weakest first) only when it
//!    matters: the trick holder is close to going out, the opponents threaten 雙扣 (one of them
//!    is out and neither of us), the bomb wins the lead for a hand that is nearly done, the
//!    variant pays for playing it, or the style bombs at every chance.
//!
//! Pure: view, rules, `moves`, `plan` and the scoring profile; randomness only through the
//! seeded RNG (careless plays, memory and support lapses of a style).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::plan::{is_boss, leftover_score, plan_cost};
use super::scoring::ScoringProfile;
use super::simple::legal;
use super::{Decision, Params, PlayerView};
use crate::cards::RankCounts;
use crate::moves::{self, Play};
use crate::seat::Seat;

/// A partner with at most this many cards is fed.
const FEED_AT: u8 = 4;
/// Opponents with at most this many cards are "close to going out".
const CLOSE: u8 = 2;
/// A bomb worth at least this much (hundredths) is played for its points alone.
const WORTH_PLAYING: i64 = 200;

/// What one decision may use, resolved once from the style and the RNG.
struct Mind<'a> {
    view: &'a PlayerView,
    params: &'a Params,
    profile: &'a ScoringProfile,
    unseen: RankCounts,
    supports: bool,
}

/// The heuristic decision for the view's seat.
pub fn decide(
    view: &PlayerView,
    params: &Params,
    profile: &ScoringProfile,
    rng: &mut ChaCha8Rng,
) -> Decision {
    let plays = legal(view);
    let can_pass = view.top().is_some();
    if params.noise > 0.0 && rng.random::<f32>() < params.noise {
        let k = plays.len() + usize::from(can_pass);
        if k > 0 {
            let i = rng.random_range(0..k);
            return plays.get(i).map_or(Decision::Pass, |p| Decision::Play(*p));
        }
    }
    let remembers = params.memory >= 1.0 || rng.random::<f32>() < params.memory;
    let supports = params.support >= 1.0 || rng.random::<f32>() < params.support;
    let unseen = if remembers {
        view.unseen()
    } else {
        // Without 記牌 every card it does not hold (or see in a shown hand) might be out.
        RankCounts::FULL
            .minus(view.hand().plus(view.partner_hand().unwrap_or_default()))
            .unwrap_or_default()
    };
    let mind = Mind {
        view,
        params,
        profile,
        unseen,
        supports,
    };
    mind.choose(&plays)
}

/// The candidate decisions a search compares: the heuristic's own choice first, then a pass
/// where legal, the non-bombs that leave the cheapest hands and the weakest bomb; at most `k`.
pub fn shortlist(
    view: &PlayerView,
    params: &Params,
    profile: &ScoringProfile,
    k: usize,
) -> Vec<Decision> {
    let plays = legal(view);
    let mind = Mind {
        view,
        params,
        profile,
        unseen: view.unseen(),
        supports: true,
    };
    let mut out = vec![mind.choose(&plays)];
    let push = |d: Decision, out: &mut Vec<Decision>| {
        if out.len() < k && !out.contains(&d) {
            out.push(d);
        }
    };
    if view.top().is_some() {
        push(Decision::Pass, &mut out);
    }
    let mut ranked: Vec<(i32, Play)> = plays
        .iter()
        .filter(|p| !p.hand.is_bomb())
        .map(|p| (mind.shed_score(p), *p))
        .collect();
    ranked.sort_by_key(|(s, _)| *s);
    let bomb = plays.iter().find(|p| p.hand.is_bomb()).copied();
    for (_, p) in ranked.iter().take(k.saturating_sub(2)) {
        push(Decision::Play(*p), &mut out);
    }
    if let Some(b) = bomb {
        push(Decision::Play(b), &mut out);
    }
    for (_, p) in ranked.iter() {
        push(Decision::Play(*p), &mut out);
    }
    out
}

impl Mind<'_> {
    fn choose(&self, plays: &[Play]) -> Decision {
        let hand = self.view.hand();
        if let Some(p) = plays.iter().find(|p| p.cards == hand) {
            return Decision::Play(*p);
        }
        match self.view.top() {
            None => self.lead(plays),
            Some((seat, top)) => self.follow(plays, seat, &top),
        }
    }

    fn after(&self, p: &Play) -> RankCounts {
        self.view.hand().minus(p.cards).unwrap_or_default()
    }

    /// Lower is better: the hand left, wild jokers kept, weak cards first.
    fn shed_score(&self, p: &Play) -> i32 {
        let rules = self.view.rules();
        leftover_score(self.after(p), rules) * 4
            + p.hand.wilds.len() as i32 * 12
            + p.hand.key.index() as i32 * 3
    }

    /// Opponents threaten 雙扣: one of them is out, neither this seat nor its partner is.
    fn double_threat(&self) -> bool {
        let v = self.view;
        let Some(partner) = v.partner() else {
            return false;
        };
        v.out().iter().any(|&s| s != partner && s != v.seat()) && !v.is_out(partner)
    }

    fn lead(&self, plays: &[Play]) -> Decision {
        let v = self.view;
        let rules = v.rules();
        let non_bombs: Vec<&Play> = plays.iter().filter(|p| !p.hand.is_bomb()).collect();
        if let Some(fed) = self.feed(&non_bombs) {
            return Decision::Play(*fed);
        }
        let close = v.closest_opponent();
        let nearly_done = plan_cost(v.hand(), rules) <= 6;
        let best = non_bombs.iter().min_by_key(|p| {
            let mut s = self.shed_score(p);
            let boss = is_boss(&p.hand, self.unseen, rules);
            // Do not hand an opponent who is close its last play.
            let len = p.hand.len;
            if (len == close || (close <= CLOSE && len <= close)) && !boss {
                s += 200;
            }
            if nearly_done && boss {
                s -= 30;
            }
            s
        });
        match best.copied().or(plays.first()) {
            Some(p) => Decision::Play(*p),
            None => Decision::Pass,
        }
    }

    /// A lead for a partner close to going out, if the style supports the partner.
    fn feed<'p>(&self, non_bombs: &[&'p Play]) -> Option<&'p Play> {
        let v = self.view;
        let partner = v.partner().filter(|&p| v.active(p))?;
        let left = v.count(partner);
        if !self.supports || left > FEED_AT || v.closest_opponent() < left {
            return None;
        }
        let rules = v.rules();
        if let Some(ph) = v.partner_hand() {
            // 雙明: a lead the partner can go out over, else one it can beat at all.
            let over = |l: &Play| moves::legal_plays(ph, Some(&l.hand), rules);
            let out = non_bombs
                .iter()
                .find(|l| l.hand.len == left && over(l).iter().any(|q| q.cards == ph));
            return out
                .or_else(|| {
                    non_bombs
                        .iter()
                        .find(|l| l.hand.len <= left && !over(l).is_empty())
                })
                .copied();
        }
        let want = if left == 2 { 2 } else { 1 };
        non_bombs
            .iter()
            .find(|l| l.hand.len == want && l.hand.wilds.is_empty())
            .or_else(|| non_bombs.iter().find(|l| l.hand.len == 1))
            .copied()
    }

    fn follow(&self, plays: &[Play], top_seat: Seat, top: &crate::hand::Hand) -> Decision {
        let v = self.view;
        let rules = v.rules();
        let close = v.closest_opponent();
        let partner_holds = Some(top_seat) == v.partner();
        let non_bomb = plays
            .iter()
            .filter(|p| !p.hand.is_bomb())
            .min_by_key(|p| self.shed_score(p));
        if partner_holds && self.supports {
            if close <= CLOSE && !is_boss(top, self.unseen, rules) {
                let strongest = plays.iter().rev().find(|p| !p.hand.is_bomb());
                if let Some(p) = strongest {
                    return Decision::Play(*p);
                }
            }
            return Decision::Pass;
        }
        let now = leftover_score(v.hand(), rules);
        if let Some(p) = non_bomb {
            let worsens = leftover_score(self.after(p), rules) - now;
            let leeway = (self.params.aggression * 12.0) as i32;
            let urgent = close <= self.params.bomb_threshold || self.double_threat();
            if worsens <= leeway || urgent {
                return Decision::Play(*p);
            }
            return Decision::Pass;
        }
        if partner_holds {
            return Decision::Pass;
        }
        // Bombs: the one that breaks the hand least, weakest first among equals.
        let bomb = plays
            .iter()
            .enumerate()
            .filter(|(_, p)| p.hand.is_bomb())
            .min_by_key(|(i, p)| (leftover_score(self.after(p), rules), *i))
            .map(|(_, p)| p);
        let Some(b) = bomb else {
            return Decision::Pass;
        };
        let holder_close = v.count(top_seat) <= self.params.bomb_threshold;
        let wins_the_hand = plan_cost(self.after(b), rules) <= 4;
        let pays = self.profile.bomb_worth(&b.hand) >= WORTH_PLAYING;
        if holder_close || self.double_threat() || wins_the_hand || self.params.bomb_eager || pays {
            Decision::Play(*b)
        } else {
            Decision::Pass
        }
    }
}
