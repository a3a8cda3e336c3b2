//! Option sets drawn from a variant's whole option schema, bounds included: every option at its
//! maximum, every option at its minimum, then seeded random sets where each value is its
//! minimum, its maximum or anything between (lists of any allowed length). The worst-case check
//! (`check::worst_cases`) and the long-game tests settle the heaviest deals under them. Depends
//! only on [`options`](super::options).

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::options::{OptionKind, OptionSpec, OptionValue};

/// Which value of a range to take.
#[derive(Clone, Copy)]
enum Pick {
    Min,
    Max,
    Random,
}

fn int(rng: &mut ChaCha8Rng, pick: Pick, min: i64, max: i64) -> i64 {
    match pick {
        Pick::Min => min,
        Pick::Max => max,
        Pick::Random => match rng.random_range(0..3) {
            0 => min,
            1 => max,
            _ => rng.random_range(min..=max),
        },
    }
}

fn value(rng: &mut ChaCha8Rng, pick: Pick, kind: &OptionKind) -> OptionValue {
    match kind {
        OptionKind::Int { min, max, .. } => OptionValue::Int(int(rng, pick, *min, *max)),
        OptionKind::Float { min, max, .. } => OptionValue::Float(match pick {
            Pick::Min => *min,
            Pick::Max => *max,
            Pick::Random => match rng.random_range(0..3) {
                0 => *min,
                1 => *max,
                _ => rng.random_range(*min..=*max),
            },
        }),
        OptionKind::Bool { .. } => OptionValue::Bool(match pick {
            Pick::Min => false,
            Pick::Max => true,
            Pick::Random => rng.random_bool(0.5),
        }),
        OptionKind::Choice { choices, default } => OptionValue::Text(match pick {
            Pick::Min => choices.first().unwrap_or(default).clone(),
            Pick::Max => choices.last().unwrap_or(default).clone(),
            Pick::Random => choices
                .get(rng.random_range(0..choices.len().max(1)))
                .unwrap_or(default)
                .clone(),
        }),
        OptionKind::IntList {
            min,
            max,
            min_len,
            max_len,
            ..
        } => {
            let len = int(rng, pick, *min_len as i64, *max_len as i64) as usize;
            OptionValue::IntList((0..len).map(|_| int(rng, pick, *min, *max)).collect())
        }
    }
}

/// `2 + random` option sets for `specs`: all maxima, all minima, then `random` seeded draws.
pub fn option_sets(
    specs: &[OptionSpec],
    seed: u64,
    random: usize,
) -> Vec<BTreeMap<String, OptionValue>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let picks = [Pick::Max, Pick::Min]
        .into_iter()
        .chain(std::iter::repeat_n(Pick::Random, random));
    picks
        .map(|pick| {
            specs
                .iter()
                .map(|s| (s.name.clone(), value(&mut rng, pick, &s.kind)))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sets_are_the_bounds_and_every_value_is_legal() {
        let specs = vec![
            OptionSpec {
                name: "n".into(),
                kind: OptionKind::Int {
                    default: 4,
                    min: 0,
                    max: 100,
                },
                doc: String::new(),
            },
            OptionSpec {
                name: "table".into(),
                kind: OptionKind::IntList {
                    default: vec![2],
                    min: 1,
                    max: 9,
                    min_len: 1,
                    max_len: 3,
                },
                doc: String::new(),
            },
        ];
        let sets = option_sets(&specs, 7, 50);
        assert_eq!(sets.len(), 52);
        assert_eq!(sets[0]["n"], OptionValue::Int(100));
        assert_eq!(sets[0]["table"], OptionValue::IntList(vec![9, 9, 9]));
        assert_eq!(sets[1]["n"], OptionValue::Int(0));
        assert_eq!(sets[1]["table"], OptionValue::IntList(vec![1]));
        for set in &sets {
            for spec in &specs {
                spec.check(set[&spec.name].clone()).unwrap();
            }
        }
    }
}
