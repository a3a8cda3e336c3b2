//! Golden scoring and seating tests of the six variant scripts: docs/rules/VECTORS.md section C (R01–R15)
//! and D (F07–F10, F12) and the seeds' worked examples, as data in `tests/data/scoring.json`.
//! Also: every embedded script passes its own activation checks (declared examples and seeded
//! random settlements under its sum rule), and the scripts' card rules are the variants' rules.
//!
//! All failures of the data file are collected and reported together, each with its id.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use shuangkou::cards::{CardSet, RankCounts};
use shuangkou::game::hooks::{
    DealFacts, EscapeFacts, HookError, InHandWorth, SeatingDecision, SeatingFacts, Settlement,
    SumRule, TimeoutFacts, VariantHooks,
};
use shuangkou::game::{Action, Entry, Game, GameConfig, Phase};
use shuangkou::rules::Rules;
use shuangkou::seat::Seat;
use shuangkou::variants::{self, OptionValue, ScriptVariant, check, facts};

const DATA: &str = include_str!("data/scoring.json");

/// Points (integer or float) as hundredths, rounded as the host rounds.
fn centi(v: &Value) -> Result<i64, String> {
    v.as_i64()
        .map(|i| i * 100)
        .or_else(|| v.as_f64().map(|f| (f * 100.0).round() as i64))
        .ok_or_else(|| format!("{v} is not a number"))
}

fn run_case(case: &Value) -> Result<(), String> {
    let id = case["variant"].as_str().ok_or("missing variant")?;
    let compiled = variants::builtin(id).map_err(|e| e.to_string())?;
    let options: BTreeMap<String, OptionValue> = match case.get("options") {
        None => BTreeMap::new(),
        Some(o) => serde_json::from_value(o.clone()).map_err(|e| format!("options: {e}"))?,
    };
    let v = compiled.configure(&options).map_err(|e| e.to_string())?;
    let rules = *v.rules();
    let f = &case["facts"];
    let expect = &case["expect"];
    let hook = case.get("hook").and_then(Value::as_str).unwrap_or("settle");
    let scores_match = |got: &[i64]| -> Result<(), String> {
        let want = expect
            .as_array()
            .ok_or("expect must be an array")?
            .iter()
            .map(centi)
            .collect::<Result<Vec<_>, _>>()?;
        if want == got {
            Ok(())
        } else {
            Err(format!("expected {want:?}, got {got:?} (hundredths)"))
        }
    };
    match hook {
        "settle" => {
            let facts = facts::parse_deal(f, &rules)?;
            let s = v.settle(&facts).map_err(|e| e.to_string())?;
            v.sum_rule().check(&s)?;
            scores_match(&s.scores)
        }
        "settle_escape" => {
            let facts = facts::parse_escape(f, &rules)?;
            let s = v.settle_escape(&facts).map_err(|e| e.to_string())?;
            v.sum_rule().check(&s)?;
            scores_match(&s.scores)
        }
        "seating" => {
            let facts = facts::parse_seating(f, &rules)?;
            let got = v.seating(&facts).map_err(|e| e.to_string())?;
            let want: SeatingDecision =
                serde_json::from_value(expect.clone()).map_err(|e| format!("expect: {e}"))?;
            if want == got {
                Ok(())
            } else {
                Err(format!("expected {want:?}, got {got:?}"))
            }
        }
        "timeout_is_escape" => {
            let facts = facts::parse_timeout(f, &rules)?;
            let got = v.timeout_is_escape(&facts).map_err(|e| e.to_string())?;
            if Some(got) == expect.as_bool() {
                Ok(())
            } else {
                Err(format!("expected {expect}, got {got}"))
            }
        }
        other => Err(format!("unknown hook {other}")),
    }
}

