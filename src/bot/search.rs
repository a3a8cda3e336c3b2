//! The `search` policy: determinized Monte Carlo search (perfect-information Monte Carlo over
//! sampled worlds).
//!
//! For a decision with more than one candidate (the heuristic's shortlist: its own choice, a
//! pass, the plays that leave the cheapest hands, the weakest bomb), it samples worlds consistent
//! with the view ([`World::sample`]), plays each candidate in the same world (common random
//! numbers: the same hidden hands and the same playout seed for every candidate), plays the deal
//! out with the heuristic at every seat, settles it with the variant's own settlement and keeps
//! the candidate with the best mean score for its seat. The budget is a number of playouts and an
//! optional time cap; without a cap the decision is a pure function of the view and the seed.
//! Pure: no clock unless a time cap is given (`std::time::Instant`, the only impure input).

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::scoring::{ScoringProfile, deal_score};
use super::world::World;
use super::{Budget, Decision, Params, PlayerView, heuristic};
use crate::game::hooks::VariantHooks;

/// Most candidates compared in one decision.
pub const MAX_CANDIDATES: usize = 5;

/// The search decision for the view's seat.
pub fn decide(
    view: &PlayerView,
    params: &Params,
    profile: &ScoringProfile,
    budget: Budget,
    scoring: &dyn VariantHooks,
    rng: &mut ChaCha8Rng,
) -> Decision {
    let candidates = heuristic::shortlist(view, params, profile, MAX_CANDIDATES);
    let Some(first) = candidates.first().copied() else {
        return Decision::Pass;
    };
    if candidates.len() == 1 || budget.playouts == 0 {
        return first;
    }
    let start = budget.time_cap.map(|cap| (Instant::now(), cap));
    // What the variant pays for bombs left in hand (a failing hook scores those as the engine
    // would fail to: the playout's score is then 0 anyway).
    let worth = scoring.in_hand_worth().ok().flatten();
    let me = view.seat();
    let mut sums = vec![0i64; candidates.len()];
    let mut used = 0u32;
    let mut worlds = 0u32;
    while used + candidates.len() as u32 <= budget.playouts.max(candidates.len() as u32) {
        if worlds > 0 {
            if let Some((t0, cap)) = start {
                if t0.elapsed() >= cap {
                    break;
                }
            }
        }
        let world = World::sample(view, rng);
        let playout_seed: u64 = rng.random();
        for (i, c) in candidates.iter().enumerate() {
            let mut w = world.clone();
            let mut prng = ChaCha8Rng::seed_from_u64(playout_seed);
            let finished = w.apply(*c)
                || w.play_out(|v| heuristic::decide(v, &Params::STANDARD, profile, &mut prng));
            let score = if finished {
                w.facts(worth.as_deref())
                    .and_then(|f| deal_score(scoring, &f, me))
                    .unwrap_or(0)
            } else {
                0
            };
            sums[i] += score;
        }
        used += candidates.len() as u32;
        worlds += 1;
    }
    // Ties keep the earlier candidate (the heuristic's own choice first).
    let mut best = 0;
    for i in 1..sums.len() {
        if sums[i] > sums[best] {
            best = i;
        }
    }
    candidates[best]
}
