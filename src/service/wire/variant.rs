//! Variants on the wire: a loaded variant (ListVariants) and a reload report (ReloadVariants).

use std::sync::Arc;

use crate::service::pb;
use crate::variants::{CompiledVariant, OptionKind, OptionValue, ReloadReport};

/// A loaded variant, for ListVariants.
pub fn variant(v: &Arc<CompiledVariant>) -> pb::Variant {
    let options = v
        .options()
        .iter()
        .map(|o| {
            let (ty, min, max) = match &o.kind {
                OptionKind::Int { min, max, .. } => ("int", min.to_string(), max.to_string()),
                OptionKind::Float { min, max, .. } => ("float", min.to_string(), max.to_string()),
                OptionKind::Bool { .. } => ("bool", String::new(), String::new()),
                OptionKind::Choice { .. } => ("string", String::new(), String::new()),
                OptionKind::IntList { min, max, .. } => ("list", min.to_string(), max.to_string()),
            };
            pb::VariantOption {
                name: o.name.clone(),
                r#type: ty.to_string(),
                default_value: o.default_value().to_string(),
                min,
                max,
                description: format!("{} ({})", o.doc, o.range_text()),
            }
        })
        .collect::<Vec<_>>();
    let default_deals = v
        .options()
        .iter()
        .find(|o| o.name == "deals_per_match")
        .and_then(|o| match o.default_value() {
            OptionValue::Int(n) => u32::try_from(n).ok(),
            _ => None,
        })
        .unwrap_or(1);
    pb::Variant {
        id: v.id().to_string(),
        name: v.meta().name.clone(),
        version: v.hash().to_string(),
        players: u32::from(v.meta().players),
        description: v.meta().description.clone(),
        options,
        default_deals,
    }
}

fn outcome(
    file: String,
    id: &str,
    version: &str,
    result: &str,
    error: String,
) -> pb::ReloadOutcome {
    pb::ReloadOutcome {
        file,
        id: id.to_string(),
        version: version.to_string(),
        result: result.into(),
        error,
    }
}

/// A reload report, for ReloadVariants.
pub fn reload_report(r: &ReloadReport) -> pb::ReloadVariantsResponse {
    let mut outcomes = Vec::new();
    for (id, hash) in &r.activated {
        outcomes.push(outcome(
            format!("{id}.rhai"),
            id,
            hash,
            "activated",
            String::new(),
        ));
    }
    for id in &r.unchanged {
        outcomes.push(outcome(
            format!("{id}.rhai"),
            id,
            "",
            "unchanged",
            String::new(),
        ));
    }
    for e in &r.rejected {
        outcomes.push(outcome(
            e.origin().to_string(),
            "",
            "",
            "rejected",
            e.to_string(),
        ));
    }
    for id in &r.removed {
        outcomes.push(outcome(
            format!("{id}.rhai"),
            id,
            "",
            "removed",
            String::new(),
        ));
    }
    pb::ReloadVariantsResponse { outcomes }
}

/// The ValidateVariant response of a candidate script: its id when it passed, its content hash,
/// and the error when it did not.
pub fn validated(checked: Result<String, String>, version: String) -> pb::ValidateVariantResponse {
    match checked {
        Ok(id) => pb::ValidateVariantResponse {
            ok: true,
            id,
            version,
            errors: Vec::new(),
        },
        Err(e) => pb::ValidateVariantResponse {
            ok: false,
            id: String::new(),
            version,
            errors: vec![e],
        },
    }
}
