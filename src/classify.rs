//! Classification: what combination (牌型) a multiset of cards is, with wild jokers.
//!
//! `classify` gives every interpretation of a play, `resolve` picks the one it is taken as.
//! Implements docs/RULES.md §2 (combination types), §3 (wild cards) and §5 (star levels) under the
//! typed `Rules` settings. Pure and allocation-free; depends only on `cards`, `rules`, `hand` (the
//! values it builds) and `compare` (to pick the strongest chain-bomb shape).
//!
//! The rules it follows:
//! - a lone joker is itself; a play made only of jokers is a joker play (pair of jokers, 三王,
//!   天王), never a wild-substituted rank;
//! - mixed with natural cards, each wild joker becomes whatever rank the combination needs
//!   (3..2 for pairs, triples and bombs; 3..A for straights and chains);
//! - of the interpretations of one type and length, the strongest is taken (取大);
//! - cards that fit several types return one interpretation per type, bombs first; the caller
//!   picks (see `resolve`).

use arrayvec::ArrayVec;

use crate::cards::{RANK_COUNT, Rank, RankCounts, TOP_SEQ, TOP_SET};
use crate::compare;
use crate::hand::{Declared, Fill, Hand, HandType, Interpretations, PlayError, check_size};
use crate::rules::{ChainBombs, Rules, TianWang, UnequalChainLevel};

/// Classifies a play: every interpretation it has under `rules` (empty if it is no combination).
///
/// Bomb interpretations come first, the strongest first; non-bombs follow in type order. A play
/// with more cards than the hand size is no combination (`check_size` says why).
pub fn classify(cards: RankCounts, rules: &Rules) -> Interpretations {
    let mut out = Interpretations::new();
    let n = cards.total() as u8;
    if n == 0 || !cards.is_subset(RankCounts::FULL) || check_size(cards, rules).is_err() {
        return out;
    }
    let sj = cards.get(Rank::SMALL_JOKER);
    let bj = cards.get(Rank::BIG_JOKER);
    let stars = rules.has_stars();

    // Joker-only plays are joker plays (docs/rules/RULES.md A2, §3.2 items 1–2).
    if sj + bj == n {
        match n {
            1 => out.push(Hand::set(
                HandType::Single,
                if sj == 1 {
                    Rank::SMALL_JOKER
                } else {
                    Rank::BIG_JOKER
                },
                None,
                Fill::natural(cards),
            )),
            2 if sj == 2 || bj == 2 => {
                let r = if sj == 2 {
                    Rank::SMALL_JOKER
                } else {
                    Rank::BIG_JOKER
                };
                out.push(Hand::set(HandType::Pair, r, None, Fill::natural(cards)));
            }
            2 if rules.is_wild(Rank::BIG_JOKER) && rules.big_joker_as_small => {
                // A wild big joker stands for the small joker (§8 #19).
                let nat = RankCounts::EMPTY.with(Rank::SMALL_JOKER, 1);
                let target = RankCounts::EMPTY.with(Rank::SMALL_JOKER, 2);
                out.push(Hand::set(
                    HandType::Pair,
                    Rank::SMALL_JOKER,
                    None,
                    Fill::wild(nat, target, 0, 1),
                ));
            }
            3 if rules.three_jokers => out.push(Hand::set(
                HandType::ThreeJokers,
                Rank::BIG_JOKER,
                stars.then_some(6),
                Fill::natural(cards),
            )),
            4 => {
                let level = match rules.tianwang {
                    TianWang::MaxOf8 => 8,
                    _ => 7,
                };
                out.push(Hand::set(
                    HandType::FourJokers,
                    Rank::BIG_JOKER,
                    stars.then_some(level),
                    Fill::natural(cards),
                ));
            }
            _ => {}
        }
        return out;
    }

    let (nat, ws, wb) = rules.split_wilds(cards);
    if n == 1 {
        out.push(Hand::set(
            HandType::Single,
            first_rank(nat),
            None,
            Fill::natural(nat),
        ));
        return out;
    }

    // Shape of the natural cards.
    let mut lo = usize::MAX;
    let mut hi = 0usize;
    let mut distinct = 0u8;
    let mut max_count = 0u8;
    let mut naturals = 0u8;
    for i in 0..RANK_COUNT {
        let c = nat.get(Rank::from_index(i as u8).unwrap_or(Rank::THREE));
        if c > 0 {
            lo = lo.min(i);
            hi = hi.max(i);
            distinct += 1;
            max_count = max_count.max(c);
            naturals += c;
        }
    }

    // Bombs first: a single-rank bomb, then chain bombs (strongest shape).
    if distinct == 1 && hi <= TOP_SET && n >= 4 {
        let r = Rank::at(hi);
        let target = RankCounts::EMPTY.with(r, n);
        out.push(Hand::set(
            HandType::Bomb,
            r,
            stars.then_some(n),
            Fill::wild(nat, target, ws, wb),
        ));
    }
    if rules.chain_bombs != ChainBombs::None && hi <= TOP_SET && n >= 4 * rules.min_chain_links {
        let shape = Shape {
            lo,
            hi,
            distinct,
            max_count,
        };
        if let Some(h) = best_chain_bomb(nat, shape, ws, wb, n, rules) {
            out.push(h);
        }
    }

    // Sets of one rank.
    if distinct == 1 && hi <= TOP_SET {
        let r = Rank::at(hi);
        let target = RankCounts::EMPTY.with(r, n);
        match n {
            2 => out.push(Hand::set(
                HandType::Pair,
                r,
                None,
                Fill::wild(nat, target, ws, wb),
            )),
            3 => out.push(Hand::set(
                HandType::Triple,
                r,
                None,
                Fill::wild(nat, target, ws, wb),
            )),
            _ => {}
        }
    }

    // Sequences (3..A only; every rank of the window the same number of cards).
    if hi <= TOP_SEQ && naturals >= rules.min_naturals_in_sequence {
        for (group, kind, min_links) in [
            (1u8, HandType::Straight, rules.min_straight),
            (2, HandType::PairChain, rules.min_pair_chain),
            (3, HandType::TripleChain, rules.min_triple_chain),
        ] {
            if n % group != 0 || max_count > group {
                continue;
            }
            let links = n / group;
            if links < min_links || links as usize > TOP_SEQ + 1 {
                continue;
            }
            // The highest window of `links` ranks that holds every natural card (取大).
            let start = lo.min(TOP_SEQ + 1 - links as usize);
            if start + links as usize - 1 < hi {
                continue;
            }
            let mut target = RankCounts::EMPTY;
            for i in start..start + links as usize {
                target = target.with(Rank::at(i), group);
            }
            out.push(Hand::sequence(
                kind,
                Rank::at(start + links as usize - 1),
                group,
                links,
                Fill::wild(nat, target, ws, wb),
            ));
        }
    }
    out
}

