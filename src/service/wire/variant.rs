//! Variants on the wire: a loaded variant (ListVariants) and a reload report (ReloadVariants).

use std::sync::Arc;

use crate::service::pb;
use crate::variants::schema::{Number, OptionSchema};
use crate::variants::{CompiledVariant, OptionValue, ReloadReport};

fn number(n: Number) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        Number::Float(f) => f.to_string(),
    }
}

/// One option's schema on the wire (`OptionSchema`, the one structured view of an option).
fn option(o: &OptionSchema) -> pb::VariantOption {
    let (min, max) = o.range.map_or((String::new(), String::new()), |r| {
        (number(r.min), number(r.max))
    });
    let (min_length, max_length) = o.length.map_or((0, 0), |l| {
        (
            u32::try_from(l.min).unwrap_or(u32::MAX),
            u32::try_from(l.max).unwrap_or(u32::MAX),
        )
    });
    pb::VariantOption {
        name: o.name.clone(),
        r#type: o.value_type.name().to_string(),
        default_value: o.default.to_string(),
        min,
        max,
        description: o.description.clone(),
        choices: o.choices.clone(),
        min_length,
        max_length,
    }
}

/// A loaded variant, for ListVariants: its option schema from `OptionSchema`.
pub fn variant(v: &Arc<CompiledVariant>) -> pb::Variant {
    let options = OptionSchema::of_all(v.options())
        .iter()
        .map(option)
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
