//! The engine's sandbox, the `Bomb` type and the value conversions, tested.

use rhai::Map;

use super::*;

/// Runs `f(bomb)` of a one-function script on the bomb `7 7 7 7 7 BJ` of seat 2 (6★).
fn on_bomb(body: &str) -> Result<Dynamic, Box<EvalAltResult>> {
    let cards: crate::cards::RankCounts = "7 7 7 7 7 BJ".parse().unwrap();
    let bomb = crate::variants::facts::bomb_fact(
        crate::seat::Seat::new(2),
        cards,
        &crate::rules::Rules::BAIBIAN,
    )
    .unwrap();
    let ast = engine().compile(format!("fn f(b) {{ {body} }}")).unwrap();
    engine().call_fn::<Dynamic>(&mut Scope::new(), &ast, "f", (Dynamic::from(bomb),))
}

#[test]
fn a_bomb_reads_like_a_map_and_cannot_be_changed() {
    let get = |body: &str| on_bomb(body).unwrap_or_else(|e| panic!("{body}: {e}"));
    assert_eq!(get("b.seat").as_int(), Ok(2));
    assert_eq!(get("b.stars").as_int(), Ok(6));
    assert_eq!(get("b[\"stars\"]").as_int(), Ok(6));
    assert_eq!(get("b.len + b.group + b.links").as_int(), Ok(6 + 6 + 1));
    assert_eq!(get("b.cards").into_string().unwrap(), "7 7 7 7 7 BJ");
    assert_eq!(get("b.kind").into_string().unwrap(), "bomb");
    assert_eq!(get("type_of(b)").into_string().unwrap(), "Bomb");
    assert_eq!(get("b.to_map().stars + b.to_map().seat").as_int(), Ok(8));
    assert_eq!(get("b.to_map().keys().len()").as_int(), Ok(7));
    assert_eq!(
        get("`${b}`").into_string().unwrap(),
        "#{cards: \"7 7 7 7 7 BJ\", group: 6, kind: \"bomb\", len: 6, links: 1, seat: 2, stars: 6}"
    );
    // A copy is a copy: the facts cannot be changed through it either.
    assert_eq!(get("let c = b; c.stars").as_int(), Ok(6));
    assert!(on_bomb("let c = b; c.stars = 9; c").is_err());
    assert_eq!(
        get("let m = b.to_map(); m.stars = 9; b.stars").as_int(),
        Ok(6)
    );
    for bad in ["b.stars = 9; b", "b.nothing", "b[\"nothing\"]"] {
        let e = on_bomb(bad).expect_err(bad);
        eprintln!("{bad}: {e}");
    }
    let e = on_bomb("b[\"nothing\"]").unwrap_err().to_string();
    assert!(e.contains("a bomb has no property `nothing`"), "{e}");
}

#[test]
fn centi_rounding_is_half_away_from_zero() {
    assert_eq!(to_centi(&Dynamic::from_int(4)), Ok(400));
    assert_eq!(to_centi(&Dynamic::from_float(9.5)), Ok(950));
    assert_eq!(to_centi(&Dynamic::from_float(0.125)), Ok(13));
    assert_eq!(to_centi(&Dynamic::from_float(-0.125)), Ok(-13));
    assert_eq!(to_centi(&Dynamic::from_float(0.333)), Ok(33));
    assert!(to_centi(&Dynamic::from_float(f64::NAN)).is_err());
    assert!(to_centi(&Dynamic::from_float(1e14)).is_err());
    assert!(to_centi(&Dynamic::from("4")).is_err());
}

#[test]
fn points_beyond_the_line_limit_saturate_and_say_so() {
    let cap = 1_000_000_000_000_000; // 10^13 points in hundredths
    let sat = |v: Dynamic| to_centi_saturating(&v);
    assert_eq!(sat(Dynamic::from_int(4)), Ok((400, false)));
    assert_eq!(sat(Dynamic::from_int(10_000_000_000_000)), Ok((cap, false)));
    assert_eq!(sat(Dynamic::from_int(10_000_000_000_001)), Ok((cap, true)));
    assert_eq!(sat(Dynamic::from_int(i64::MIN)), Ok((-cap, true)));
    assert_eq!(sat(Dynamic::from_float(-1e30)), Ok((-cap, true)));
    assert_eq!(sat(Dynamic::from_float(0.125)), Ok((13, false)));
    assert!(sat(Dynamic::from_float(f64::INFINITY)).is_err());
    assert!(sat(Dynamic::from("4")).is_err());
}

#[test]
fn json_round_trip() {
    let v: serde_json::Value = serde_json::json!({"a": [1, 2.5, "x", true, null], "b": {"c": -3}});
    assert_eq!(to_json(&from_json(&v)).unwrap(), v);
}

#[test]
fn import_and_eval_do_not_compile() {
    for src in [
        "import \"x\" as y;",
        "fn f() { eval(\"1\") }",
        "export const X = 1;",
    ] {
        assert!(compile("t.rhai", src).is_err(), "{src}");
    }
}

#[test]
fn errors_carry_file_line_and_column() {
    let ast = compile("t.rhai", "fn f(x) {\n  let y = x.nope;\n  y\n}").unwrap();
    let mut m = Map::new();
    m.insert("a".into(), Dynamic::from_int(1));
    let e = call(&ast, "t.rhai", None, "settle", "f", (Dynamic::from_map(m),)).unwrap_err();
    assert_eq!(e.location.as_deref(), Some("t.rhai:2:13"), "{e}");
    assert!(e.message.contains("nope"), "{e}");
    assert!(!e.limit);
}