fn first_rank(rc: RankCounts) -> Rank {
    rc.iter().next().map(|(r, _)| r).unwrap_or(Rank::THREE)
}

/// The shape of a play's natural cards: lowest and highest rank index, number of distinct ranks,
/// largest count of one rank.
#[derive(Clone, Copy)]
struct Shape {
    lo: usize,
    hi: usize,
    distinct: u8,
    max_count: u8,
}

/// The strongest chain-bomb interpretation of the cards, over every link count and window.
fn best_chain_bomb(
    nat: RankCounts,
    shape: Shape,
    ws: u8,
    wb: u8,
    n: u8,
    rules: &Rules,
) -> Option<Hand> {
    let Shape {
        lo,
        hi,
        distinct,
        max_count,
    } = shape;
    let w = ws + wb;
    let cycle = TOP_SET + 1; // 13 ranks 3..2 on the cycle
    if w == 0 && hi <= TOP_SEQ {
        // Without wilds every rank of the window needs natural cards (four or more), so the
        // window is exactly the natural ranks: lo..=hi if they are consecutive, and no cyclic
        // window (those hold the 2, which has no natural card here) fits.
        let links = hi + 1 - lo;
        if distinct as usize != links
            || links < rules.min_chain_links as usize
            || links > rules.max_chain_links as usize
        {
            return None;
        }
        return chain_bomb_in_window(nat, lo, links, false, ws, wb, n, rules);
    }
    let mut nat_mask = 0u32;
    for (r, _) in nat.iter() {
        nat_mask |= 1 << r.index();
    }
    let mut best: Option<(u64, Hand)> = None;
    for links in rules.min_chain_links..=rules.max_chain_links {
        let y = links as usize;
        if y > cycle || 4 * links > n {
            break;
        }
        if rules.chain_bombs == ChainBombs::Equal && (n % links != 0 || n / links < max_count) {
            continue;
        }
        // Non-cyclic windows [s, s+y-1] within 3..A; cyclic windows contain the 2 (index 12)
        // and run on the cycle 3..A,2,3..
        let plain = (0..=TOP_SEQ + 1 - y.min(TOP_SEQ + 1)).map(|s| (s, false));
        let cyclic = (cycle - y..cycle)
            .filter(|_| rules.cyclic_chain_bombs)
            .map(|s| (s, true));
        for (s, is_cyclic) in plain.chain(cyclic) {
            if !is_cyclic && (s > lo || s + y - 1 < hi || s + y - 1 > TOP_SEQ) {
                continue;
            }
            // Every natural must lie inside the window.
            let window_mask = (((1u32 << y) - 1) << s | ((1u32 << y) - 1) >> (cycle - s)) & 0x1FFF;
            if nat_mask & !window_mask != 0 {
                continue;
            }
            let Some(hand) = chain_bomb_in_window(nat, s, y, is_cyclic, ws, wb, n, rules) else {
                continue;
            };
            let strength = compare::bomb_key(&hand, rules);
            if best.is_none_or(|(b, _)| strength > b) {
                best = Some((strength, hand));
            }
        }
    }
    best.map(|(_, h)| h)
}

