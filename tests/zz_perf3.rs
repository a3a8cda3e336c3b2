use std::time::Instant;
use shuangkou::game::hooks::VariantHooks;
use shuangkou::variants::{self, facts};
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat").unwrap().split_whitespace().next().unwrap().parse().unwrap()
}
fn time<F: FnMut()>(name: &str, mut f: F) {
    for _ in 0..300 { f(); }
    let mut v = vec![];
    let mut c = vec![];
    for _ in 0..15 { let t = Instant::now(); let c0 = cpu_ns(); for _ in 0..200 { f(); } c.push((cpu_ns() - c0) / 200); v.push(t.elapsed() / 200); }
    v.sort(); c.sort(); eprintln!("{name}: wall median {:?}, cpu median {} ns", v[7], c[7]);
}
#[test]
fn perf3() {
    for (id, _) in variants::EMBEDDED {
        let rules = variants::builtin_rules(id).unwrap();
        let json = if rules.players == 2 { serde_json::json!({"places": [0, 1], "cards_left": [0, 12],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"}, {"seat": 0, "cards": "K K K K K"}],
            "bombs_in_hand": [[], ["7 7 7 7 7 7"]]}) } else { serde_json::json!({
            "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"}, {"seat": 2, "cards": "K K K K K"}],
            "bombs_in_hand": [[], [], ["7 7 7 7"], []]}) };
        let d = facts::parse_deal(&json, &rules).unwrap();
        let v = variants::builtin(id).unwrap().with_defaults().unwrap();
        time(&format!("{id} settle"), || { std::hint::black_box(v.settle(&d).unwrap()); });
        let s = facts::parse_seating(&serde_json::json!({"shown_card": 3, "shown_holders": [0, 1], "random": 5}), &rules).unwrap();
        time(&format!("{id} seating"), || { std::hint::black_box(v.seating(&s).unwrap()); });
        time(&format!("{id} facts map"), || { std::hint::black_box(facts::deal_map(&d)); });
    }
}
