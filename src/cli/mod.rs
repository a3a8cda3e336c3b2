//! The command-line tools of the `shuangkou` binary, one module per subcommand.

pub mod arena;
pub mod rules;
pub mod simulate;
pub mod variants;
