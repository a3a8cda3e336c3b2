//! The `VariantAdmin` service (admin key only): checking a candidate script and reloading the
//! variants directory. Both compile and check scripts (seconds of CPU), so both run on the
//! blocking pool, never on an async worker.

use std::sync::Arc;

use super::Call;
use crate::service::app::App;
use crate::service::pb;
use crate::service::status::{ApiError, Reason};
use crate::service::wire::variant::{reload_report, validated};

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
        let expected = name.strip_suffix(".rhai").map(str::to_string);
        crate::variants::load::<crate::variants::CompiledVariant>(
            &name,
            &source,
            expected.as_deref(),
            crate::variants::check::DEFAULT_RANDOM_DEALS,
            crate::variants::check::DEFAULT_SEED,
        )
        .map(|(v, _)| v.id().to_string())
        .map_err(|e| e.to_string())
    })
    .await?;
    Ok(validated(checked, hash))
}

async fn reload(
    call: Call<'_>,
    _: pb::ReloadVariantsRequest,
) -> Result<pb::ReloadVariantsResponse, ApiError> {
    call.admin()?;
    let registry = Arc::clone(call.app.registry());
    match blocking(move || registry.reload()).await? {
        Err(e) => Err(ApiError::new(Reason::BadRequest, e.to_string())),
        Ok(report) => Ok(reload_report(&report)),
    }
}
