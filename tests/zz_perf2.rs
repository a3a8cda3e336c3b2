use std::time::Instant;
use rhai::{Engine, Dynamic, Scope, CallFnOptions};
use rhai::packages::{Package, StandardPackage};
use shuangkou::variants::{self, facts};

fn time<F: FnMut()>(name: &str, mut f: F) {
    for _ in 0..200 { f(); }
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n { f(); }
    eprintln!("{name}: {:?}", t.elapsed() / n);
}

#[test]
fn perf2() {
    let rules = variants::builtin_rules("baibian").unwrap();
    let json = serde_json::json!({
        "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
        "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"},
                         {"seat": 2, "cards": "K K K K K"}],
        "bombs_in_hand": [[], [], ["7 7 7 7"], []]
    });
    let d = facts::parse_deal(&json, &rules).unwrap();
    let v = variants::builtin("baibian").unwrap().with_defaults().unwrap();
    let opts = v.option_values().to_map();
    let mut e = Engine::new_raw();
    e.register_global_module(StandardPackage::new().as_shared_module()); e.set_max_expr_depths(64, 48);
    let snippets = [
        ("baseline", "fn f(facts, opts) { 1 }"),
        ("loop16 empty", "fn f(facts, opts) { let x = 0; for i in 0..16 { x += 1; } x }"),
        ("16 int pushes", "fn f(facts, opts) { let l = []; for i in 0..16 { l.push(i); } l }"),
        ("16 map literals", "fn f(facts, opts) { let x = (); for i in 0..16 { x = #{ seat: i, label: \"base\", points: 4, detail: \"x\" }; } x }"),
        ("16 array literals", "fn f(facts, opts) { let x = (); for i in 0..16 { x = [i, \"base\", 4, \"x\"]; } x }"),
        ("16 pushes plain", "fn f(facts, opts) { let l = []; for i in 0..16 { l.push(#{ seat: i, label: \"base\", points: 4, detail: \"x\" }); } #{ lines: l } }"),
        ("16 += plain", "fn f(facts, opts) { let l = []; for i in 0..16 { l += #{ seat: i, label: \"base\", points: 4, detail: \"x\" }; } #{ lines: l } }"),
    ];
    for lvl in [rhai::OptimizationLevel::None, rhai::OptimizationLevel::Simple, rhai::OptimizationLevel::Full] {
        e.set_optimization_level(lvl);
        let ast = e.compile("fn f(facts, opts) { let l = []; for i in 0..16 { l.push(#{ seat: i, label: \"base\", points: 4, detail: \"x\" }); } #{ lines: l } }").unwrap();
        let fm = facts::deal_map(&d);
        time(&format!("opt {lvl:?}"), || {
            let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast, "f", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap();
            std::hint::black_box(r);
        });
    }
    e.set_optimization_level(rhai::OptimizationLevel::Simple);
    let fm0 = facts::deal_map(&d);
    time("facts clone", || { std::hint::black_box(fm0.clone()); });
    let fm = facts::deal_map(&d);
    for (name, src) in snippets {
        let ast = e.compile(src).unwrap();
        time(name, || {
            let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast, "f", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap();
            std::hint::black_box(r);
        });
    }
}
