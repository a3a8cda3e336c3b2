//! The one reader of the tests' switches (`SHUANGKOU_THOROUGH`, `UPDATE_GOLDEN`): on for exactly
//! `1` and for nothing else, so that `UPDATE_GOLDEN=0` compares the goldens instead of rewriting
//! them and `SHUANGKOU_THOROUGH=0` runs the short versions.

#[path = "common/flags.rs"]
pub mod flags;

use std::ffi::OsStr;

#[test]
fn a_switch_is_on_for_exactly_1_only() {
    assert!(flags::is_on(Some(OsStr::new("1"))), "1 turns a switch on");
    for off in ["0", "", "true", "yes", "on", " 1", "1 ", "01", "2"] {
        assert!(
            !flags::is_on(Some(OsStr::new(off))),
            "{off:?} turned a switch on"
        );
    }
    assert!(!flags::is_on(None), "an unset switch is on");
}
