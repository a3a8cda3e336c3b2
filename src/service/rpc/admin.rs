//! The `VariantAdmin` service (admin key only): checking a candidate script and reloading the
//! variants directory (both game families' scripts). Both compile and check scripts (seconds of CPU), so both run on the
//! blocking pool, never on an async worker.

use std::sync::Arc;

use super::Call;
use crate::service::app::App;
use crate::service::pb;
use crate::service::status::{ApiError, Reason};
use crate::service::wire::variant::{reload_report, validated};
use crate::variants::check::{DEFAULT_RANDOM_DEALS, DEFAULT_SEED};
use crate::variants::family::game_of;
use crate::variants::{CompiledVariant, Family, ShengjiVariant};

/// The `VariantAdmin` service.
pub struct AdminApi {
    app: Arc<App>,
}

impl AdminApi {
    pub fn new(app: Arc<App>) -> AdminApi {
        AdminApi { app }
    }
}

/// Runs CPU-heavy work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("the check was cut short: {e}")))
}

rpcs! {
    pb::variant_admin_server::VariantAdmin => AdminApi {}
    validate_variant(ValidateVariantRequest) -> ValidateVariantResponse = "ValidateVariant" => validate;
    reload_variants(ReloadVariantsRequest) -> ReloadVariantsResponse = "ReloadVariants" => reload;
}

async fn validate(
    call: Call<'_>,
    req: pb::ValidateVariantRequest,
) -> Result<pb::ValidateVariantResponse, ApiError> {
    call.admin()?;
    let name = if req.file_name.is_empty() {
        "candidate.rhai".to_string()
    } else {
        req.file_name
    };
    let source = req.source;
    let hash = crate::variants::content_hash(&source);
    let checked = blocking(move || {
        // The script's game decides which family checks it (a 升級 script as the 升級 registry
        // would).
        if game_of(&name, &source) == ShengjiVariant::GAME {
            check_script::<ShengjiVariant>(&name, &source)
        } else {
            check_script::<CompiledVariant>(&name, &source)
        }
    })
    .await?;
    Ok(validated(checked, hash))
}

/// Compiles and checks a candidate script as family `V` would on reload: its id once it
/// compiled (also when a check then fails: `Err((Some(id), why))`), or why not.
fn check_script<V: Family>(name: &str, source: &str) -> Result<String, (Option<String>, String)> {
    let expected = name.strip_suffix(".rhai");
    let compiled = (V::COMPILE)(name, source, expected).map_err(|e| (None, e.to_string()))?;
    let id = compiled.id().to_string();
    (V::CHECK)(&Arc::new(compiled), DEFAULT_RANDOM_DEALS, DEFAULT_SEED)
        .map(|_| id.clone())
        .map_err(|e| (Some(id), e.to_string()))
}

async fn reload(
    call: Call<'_>,
    _: pb::ReloadVariantsRequest,
) -> Result<pb::ReloadVariantsResponse, ApiError> {
    call.admin()?;
    // Both game families read the one directory: each registry reports the files of its game.
    let registry = Arc::clone(call.app.registry());
    let shengji = Arc::clone(call.app.shengji().registry());
    let (shuangkou, shengji) = blocking(move || (registry.reload(), shengji.reload())).await?;
    let refused =
        |e: crate::variants::RegistryError| ApiError::new(Reason::BadRequest, e.to_string());
    Ok(reload_report(&[
        shuangkou.map_err(refused)?,
        shengji.map_err(refused)?,
    ]))
}
