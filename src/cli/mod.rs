//! The command-line tools of the `shuangkou` binary, one module per subcommand.

pub mod arena;
pub mod rules;
pub mod shengji;
pub mod simulate;
pub mod variants;

/// The game a command is about (`--game`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Game {
    /// 雙扣 (the six Shuangkou variants).
    #[default]
    Shuangkou,
    /// 升級 with one deck (`variants/shengji.rhai`).
    Shengji,
}
