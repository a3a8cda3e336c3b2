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

/// The outcomes of reload reports (one per game family's registry), for ReloadVariants: every
/// file of the directory once, under the family that reads it; a refused file with its id, the
/// version (content hash) refused and why, whether refused now or by an earlier reload.
pub fn reload_report(reports: &[ReloadReport]) -> pb::ReloadVariantsResponse {
    let mut outcomes = Vec::new();
    for r in reports {
        for (id, hash) in &r.activated {
            outcomes.push(outcome(
                format!("{id}.rhai"),
                id,
                hash,
                "activated",
                String::new(),
            ));
        }
        for (id, hash) in &r.unchanged {
            outcomes.push(outcome(
                format!("{id}.rhai"),
                id,
                hash,
                "unchanged",
                String::new(),
            ));
        }
        for e in &r.rejected {
            let file = file_name(e.origin());
            let id = file.strip_suffix(".rhai").unwrap_or(&file).to_string();
            let version = r.rejected_versions.get(&id).cloned().unwrap_or_default();
            outcomes.push(outcome(file, &id, &version, "rejected", e.to_string()));
        }
        for s in &r.still_refused {
            outcomes.push(outcome(
                file_name(&s.origin),
                &s.id,
                &s.hash,
                "rejected",
                format!("unchanged since it was refused: {}", s.error),
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
    }
    pb::ReloadVariantsResponse { outcomes }
}

/// The file name of a script's origin (its path in the directory), as the other outcomes name
/// their files.
fn file_name(origin: &str) -> String {
    origin
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(origin)
        .to_string()
}

/// The ValidateVariant response of a candidate script: its id when it compiled (whether or not
/// it then passed its checks), its content hash, and the error when it did not pass.
pub fn validated(
    checked: Result<String, (Option<String>, String)>,
    version: String,
) -> pb::ValidateVariantResponse {
    match checked {
        Ok(id) => pb::ValidateVariantResponse {
            ok: true,
            id,
            version,
            errors: Vec::new(),
        },
        Err((id, e)) => pb::ValidateVariantResponse {
            ok: false,
            id: id.unwrap_or_default(),
            version,
            errors: vec![e],
        },
    }
}
