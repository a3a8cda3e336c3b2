//! Where the 升級 games live: their own store beside Shuangkou's, on the same backend — in a
//! sub-directory (embedded), under another key prefix (Redis) or a second memory store — so
//! neither game's recovery ever meets the other's records.

use super::record::GAME;

/// The store spec of the 升級 games beside Shuangkou's `spec`.
pub fn store_spec(spec: &str) -> String {
    let spec = spec.trim();
    if spec == "memory" {
        return spec.to_string();
    }
    if [
        "redis://",
        "rediss://",
        "redis+unix://",
        crate::store::redis::CLUSTER_SCHEME,
    ]
    .iter()
    .any(|p| spec.starts_with(p))
    {
        return match spec.find("prefix=") {
            // A configured prefix gets a 升級 sub-prefix.
            Some(i) => {
                let at = i + "prefix=".len();
                let end = spec[at..].find('&').map_or(spec.len(), |e| at + e);
                format!("{}{}shengji:{}", &spec[..at], &spec[at..end], &spec[end..])
            }
            None if spec.contains('?') => format!("{spec}&prefix=sk:shengji:"),
            None => format!("{spec}?prefix=sk:shengji:"),
        };
    }
    std::path::Path::new(spec).join(GAME).display().to_string()
}
