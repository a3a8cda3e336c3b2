use rhai::Array;

use super::returned::parse_settlement;
use super::*;

/// A four-seat `settle` of the script "test".
const SETTLE: Returned = Returned {
    hook: "settle",
    origin: "test",
    players: 4,
};

/// classic.rhai with `line` added to its `meta()` map.
fn classic_with_meta(line: &str) -> String {
    let src = super::super::EMBEDDED
        .iter()
        .find(|(id, _)| *id == "classic")
        .unwrap()
        .1;
    let at = "        partners_see_hands: false,\n";
    assert!(src.contains(at), "classic.rhai's meta() changed shape");
    src.replacen(at, &format!("{at}        {line}\n"), 1)
}

#[test]
fn meta_may_name_the_variants_tuoguan_bot_and_an_unknown_one_is_rejected() {
    let plain = CompiledVariant::compile("classic.rhai", &classic_with_meta(""), None).unwrap();
    assert_eq!(plain.meta().auto_policy, None);
    let named = classic_with_meta(r#"auto_policy: "search:40","#);
    let v = CompiledVariant::compile("classic.rhai", &named, None).unwrap();
    assert_eq!(v.meta().auto_policy.as_deref(), Some("search:40"));
    for bad in [r#"auto_policy: "grandmaster","#, "auto_policy: 3,"] {
        let e = CompiledVariant::compile("classic.rhai", &classic_with_meta(bad), None)
            .expect_err(bad)
            .to_string();
        assert!(e.contains("auto_policy"), "{bad}: {e}");
    }
}

#[test]
fn points_by_seat_are_one_line_item_per_seat_with_points() {
    let v: Dynamic = engine::engine()
        .eval(
            r#"#{ lines: [
                #{ label: "base", points: [4, 0, -4, 0.5], detail: "雙扣" },
                #{ seat: 1, label: "rake", points: -1, detail: "稅" },
                #{ label: "contribution", points: [0, 0, 0, 0], detail: "nothing" },
            ] }"#,
        )
        .unwrap();
    let s = parse_settlement(&v, SETTLE).unwrap();
    assert_eq!(s.scores, vec![400, -100, -400, 50]);
    let items: Vec<_> = s
        .lines
        .iter()
        .map(|l| {
            (
                l.seat.number(),
                l.label.as_str(),
                l.amount,
                l.detail.as_str(),
            )
        })
        .collect();
    assert_eq!(
        items,
        vec![
            (0, "base", 400, "雙扣"),
            (2, "base", -400, "雙扣"),
            (3, "base", 50, "雙扣"),
            (1, "rake", -100, "稅"),
        ]
    );
}

proptest::proptest! {
    // As tests/properties.rs: no failure files in the source tree; proptest prints the
    // failing case and its seed.
    #![proptest_config(proptest::test_runner::Config {
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Points by seat and one line per seat are the same settlement: equal scores, and the
    /// by-seat form lists exactly the seats with points, in seat order.
    #[test]
    fn points_by_seat_equal_one_line_per_seat(
        rows in proptest::collection::vec(proptest::collection::vec(-1000i64..1000, 4), 0..20),
    ) {
        let line = |seat: Option<usize>, points: Dynamic| {
            let mut m = Map::new();
            if let Some(s) = seat {
                m.insert("seat".into(), Dynamic::from_int(s as i64));
            }
            m.insert("label".into(), "x".into());
            m.insert("points".into(), points);
            m.insert("detail".into(), "".into());
            Dynamic::from_map(m)
        };
        let settlement = |lines: Array| {
            let mut m = Map::new();
            m.insert("lines".into(), Dynamic::from_array(lines));
            Dynamic::from_map(m)
        };
        let by_seat: Array = rows
            .iter()
            .map(|r| line(None, Dynamic::from_array(r.iter().map(|&p| p.into()).collect())))
            .collect();
        let per_seat: Array = rows
            .iter()
            .flat_map(|r| {
                r.iter()
                    .enumerate()
                    .filter(|(_, p)| **p != 0)
                    .map(|(s, &p)| line(Some(s), p.into()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let a = parse_settlement(&settlement(by_seat), SETTLE).unwrap();
        let b = parse_settlement(&settlement(per_seat), SETTLE).unwrap();
        proptest::prop_assert_eq!(&a.scores, &b.scores);
        proptest::prop_assert_eq!(&a.lines, &b.lines);
        let sums: Vec<i64> = (0..4).map(|s| rows.iter().map(|r| r[s] * 100).sum()).collect();
        proptest::prop_assert_eq!(a.scores, sums);
    }
}

#[test]
fn a_settlement_has_at_most_max_lines_line_items() {
    // (A script cannot build this: its map-size limit counts every line's keys first.)
    let line = |n: i64| {
        let mut m = Map::new();
        m.insert("label".into(), "x".into());
        m.insert("points".into(), Dynamic::from_array(vec![n.into(); 4]));
        m.insert("detail".into(), "".into());
        Dynamic::from_map(m)
    };
    let settlement = |maps: usize| {
        let mut m = Map::new();
        m.insert(
            "lines".into(),
            Dynamic::from_array((0..maps).map(|_| line(1)).collect()),
        );
        Dynamic::from_map(m)
    };
    let ok = parse_settlement(&settlement(MAX_LINES / 4), SETTLE).unwrap();
    assert_eq!(ok.lines.len(), MAX_LINES);
    assert_eq!(ok.scores, vec![100 * (MAX_LINES / 4) as i64; 4]);
    let e = parse_settlement(&settlement(MAX_LINES / 4 + 1), SETTLE).unwrap_err();
    assert!(
        e.message
            .contains("more than 512 line items (lines[128] passes the limit)"),
        "{e}"
    );
}

/// Both families refuse a file whose stem is not the script's `meta().id`, and take it when
/// it is (or when the script comes from no file).
#[test]
fn a_script_must_be_named_after_its_meta_id() {
    let classic = classic_with_meta("");
    let shengji = super::super::SHENGJI_EMBEDDED[0].1;
    let refused = |r: Result<(), VariantError>, id: &str| match r {
        Err(VariantError::Contract { message, .. }) => assert_eq!(
            message,
            format!("meta().id is {id:?} but the file is named other.rhai")
        ),
        other => panic!("expected a contract error for {id}, got {other:?}"),
    };
    refused(
        CompiledVariant::compile("other.rhai", &classic, Some("other")).map(|_| ()),
        "classic",
    );
    refused(
        super::super::ShengjiVariant::compile("other.rhai", shengji, Some("other")).map(|_| ()),
        "shengji",
    );
    assert!(CompiledVariant::compile("classic.rhai", &classic, Some("classic")).is_ok());
    assert!(CompiledVariant::compile("inline", &classic, None).is_ok());
    assert!(
        super::super::ShengjiVariant::compile("shengji.rhai", shengji, Some("shengji")).is_ok()
    );
}
