use std::time::Instant;
use rhai::{Engine, Dynamic, Scope, CallFnOptions};
use rhai::packages::{Package, StandardPackage};
use shuangkou::game::hooks::VariantHooks;
use shuangkou::variants::{self, facts, engine};
fn time<F: FnMut()>(name: &str, mut f: F) {
    for _ in 0..300 { f(); }
    let mut v = vec![];
    for _ in 0..21 { let t = Instant::now(); for _ in 0..200 { f(); } v.push(t.elapsed() / 200); }
    v.sort(); eprintln!("{name}: min {:?} median {:?}", v[0], v[10]);
}
#[test]
fn perf5() {
    let id = "baibian";
    let src = variants::EMBEDDED[2].1;
    let rules = variants::builtin_rules(id).unwrap();
    let json = serde_json::json!({
            "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"}, {"seat": 2, "cards": "K K K K K"}],
            "bombs_in_hand": [[], [], ["7 7 7 7"], []]});
    let d = facts::parse_deal(&json, &rules).unwrap();
    let v = variants::builtin(id).unwrap().with_defaults().unwrap();
    let opts = v.option_values().to_map();
    let ast = engine::compile("x", src).unwrap();
    let fm = facts::deal_map(&d);
    for round in 0..2 {
        eprintln!("round {round}");
        time("full settle", || { std::hint::black_box(v.settle(&d).unwrap()); });
        time("engine::call", || { std::hint::black_box(engine::call(&ast, "x", None, "settle", "settle", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap()); });
        let mut e = Engine::new_raw();
        e.register_global_module(StandardPackage::new().as_shared_module()); e.set_max_expr_depths(64, 48);
        let ast2 = e.compile(src).unwrap();
        time("raw no limits", || { let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast2, "settle", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap(); std::hint::black_box(r); });
        e.set_fail_on_invalid_map_property(true).set_strict_variables(true);
        let ast2 = e.compile(src).unwrap();
        time("raw strict+fail_on_prop", || { let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast2, "settle", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap(); std::hint::black_box(r); });
        e.set_max_operations(1_000_000).set_max_call_levels(24).set_max_string_size(16384).set_max_array_size(4096).set_max_map_size(256).set_max_variables(512).set_max_functions(256).set_max_modules(0);
        time("raw + all limits", || { let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast2, "settle", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap(); std::hint::black_box(r); });
    }
}