#[test]
fn golden_scoring_and_seating_cases() {
    let data: Value = serde_json::from_str(DATA).expect("scoring.json is JSON");
    let cases = data["cases"].as_array().expect("cases");
    let mut failures = Vec::new();
    let mut by_variant: BTreeMap<String, usize> = BTreeMap::new();
    for case in cases {
        let id = case["id"].as_str().unwrap_or("?");
        *by_variant
            .entry(case["variant"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
        if let Err(e) = run_case(case) {
            failures.push(format!("{id}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    for id in ["classic", "jj", "baibian", "huopin", "qianbian", "erren"] {
        assert!(
            by_variant.get(id).copied().unwrap_or(0) > 0,
            "no case for {id}"
        );
    }
    // Every docs/rules/VECTORS.md scoring id and the seating ids are covered.
    for want in [
        "R01", "R02", "R03", "R04", "R05", "R06", "R07", "R08", "R09", "R10a", "R11a", "R12",
        "R13-11", "R14", "R15", "F07a", "F08a", "F09-jj", "F10-bb", "F12",
    ] {
        assert!(
            cases.iter().any(|c| c["id"] == want),
            "scoring.json lacks {want}"
        );
    }
}

/// A script variant whose deals seat 0 leads without a swap (so that a case's plays are made as
/// written); everything else, the bombs-in-hand worth included, is the script's.
struct LedBySeat0(ScriptVariant);

impl VariantHooks for LedBySeat0 {
    fn rules(&self) -> &Rules {
        self.0.rules()
    }
    fn partners_see_hands(&self) -> bool {
        self.0.partners_see_hands()
    }
    fn sum_rule(&self) -> SumRule {
        self.0.sum_rule()
    }
    fn seating(&self, _: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        Ok(SeatingDecision {
            leader: Seat::new(0),
            swap: None,
        })
    }
    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        self.0.settle(f)
    }
    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.0.settle_escape(f)
    }
    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.0.timeout_is_escape(f)
    }
    fn in_hand_worth(&self) -> Result<Option<Arc<InHandWorth>>, HookError> {
        self.0.in_hand_worth()
    }
}

/// Plays one of scoring.json's full `deals` in the deal engine (`Game::apply` with the script's
/// hooks, seat 0 leading): each listed play when its seat is to lead, a pass from everyone
/// else, a `leave` seat's escape first; the settled deal's scores in hundredths.
fn play_deal_in_engine(case: &Value) -> Result<Vec<i64>, String> {
    let id = case["variant"].as_str().ok_or("missing variant")?;
    let options: BTreeMap<String, OptionValue> = match case.get("options") {
        None => BTreeMap::new(),
        Some(o) => serde_json::from_value(o.clone()).map_err(|e| format!("options: {e}"))?,
    };
    let hooks = LedBySeat0(
        variants::builtin(id)
            .and_then(|c| c.configure(&options))
            .map_err(|e| e.to_string())?,
    );
    let hands: Vec<String> =
        serde_json::from_value(case["hands"].clone()).map_err(|e| e.to_string())?;
    let mut free = CardSet::FULL;
    let mut preset = Vec::new();
    for h in &hands {
        let rc: RankCounts = h.parse().map_err(|e| format!("{h}: {e:?}"))?;
        let cards = free
            .take(rc)
            .ok_or_else(|| format!("{h}: not in the decks"))?;
        free = free.difference(cards);
        preset.push(cards);
    }
    let (mut g, _) = Game::new(
        GameConfig::new(id, "test", 1),
        &hooks,
        [3; 32],
        Some(preset),
        0,
    )
    .map_err(|e| e.to_string())?;
    let act = |g: &mut Game, seat: Seat, action: Action| {
        let player = g.seating()[seat];
        g.apply(
            &hooks,
            Entry {
                player,
                action,
                at: 1,
            },
        )
        .map(|_| ())
        .map_err(|e| format!("seat {}: {e}", seat.index()))
    };
    if let Some(seat) = case.get("leave").and_then(Value::as_u64) {
        act(&mut g, Seat::new(seat as u8), Action::Leave)?;
    }
    let plays: Vec<(u8, String)> =
        serde_json::from_value(case["plays"].clone()).map_err(|e| e.to_string())?;
    let mut next = plays.iter().peekable();
    for _ in 0..400 {
        if g.phase() == Phase::Finished {
            if let Some(p) = next.peek() {
                return Err(format!("the deal ended before the play {p:?}"));
            }
            let deal = g.results().into_iter().next().ok_or("no settled deal")?;
            return Ok(deal.settlement.scores);
        }
        let seat = g.turn().ok_or("no seat to act")?;
        let action = match next.peek() {
            Some((s, cards)) if Seat::new(*s) == seat && g.top().is_none() => {
                next.next();
                let rc: RankCounts = cards.parse().map_err(|e| format!("{cards}: {e:?}"))?;
                Action::Play {
                    cards: g.hand(seat).take(rc).ok_or("cards not in the hand")?,
                    declared: None,
                }
            }
            _ => Action::Pass,
        };
        act(&mut g, seat, action)?;
    }
    Err("the deal did not end within 400 actions".into())
}

/// The full deals of scoring.json (also played over the wire by tests/service_scoring.rs), in
/// the deal engine: the scores worked by hand from docs/rules/RULES.md §6, e.g. the 二人 bombs in
/// hand arranged for the largest contribution the options pay (W-erren-inhand-*: ±1, −5, ±61).
#[test]
fn hand_worked_full_deals_score_as_the_rules_say_in_the_engine() {
    let data: Value = serde_json::from_str(DATA).expect("scoring.json is JSON");
    let mut failures = Vec::new();
    for case in data["deals"].as_array().expect("deals") {
        let id = case["id"].as_str().unwrap_or("?");
        let want = case["expect"]
            .as_array()
            .expect("expect")
            .iter()
            .map(centi)
            .collect::<Result<Vec<_>, _>>()
            .expect("expect in points");
        match play_deal_in_engine(case) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!("{id}: expected {want:?}, got {got:?} (hundredths)")),
            Err(e) => failures.push(format!("{id}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_embedded_script_passes_its_activation_checks() {
    let handles: Vec<_> = variants::EMBEDDED
        .iter()
        .map(|(id, src)| {
            std::thread::spawn(move || {
                variants::load::<variants::CompiledVariant>(
                    &variants::embedded_origin(id),
                    src,
                    Some(id),
                    check::DEFAULT_RANDOM_DEALS,
                    check::DEFAULT_SEED,
                )
                .map(|(v, r)| (v.id().to_string(), r))
            })
        })
        .collect();
    for h in handles {
        let (id, report) = h
            .join()
            .expect("check thread")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.examples >= 8,
            "{id}: only {} examples",
            report.examples
        );
        assert!(
            report.random_calls >= 4 * check::DEFAULT_RANDOM_DEALS,
            "{id}"
        );
    }
}

#[test]
fn random_settlements_with_other_seeds_obey_the_sum_rules() {
    for (id, _) in variants::EMBEDDED {
        let v = variants::builtin(id).unwrap().with_defaults().unwrap();
        for seed in [1u64, 2, 3] {
            check::random_batch(&v, 100, seed).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn declared_sum_rules() {
    let sum = |id: &str, opts: &[&str]| {
        let c = variants::builtin(id).unwrap();
        let o = c
            .parse_overrides(&opts.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        c.configure(&o).unwrap().sum_rule()
    };
    assert_eq!(sum("classic", &[]), SumRule::Zero);
    assert_eq!(sum("classic", &["rake_percent=3"]), SumRule::ZeroBeforeRake);
    assert_eq!(sum("jj", &[]), SumRule::Zero);
    assert_eq!(sum("baibian", &[]), SumRule::Unchecked);
    assert_eq!(sum("baibian", &["draw_points=1,-1,-1,1"]), SumRule::Zero);
    assert_eq!(sum("huopin", &[]), SumRule::Unchecked);
    assert_eq!(sum("qianbian", &[]), SumRule::Unchecked);
    assert_eq!(sum("erren", &[]), SumRule::Zero);
    assert_eq!(sum("erren", &["rake_percent=5"]), SumRule::ZeroBeforeRake);
    assert_eq!(
        sum("classic", &["escape_rule=escaper_only"]),
        SumRule::Unchecked
    );
}

/// The scripts are the single source of the variants' card rules (docs/rules/RULES.md A1, §0, §8).
#[test]
fn script_rules_match_the_variant_matrix() {
    let expect = |id: &str, want: Value| {
        let got = serde_json::to_value(variants::builtin_rules(id).unwrap()).unwrap();
        for (k, v) in want.as_object().unwrap() {
            assert_eq!(&got[k], v, "{id}.{k}");
        }
    };
    let common = |players: u8| {
        serde_json::json!({
            "players": players, "hand_size": 27, "min_straight": 5, "min_pair_chain": 3,
            "min_triple_chain": 3, "min_chain_links": 3, "max_chain_links": 6,
            "min_naturals_in_sequence": 0, "cyclic_chain_bombs": false,
            "equal_star_tie_break": "top_rank", "two_player_double_min": 12,
            "two_player_single_min": 7,
        })
    };
    for id in ["classic", "jj", "baibian", "huopin", "qianbian"] {
        expect(id, common(4));
    }
    expect("erren", common(2));
    let card_rules = [
        (
            &["classic"][..],
            serde_json::json!({"wild_jokers": "none", "three_jokers": false, "tianwang": "above_all",
                "bomb_order": "classic", "chain_bombs": "none"}),
        ),
        (
            &["jj", "baibian"],
            serde_json::json!({"wild_jokers": "big", "big_joker_as_small": true,
                "three_jokers": true, "tianwang": "max_of_7", "bomb_order": "stars",
                "chain_bombs": "equal"}),
        ),
        (
            &["huopin"],
            serde_json::json!({"wild_jokers": "big", "three_jokers": true, "tianwang": "min_of_7",
                "bomb_order": "stars", "chain_bombs": "equal"}),
        ),
        (
            &["qianbian", "erren"],
            serde_json::json!({"wild_jokers": "all", "three_jokers": true, "tianwang": "max_of_7",
                "bomb_order": "stars", "chain_bombs": "unequal",
                "unequal_chain_level": "max_with_largest_group"}),
        ),
    ];
    for (ids, rules) in card_rules {
        for id in ids {
            expect(id, rules.clone());
        }
    }
    assert!(variants::builtin_rules("nope").is_err());
    // Card-rule options reach the rules.
    let c = variants::builtin("baibian").unwrap();
    let o = c
        .parse_overrides(&["tianwang=min_of_7".into(), "cyclic_chain_bombs=true".into()])
        .unwrap();
    let v = c.configure(&o).unwrap();
    let r = serde_json::to_value(v.rules()).unwrap();
    assert_eq!(r["tianwang"], "min_of_7");
    assert_eq!(r["cyclic_chain_bombs"], true);
    // A script may refuse incoherent options.
    let e = variants::builtin("erren")
        .unwrap()
        .configure(&BTreeMap::from([(
            "single_min_cards".to_string(),
            OptionValue::Int(13),
        )]))
        .unwrap_err();
    assert!(e.to_string().contains("single_min_cards"), "{e}");
}

#[test]
fn meta_and_options_are_declared() {
    for (id, _) in variants::EMBEDDED {
        let c: Arc<_> = variants::builtin(id).unwrap();
        assert_eq!(c.id(), id);
        assert_eq!(c.hash().len(), 64);
        assert_eq!(c.meta().partners_see_hands, id == "jj");
        assert_eq!(c.meta().players, if id == "erren" { 2 } else { 4 });
        for name in [
            "rake_percent",
            "turn_seconds",
            "reconnect_seconds",
            "timeouts_to_escape",
            "deals_per_match",
        ] {
            assert!(
                c.options().iter().any(|o| o.name == name),
                "{id} lacks option {name}"
            );
        }
        let v = c.with_defaults().unwrap();
        assert_eq!(v.option("reconnect_seconds"), Some(&OptionValue::Int(90)));
        assert_eq!(v.partners_see_hands(), id == "jj");
    }
}

/// The 百變 family (baibian, huopin, qianbian) is not zero-sum (平扣 1/0/0/1), so its random
/// settlements are checked against docs/rules/RULES.md §6.3 directly: per seat, base by place × the
/// multiplier of the winners' highest star (×2 from 5★, doubling, ×16 cap at 8★) + 貢獻分 for
/// every ≥6★ bomb played (the bomber gets 3c, each other player pays c). The tables are the
/// rules text's (S0-BB: c = 2/4/6; S1 for huopin: 2/6/10), not the scripts'.
#[test]
fn baibian_family_random_settlements_follow_the_rules_text() {
    use shuangkou::game::hooks::Outcome;
    for (id, each) in [
        ("baibian", [2i64, 4, 6]),
        ("huopin", [2, 6, 10]),
        ("qianbian", [2, 4, 6]),
    ] {
        let v = variants::builtin(id).unwrap().with_defaults().unwrap();
        for seed in [11u64, 12, 13] {
            let mut g = facts::RandomFacts::new(seed, *v.rules());
            for case in 0..150 {
                let f = g.deal();
                let p = &f.table.places;
                let row: [i64; 4] = match f.outcome {
                    Outcome::Double => [4, 4, -4, -4],
                    Outcome::Single => [2, -2, 2, -2],
                    Outcome::Draw => [1, 0, 0, 1],
                };
                let team = p[0].team();
                let level = f
                    .table
                    .bombs_played
                    .iter()
                    .filter(|b| b.seat.team() == team)
                    .filter_map(|b| b.stars)
                    .max()
                    .unwrap_or(0);
                let m: i64 = if level >= 5 {
                    1 << (level.min(8) - 4)
                } else {
                    1
                };
                let mut want = [0i64; 4];
                for (place, &seat) in p.iter().enumerate() {
                    want[seat.index()] = row[place] * m * 100;
                }
                for b in &f.table.bombs_played {
                    let Some(stars) = b.stars.filter(|&s| s >= 6) else {
                        continue;
                    };
                    let c = each[usize::from(stars - 6).min(2)] * 100;
                    for (s, w) in want.iter_mut().enumerate() {
                        *w += if s == b.seat.index() { 3 * c } else { -c };
                    }
                }
                let got = v
                    .settle(&f)
                    .unwrap_or_else(|e| panic!("{id} seed {seed} case {case}: {e}"));
                assert_eq!(
                    got.scores,
                    want,
                    "{id} seed {seed} case {case}: {}",
                    serde_json::to_string(&f).unwrap()
                );
            }
        }
    }
}

/// Classic, JJ and 二人 settlements of random deal facts against the rules text alone (the
/// scripts' defaults), as the 百變 family's above; each figure from docs/rules/RULES.md:
/// - §6.1 classic: by place 雙扣 4/4/−4/−4, 單扣 2/−2/2/−2, 平扣 0; × the single largest factor of a
///   bomb the winning team played (5 cards ×2, 6 ×3, 7 ×4, 8 ×5, 天王 ×4; 4 cards ×1), losers too.
/// - §6.2 JJ: 雙扣 6 each, 單扣 3 (the default of the missing table), 平扣 +1/−1/−1/+1 by place; ×
///   the product over every bomb either team played: 6★ (三王 included) ×2, 7★ (天王) ×3, 8★+ ×4.
/// - §6.5 二人: 雙扣 3, 單扣 2, 平扣 1 unit to the winner, the loser the opposite; × 2^(L − 5) for
///   the winner's largest 相 L ≥ 6 played (12相 cap); 貢獻分 2^(s − 5) units (s ≥ 6, capped at 12)
///   for every bomb played and every bomb in hand, paid to its holder by the opponent.
#[test]
fn classic_jj_and_erren_random_settlements_follow_the_rules_text() {
    use shuangkou::game::hooks::Outcome;
    use shuangkou::hand::HandType;
    // The first difference of each variant, all reported together.
    let mut failures = Vec::new();
    'variant: for id in ["classic", "jj", "erren"] {
        let v = variants::builtin(id).unwrap().with_defaults().unwrap();
        let mut checked = 0;
        let mut multiplied = 0;
        for seed in [21u64, 22, 23] {
            let mut g = facts::RandomFacts::new(seed, *v.rules());
            for case in 0..200 {
                let f = g.deal();
                let p = &f.table.places;
                let bombs = &f.table.bombs_played;
                let mut want = vec![0i64; p.len()];
                let mut m = 1i64;
                match id {
                    "classic" => {
                        let row = match f.outcome {
                            Outcome::Double => [4, 4, -4, -4],
                            Outcome::Single => [2, -2, 2, -2],
                            Outcome::Draw => [0, 0, 0, 0],
                        };
                        let team = p[0].team();
                        m = bombs
                            .iter()
                            .filter(|b| b.seat.team() == team)
                            .map(|b| match (b.kind, b.len) {
                                (HandType::FourJokers, _) => 4,
                                (_, l) if l >= 5 => i64::from(l.min(8)) - 3,
                                _ => 1,
                            })
                            .max()
                            .unwrap_or(1);
                        for (place, &seat) in p.iter().enumerate() {
                            want[seat.index()] = row[place] * m * 100;
                        }
                    }
                    "jj" => {
                        let row = match f.outcome {
                            Outcome::Double => [6, 6, -6, -6],
                            Outcome::Single => [3, -3, 3, -3],
                            Outcome::Draw => [1, -1, -1, 1],
                        };
                        for b in bombs {
                            m *= match b.stars.unwrap_or(0) {
                                s if s >= 8 => 4,
                                7 => 3,
                                6 => 2,
                                _ => 1,
                            };
                        }
                        for (place, &seat) in p.iter().enumerate() {
                            want[seat.index()] = row[place] * m * 100;
                        }
                    }
                    _ => {
                        let (w, l) = (p[0].index(), p[1].index());
                        let units = match f.outcome {
                            Outcome::Double => 3,
                            Outcome::Single => 2,
                            Outcome::Draw => 1,
                        };
                        let level = bombs
                            .iter()
                            .filter(|b| b.seat.index() == w)
                            .filter_map(|b| b.stars)
                            .max()
                            .unwrap_or(0);
                        if level >= 6 {
                            m = 1 << (level.min(12) - 5);
                        }
                        want[w] = units * m * 100;
                        want[l] = -units * m * 100;
                        let in_hand = f.table.bombs_in_hand.iter().flatten();
                        for b in bombs.iter().chain(in_hand) {
                            let s = b.stars.unwrap_or(0);
                            if s >= 6 {
                                let c = (1i64 << (s.min(12) - 5)) * 100;
                                let holder = b.seat.index();
                                want[holder] += c;
                                want[1 - holder] -= c;
                            }
                        }
                    }
                }
                let got = v
                    .settle(&f)
                    .unwrap_or_else(|e| panic!("{id} seed {seed} case {case}: {e}"));
                if got.scores != want {
                    failures.push(format!(
                        "{id} seed {seed} case {case}: expected {want:?}, got {:?} (hundredths): {}",
                        got.scores,
                        serde_json::to_string(&f).unwrap()
                    ));
                    continue 'variant;
                }
                checked += 1;
                multiplied += usize::from(m > 1);
            }
        }
        // The sample is not vacuous: multipliers occur.
        assert!(
            multiplied * 10 > checked,
            "{id}: {multiplied} of {checked} deals multiplied"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
