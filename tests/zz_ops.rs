use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use rhai::{Engine, Dynamic, Scope, CallFnOptions};
use rhai::packages::{Package, StandardPackage};
use shuangkou::variants::{self, facts};
#[test]
fn ops() {
    for (id, src) in variants::EMBEDDED {
        let rules = variants::builtin_rules(id).unwrap();
        let json = if rules.players == 2 { serde_json::json!({"places": [0, 1], "cards_left": [0, 12],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"}, {"seat": 0, "cards": "K K K K K"}],
            "bombs_in_hand": [[], ["7 7 7 7 7 7"]]}) } else { serde_json::json!({
            "places": [0, 2, 1, 3], "cards_left": [0, 0, 8, 5],
            "bombs_played": [{"seat": 0, "cards": "9 9 9 9 9 9 9"}, {"seat": 1, "cards": "5 5 5 5 5 5"}, {"seat": 2, "cards": "K K K K K"}],
            "bombs_in_hand": [[], [], ["7 7 7 7"], []]}) };
        let d = facts::parse_deal(&json, &rules).unwrap();
        let v = variants::builtin(id).unwrap().with_defaults().unwrap();
        let opts = v.option_values().to_map();
        let mut e = Engine::new_raw();
        e.register_global_module(StandardPackage::new().as_shared_module()); e.set_max_expr_depths(64, 48);
        let n = Arc::new(AtomicU64::new(0));
        let n2 = n.clone();
        e.on_progress(move |ops| { n2.store(ops, Ordering::Relaxed); None });
        let ast = e.compile(src).unwrap();
        let r: Dynamic = e.call_fn_with_options(CallFnOptions::new().eval_ast(false), &mut Scope::new(), &ast, "settle", (facts::deal_map(&d), Dynamic::from_map(opts.clone()))).unwrap();
        let lines = r.read_lock::<rhai::Map>().unwrap().get("lines").unwrap().clone().into_array().unwrap().len();
        eprintln!("{id}: {} operations, {lines} lines", n.load(Ordering::Relaxed));
    }
}
