use rand::SeedableRng;
use rand::seq::SliceRandom;
use shuangkou::cards::{Card, CardSet, RankCounts};
use shuangkou::moves::legal_plays_into;
use shuangkou::rules::Rules;
use std::time::Instant;
fn main() {
    for id in ["classic", "baibian", "qianbian"] {
        let rules = Rules::preset(id).unwrap();
        let mut hands = Vec::new();
        for seed in 0..200u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut deck: Vec<Card> = Card::all().collect();
            deck.shuffle(&mut rng);
            let set: CardSet = deck[..27].iter().copied().collect();
            hands.push(set.rank_counts());
        }
        let mut buf = Vec::new();
        let mut times = Vec::new();
        let mut counts = Vec::new();
        for h in &hands {
            let t = Instant::now();
            for _ in 0..20 { legal_plays_into(*h, None, &rules, &mut buf); }
            times.push(t.elapsed().as_nanos() as f64 / 20.0);
            counts.push(buf.len());
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        counts.sort();
        println!("{id}: median {:.1} us, max {:.1} us, median plays {} max {}", times[100]/1000.0, times[199]/1000.0, counts[100], counts[199]);
        let _ = RankCounts::EMPTY;
    }
}
