//! The tests' switches from the environment, read one way: a switch is on when its variable is
//! exactly `1` (unset, empty, `0`, `true` or anything else: off). Included by path where
//! `tests/common` is not (`#[path = "common/flags.rs"]`).

/// Whether the environment variable `name` is exactly `1`.
pub fn on(name: &str) -> bool {
    is_on(std::env::var_os(name).as_deref())
}

/// Whether a switch's value (`None`: unset) turns it on: exactly `1`.
pub fn is_on(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| v == "1")
}

/// `SHUANGKOU_THOROUGH=1`: the long runs (more deals, more hands).
pub fn thorough() -> bool {
    on("SHUANGKOU_THOROUGH")
}

/// `UPDATE_GOLDEN=1`: the golden files are rewritten from this run instead of compared.
pub fn update_golden() -> bool {
    on("UPDATE_GOLDEN")
}
