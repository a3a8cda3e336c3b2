use std::time::Instant;
use rhai::{Engine, Dynamic, Scope, CallFnOptions};
use rhai::packages::{Package, StandardPackage};
use shuangkou::game::hooks::VariantHooks;
use shuangkou::variants::{self, facts};

fn time<F: FnMut()>(name: &str, mut f: F) {
    for _ in 0..200 { f(); }
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n { f(); }
    eprintln!("{name}: {:?}", t.elapsed() / n);
}

#[test]
fn perf() {
    let rules = variants::builtin_rules("baibian").unwrap();
    let json = serde_json::json!({
        "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
        "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"},
                         {"seat": 2, "cards": "K K K K K"}],
        "bombs_in_hand": [[], [], ["7 7 7 7"], []]
    });
    let d = facts::parse_deal(&json, &rules).unwrap();
    let c = variants::builtin("baibian").unwrap();
    let v = c.with_defaults().unwrap();
    time("host settle", || { v.settle(&d).unwrap(); });
    time("facts map", || { std::hint::black_box(facts::deal_map(&d)); });
    let opts = v.option_values().to_map();
    time("opts map", || { std::hint::black_box(opts.clone()); });
    for limits in [false, true] {
        let mut e = Engine::new_raw();
        e.register_global_module(StandardPackage::new().as_shared_module()); e.set_max_expr_depths(64, 48);
        if limits {
            e.set_max_operations(1_000_000).set_max_string_size(16384).set_max_array_size(4096).set_max_map_size(256).set_max_call_levels(24);
        }
        let ast = match e.compile(c.source()) { Ok(a) => a, Err(err) => panic!("{err}") };
        let fm = facts::deal_map(&d);
        time(&format!("raw engine settle limits={limits}"), || {
            let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast, "settle", (fm.clone(), Dynamic::from_map(opts.clone()))).unwrap();
            std::hint::black_box(r);
        });
    }
}
