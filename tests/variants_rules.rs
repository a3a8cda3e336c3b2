//! The variant scripts are the single source of each variant's card rules. The `Rules`
//! constants of the core (`Rules::CLASSIC` …) exist so that core tests run without the script
//! host; this test keeps them identical to what the embedded scripts declare.

use shuangkou::rules::Rules;

#[test]
fn core_rule_constants_match_the_embedded_scripts() {
    for id in Rules::PRESET_IDS {
        let from_script =
            shuangkou::variants::builtin_rules(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            from_script,
            Rules::preset(id).unwrap(),
            "{id}: script and core constant differ"
        );
    }
}