/// The chain bomb of the window of `y` ranks from index `s` (on the cycle 3..A,2 when cyclic),
/// if the cards fit it exactly.
#[allow(clippy::too_many_arguments)]
fn chain_bomb_in_window(
    nat: RankCounts,
    s: usize,
    y: usize,
    is_cyclic: bool,
    ws: u8,
    wb: u8,
    n: u8,
    rules: &Rules,
) -> Option<Hand> {
    let cycle = TOP_SET + 1;
    let links = y as u8;
    let mut counts = [0u8; 13];
    for (k, slot) in counts.iter_mut().enumerate().take(y) {
        *slot = nat.get(Rank::at((s + k) % cycle));
    }
    let groups = chain_groups(&counts[..y], ws + wb, n, rules)?;
    let mut target = RankCounts::EMPTY;
    let mut min_g = u8::MAX;
    let mut max_g = 0;
    for (k, &g) in groups[..y].iter().enumerate() {
        target = target.with(Rank::at((s + k) % cycle), g);
        min_g = min_g.min(g);
        max_g = max_g.max(g);
    }
    let level = match rules.unequal_chain_level {
        UnequalChainLevel::MaxWithLargestGroup if rules.chain_bombs == ChainBombs::Unequal => {
            (min_g + links).max(max_g)
        }
        _ => min_g + links,
    };
    let top = (s + y - 1) % cycle;
    Some(Hand::chain_bomb(
        Rank::at(top),
        level,
        min_g,
        links,
        is_cyclic,
        Fill::wild(nat, target, ws, wb),
    ))
}

/// Group sizes for a chain-bomb window with natural counts `counts` and `w` wilds, or `None` if
/// the window cannot take exactly these cards. Equal chains need every group the same size;
/// unequal chains take the distribution with the highest level.
fn chain_groups(counts: &[u8], w: u8, n: u8, rules: &Rules) -> Option<[u8; 13]> {
    let y = counts.len();
    let mut groups = [0u8; 13];
    match rules.chain_bombs {
        ChainBombs::None => None,
        ChainBombs::Equal => {
            let x = n / y as u8;
            if x < 4 || x as usize * y != n as usize || counts.iter().any(|&c| c > x) {
                return None;
            }
            groups[..y].fill(x);
            Some(groups)
        }
        ChainBombs::Unequal => {
            let deficit: u8 = counts.iter().map(|&c| 4u8.saturating_sub(c)).sum();
            if deficit > w {
                return None;
            }
            let spare = w - deficit;
            for (g, &c) in groups.iter_mut().zip(counts) {
                *g = c.max(4);
            }
            // Water-fill: raise the smallest groups (highest smallest group X).
            let mut fill = groups;
            for _ in 0..spare {
                if let Some(m) = (0..y).min_by_key(|&i| (fill[i], std::cmp::Reverse(i))) {
                    fill[m] += 1;
                }
            }
            let level_of = |g: &[u8; 13]| {
                let min_g = g[..y].iter().copied().min().unwrap_or(0);
                let max_g = g[..y].iter().copied().max().unwrap_or(0);
                match rules.unequal_chain_level {
                    UnequalChainLevel::MinPlusLinks => min_g + y as u8,
                    UnequalChainLevel::MaxWithLargestGroup => (min_g + y as u8).max(max_g),
                }
            };
            // Dump: all spare wilds on the largest group (highest single group).
            let mut dump = groups;
            if let Some(m) = (0..y).max_by_key(|&i| (dump[i], i)) {
                dump[m] += spare;
            }
            if level_of(&dump) > level_of(&fill) {
                Some(dump)
            } else {
                Some(fill)
            }
        }
    }
}

