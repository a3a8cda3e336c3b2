//! Why a variant script cannot be used: [`VariantError`].

use crate::game::hooks::HookError;

/// Why a variant script cannot be used (or a version cannot become active).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    #[error("{origin}: cannot read the script: {message}")]
    Io { origin: String, message: String },
    #[error("{origin}{}: syntax error: {message}", at(*.line, *.column))]
    Syntax {
        origin: String,
        message: String,
        line: Option<usize>,
        column: Option<usize>,
    },
    #[error("{origin}: contract: {message}")]
    Contract { origin: String, message: String },
    #[error("{origin}: {error}")]
    Hook { origin: String, error: HookError },
    #[error("{origin}: example {name:?} failed: {message}")]
    Example {
        origin: String,
        name: String,
        message: String,
    },
    #[error(
        "{origin}: random check failed (seed {seed}, case {case}, {hook}): {message}\n  facts: {facts}"
    )]
    Random {
        origin: String,
        seed: u64,
        case: usize,
        hook: String,
        message: String,
        facts: String,
    },
    /// A bad option value or name: the message names the option (the script's file is not the
    /// caller's business, so it is kept out of the message).
    #[error("{message}")]
    Options { origin: String, message: String },
    #[error("no variant {0:?}")]
    Unknown(String),
}

fn at(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl VariantError {
    /// The file or origin the error is about (empty for `Unknown`).
    pub fn origin(&self) -> &str {
        match self {
            VariantError::Io { origin, .. }
            | VariantError::Syntax { origin, .. }
            | VariantError::Contract { origin, .. }
            | VariantError::Hook { origin, .. }
            | VariantError::Example { origin, .. }
            | VariantError::Random { origin, .. }
            | VariantError::Options { origin, .. } => origin,
            VariantError::Unknown(_) => "",
        }
    }
}