/// Picks the interpretation a play is taken as.
///
/// `declared` narrows to a type (and key); when following, only interpretations that beat
/// `previous` count. Of what remains, a single option is taken; otherwise the strongest bomb is
/// taken (a bomb interpretation outranks non-bombs, docs/rules/RULES.md §3.2 item 5); otherwise the play is
/// ambiguous and must be declared.
pub fn resolve(
    cards: RankCounts,
    previous: Option<&Hand>,
    declared: Option<Declared>,
    rules: &Rules,
) -> Result<Hand, PlayError> {
    let all = classify(cards, rules);
    if all.is_empty() {
        return Err(PlayError::NotACombination(cards));
    }
    let mut options: ArrayVec<Hand, 6> = all
        .iter()
        .copied()
        .filter(|h| match declared {
            Some(d) => h.kind == d.kind && d.key.is_none_or(|k| h.key() == Some(k)),
            None => true,
        })
        .collect();
    if options.is_empty() {
        return Err(PlayError::DeclaredMismatch(cards));
    }
    if let Some(prev) = previous {
        options.retain(|h| compare::beats(prev, h, rules));
        if options.is_empty() {
            return Err(PlayError::DoesNotBeat(cards));
        }
    }
    if options.len() == 1 || options[0].is_bomb() {
        // Bombs come first in classification order, strongest first.
        return Ok(options[0]);
    }
    Err(PlayError::Ambiguous {
        cards,
        options: options.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hand::LargerThanHand;

    fn one(cards: &str, rules: &Rules) -> Hand {
        let rc: RankCounts = cards.parse().unwrap();
        let all = classify(rc, rules);
        assert_eq!(all.len(), 1, "{cards}: {all:?}");
        all[0]
    }

    #[test]
    fn wild_straight_takes_the_larger_value() {
        let h = one("4 5 6 7 8 BJ", &Rules::BAIBIAN);
        assert_eq!((h.kind, h.len, h.key), (HandType::Straight, 6, Rank::NINE));
        assert_eq!(
            h.wilds.iter().collect::<Vec<_>>(),
            vec![(Rank::BIG_JOKER, Rank::NINE)]
        );
    }

    #[test]
    fn pure_jokers_are_joker_plays() {
        assert_eq!(one("BJ", &Rules::BAIBIAN).kind, HandType::Single);
        assert_eq!(one("SJ BJ", &Rules::BAIBIAN).key, Rank::SMALL_JOKER);
        assert!(classify("SJ BJ".parse().unwrap(), &Rules::CLASSIC).is_empty());
        assert_eq!(
            one("SJ SJ BJ", &Rules::QIANBIAN).kind,
            HandType::ThreeJokers
        );
    }

    #[test]
    fn no_play_is_larger_than_the_hand() {
        // docs/rules/RULES.md §2 item 2: X·Y ≤ the hand size. 5 links of 6 cards = 30 > 27.
        let chain: RankCounts = "3 3 3 3 3 3 4 4 4 4 4 4 5 5 5 5 5 5 6 6 6 6 6 6 7 7 7 7 7 7"
            .parse()
            .unwrap();
        assert!(classify(chain, &Rules::BAIBIAN).is_empty());
        assert_eq!(
            check_size(chain, &Rules::BAIBIAN),
            Err(LargerThanHand {
                len: 30,
                hand_size: 27
            })
        );
        assert_eq!(
            resolve(chain, None, None, &Rules::BAIBIAN),
            Err(PlayError::NotACombination(chain))
        );
        // 4 links of 6 = 24 cards fit.
        let fits = chain.with(Rank::SEVEN, 0);
        assert!(check_size(fits, &Rules::BAIBIAN).is_ok());
        assert_eq!(classify(fits, &Rules::BAIBIAN)[0].stars, Some(10));
    }

    #[test]
    fn qianbian_three_wilds_fit_two_types() {
        let all = classify("3 4 5 SJ BJ BJ".parse().unwrap(), &Rules::QIANBIAN);
        let kinds: Vec<_> = all.iter().map(|h| (h.kind, h.key)).collect();
        assert_eq!(
            kinds,
            vec![
                (HandType::Straight, Rank::EIGHT),
                (HandType::PairChain, Rank::FIVE)
            ]
        );
        let e = resolve(
            "3 4 5 SJ BJ BJ".parse().unwrap(),
            None,
            None,
            &Rules::QIANBIAN,
        );
        assert!(matches!(e, Err(PlayError::Ambiguous { .. })));
    }
}
