//! The variant registry: which version of each variant is active, every version a game still
//! uses, and safe activation of new versions.
//!
//! At start the registry loads every `*.rhai` file of the variants directory (or, without a
//! directory, the scripts embedded in the binary). A broken file is reported and skipped; no
//! valid variant at all is a start-up error. [`Registry::reload`] (called by the directory
//! watcher and by an admin request) re-reads the directory: a file whose content hash changed
//! becomes the active version only if it compiles, satisfies the contract and passes its own
//! checks (its examples and a batch of random settlements); otherwise the old version stays
//! active, and the failure is logged and counted. A file that disappears is deactivated (games
//! pinned to it keep it).
//!
//! Games pin a version by its content hash: [`Registry::get`] returns that version as long as any
//! game holds it (the registry keeps every version referenced outside itself, and drops the
//! others on the next reload). With an archive directory, every accepted version is also written
//! to `<archive>/<id>/<hash>.rhai`, so a pinned version survives a restart; a game that stored
//! the script text itself can re-register it with [`Registry::restore`].
//!
//! The registry also shares configured hooks ([`Registry::configured`]): games of one version
//! with the same options use one immutable [`ScriptVariant`] (its option maps and rules) instead
//! of configuring their own.
//!
//! Files are read through symlinks, and names starting with `.` are ignored, which covers the
//! layout of a Kubernetes ConfigMap volume (`classic.rhai -> ..data/classic.rhai`,
//! `..data -> ..2026_11_29_…`, updated by an atomic swap of `..data`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;

use super::check::{DEFAULT_RANDOM_DEALS, DEFAULT_SEED};
use super::family::{Family, game_of};
use super::schema::OptionSchema;
use super::script::{CompiledVariant, ScriptVariant, VariantError, content_hash};
use super::{embedded_origin, load};

/// How a registry is set up.
#[derive(Clone, Debug)]
pub struct RegistryConfig {
    /// The variants directory; `None` = the scripts embedded in the binary.
    pub dir: Option<PathBuf>,
    /// Where accepted versions are archived for restarts (`<archive>/<id>/<hash>.rhai`).
    pub archive: Option<PathBuf>,
    /// Random deals per option set a new version must pass.
    pub random_deals: usize,
    /// Seed of the random batch.
    pub seed: u64,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        RegistryConfig {
            dir: None,
            archive: None,
            random_deals: DEFAULT_RANDOM_DEALS,
            seed: DEFAULT_SEED,
        }
    }
}

/// Errors of the registry as a whole.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot read the variants directory {dir}: {message}")]
    Dir { dir: String, message: String },
    #[error("no valid variant in {source_name}{}", list(.errors))]
    NoValidVariant {
        source_name: String,
        errors: Vec<VariantError>,
    },
    #[error("cannot watch {dir}: {message}")]
    Watch { dir: String, message: String },
}

fn list(errors: &[VariantError]) -> String {
    errors.iter().map(|e| format!("\n  - {e}")).collect()
}

/// What a (re)load did.
#[derive(Debug, Default)]
pub struct ReloadReport {
    /// Versions that became active: (id, hash).
    pub activated: Vec<(String, String)>,
    /// Files whose new content was refused (the old version, if any, stays active).
    pub rejected: Vec<VariantError>,
    /// The content hash of each file in `rejected`, by id (none for a file that could not be read).
    pub rejected_versions: BTreeMap<String, String>,
    /// Files refused by an earlier reload and unchanged since (not checked again): still refused.
    pub still_refused: Vec<StillRefused>,
    /// Files whose content is the active version (id, content hash).
    pub unchanged: Vec<(String, String)>,
    /// Ids whose file disappeared (deactivated).
    pub removed: Vec<String>,
}

/// A file refused by an earlier reload whose content has not changed since.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StillRefused {
    pub id: String,
    /// Where the file was read from.
    pub origin: String,
    /// Its content hash.
    pub hash: String,
    /// Why it was refused.
    pub error: String,
}

/// Counters since the registry was created (exported as metrics by the service).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RegistryStats {
    /// Reloads run (start-up included).
    pub reloads: u64,
    /// Versions activated.
    pub activated: u64,
    /// New versions refused.
    pub rejected: u64,
    /// Variants deactivated because their file disappeared.
    pub removed: u64,
    /// Active variants now.
    pub active: u64,
    /// Versions held now (active or pinned by a game).
    pub versions: u64,
}

#[derive(Default)]
struct Counters {
    reloads: AtomicU64,
    activated: AtomicU64,
    rejected: AtomicU64,
    removed: AtomicU64,
}

struct State<V> {
    active: BTreeMap<String, Arc<V>>,
    versions: HashMap<(String, String), Arc<V>>,
    /// The last refusal per id (for `variants list` and the admin API).
    last_error: BTreeMap<String, String>,
    /// Content hashes already refused, per id, with the refusal, so an unchanged broken file is
    /// not re-checked on every event (and is reported as still refused).
    refused: HashMap<String, BTreeMap<String, String>>,
    /// Files (id, content hash) found to be scripts of another game family.
    foreign: BTreeSet<(String, String)>,
}

impl<V> Default for State<V> {
    fn default() -> Self {
        State {
            active: BTreeMap::new(),
            versions: HashMap::new(),
            last_error: BTreeMap::new(),
            refused: HashMap::new(),
            foreign: BTreeSet::new(),
        }
    }
}

/// The registry of variant versions of one game family (Shuangkou's by default; 升級's is
/// `Registry<ShengjiVariant>`). Share it as `Arc<Registry>`.
pub struct Registry<V: Family = CompiledVariant> {
    config: RegistryConfig,
    state: RwLock<State<V>>,
    counters: Counters,
    /// Serializes reloads (the checks run outside the state lock).
    reload_lock: Mutex<()>,
    /// Configured hooks by (variant, version, options); bounded (see [`Registry::configured`]).
    configured: Mutex<HashMap<ConfiguredKey, Arc<ScriptVariant>>>,
}

/// `compiled` configured with `options` as a client gives them (`name` → value text), checked
/// against the variant's schema (uncached: [`Registry::configured`] shares the result).
pub fn configure(
    compiled: &Arc<CompiledVariant>,
    options: &BTreeMap<String, String>,
) -> Result<ScriptVariant, VariantError> {
    let pairs: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let overrides = compiled.parse_overrides(&pairs)?;
    compiled.configure(&overrides)
}

/// Variant id, content hash, options as given.
type ConfiguredKey = (String, String, Vec<(String, String)>);

/// Most configured hook sets kept at once; the cache starts over beyond.
const CONFIGURED_MAX: usize = 256;

/// One script found in the directory (or embedded).
struct Found {
    id: String,
    origin: String,
    text: Result<String, String>,
}

impl<V: Family> Registry<V> {
    /// Creates the registry and loads every variant. Fails only when no variant is valid (or the
    /// directory cannot be read); broken files are in the report.
    pub fn open_family(
        config: RegistryConfig,
    ) -> Result<(Registry<V>, ReloadReport), RegistryError> {
        let registry = Registry {
            config,
            state: RwLock::new(State::default()),
            counters: Counters::default(),
            reload_lock: Mutex::new(()),
            configured: Mutex::new(HashMap::new()),
        };
        let report = registry.reload_inner()?;
        if registry.read().active.is_empty() {
            let source_name = match &registry.config.dir {
                Some(d) => d.display().to_string(),
                None => "the embedded scripts".into(),
            };
            return Err(RegistryError::NoValidVariant {
                source_name,
                errors: report.rejected,
            });
        }
        Ok((registry, report))
    }

    /// A registry of this family's embedded scripts.
    pub fn embedded_family() -> Result<Registry<V>, RegistryError> {
        Registry::open_family(RegistryConfig::default()).map(|(r, _)| r)
    }

    /// The configuration.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State<V>> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State<V>> {
        self.state.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The active version of `id` (what a new game should pin).
    pub fn active(&self, id: &str) -> Option<Arc<V>> {
        self.read().active.get(id).cloned()
    }

    /// The ids of the active variants.
    pub fn ids(&self) -> Vec<String> {
        self.read().active.keys().cloned().collect()
    }

    /// Every active version.
    pub fn list(&self) -> Vec<Arc<V>> {
        self.read().active.values().cloned().collect()
    }

    /// The last refusal of a new version of `id`, if any.
    pub fn last_error(&self, id: &str) -> Option<String> {
        self.read().last_error.get(id).cloned()
    }

    /// The version `hash` of `id`: held in memory while active or pinned, otherwise restored from
    /// the archive directory (when configured).
    pub fn get(&self, id: &str, hash: &str) -> Option<Arc<V>> {
        if let Some(v) = self
            .read()
            .versions
            .get(&(id.to_string(), hash.to_string()))
        {
            return Some(Arc::clone(v));
        }
        let archive = self.config.archive.as_ref()?;
        if !is_hex(hash) {
            return None;
        }
        let path = archive.join(id).join(format!("{hash}.rhai"));
        let text = fs::read_to_string(&path).ok()?;
        match self.restore(id, hash, &text, &path.display().to_string()) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(variant = id, version = hash, error = %e, "archived variant version unusable");
                None
            }
        }
    }

    /// Registers a pinned version from its script text (e.g. stored with a game), without
    /// activating it. The text must hash to `hash` and compile under the contract.
    pub fn restore(
        &self,
        id: &str,
        hash: &str,
        source: &str,
        origin: &str,
    ) -> Result<Arc<V>, VariantError> {
        if content_hash(source) != hash {
            return Err(VariantError::Contract {
                origin: origin.to_string(),
                message: format!("the text does not hash to the pinned version {hash}"),
            });
        }
        let compiled = Arc::new((V::COMPILE)(origin, source, Some(id))?);
        let mut st = self.write();
        let v = st
            .versions
            .entry((id.to_string(), hash.to_string()))
            .or_insert(compiled);
        Ok(Arc::clone(v))
    }

    /// Counters and sizes.
    pub fn stats(&self) -> RegistryStats {
        let st = self.read();
        RegistryStats {
            reloads: self.counters.reloads.load(Ordering::Relaxed),
            activated: self.counters.activated.load(Ordering::Relaxed),
            rejected: self.counters.rejected.load(Ordering::Relaxed),
            removed: self.counters.removed.load(Ordering::Relaxed),
            active: st.active.len() as u64,
            versions: st.versions.len() as u64,
        }
    }

    /// Re-reads the directory and activates the versions that pass their checks (the admin
    /// request and the watcher call this). Without a directory, nothing changes.
    pub fn reload(&self) -> Result<ReloadReport, RegistryError> {
        if self.config.dir.is_none() {
            return Ok(ReloadReport::default());
        }
        self.reload_inner()
    }

    fn scan(&self) -> Result<Vec<Found>, RegistryError> {
        let Some(dir) = &self.config.dir else {
            return Ok(V::EMBEDDED
                .iter()
                .map(|(id, src)| Found {
                    id: id.to_string(),
                    origin: embedded_origin(id),
                    text: Ok(src.to_string()),
                })
                .collect());
        };
        let dir_err = |e: std::io::Error| RegistryError::Dir {
            dir: dir.display().to_string(),
            message: e.to_string(),
        };
        let mut found = Vec::new();
        for entry in fs::read_dir(dir).map_err(dir_err)? {
            let entry = entry.map_err(dir_err)?;
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(id) = name.strip_suffix(".rhai") else {
                continue;
            };
            if name.starts_with('.') || id.is_empty() {
                continue;
            }
            let path = entry.path();
            // A symlink to a directory or a dangling link is not a script.
            if path.is_dir() {
                continue;
            }
            found.push(Found {
                id: id.to_string(),
                origin: path.display().to_string(),
                text: fs::read_to_string(&path).map_err(|e| e.to_string()),
            });
        }
        found.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(found)
    }

    fn reload_inner(&self) -> Result<ReloadReport, RegistryError> {
        let _guard = self.reload_lock.lock().unwrap_or_else(|p| p.into_inner());
        self.counters.reloads.fetch_add(1, Ordering::Relaxed);
        let found = self.scan()?;
        let mut report = ReloadReport::default();
        let present: BTreeSet<String> = found.iter().map(|f| f.id.clone()).collect();
        for f in found {
            let text = match f.text {
                Ok(t) => t,
                Err(message) => {
                    let e = VariantError::Io {
                        origin: f.origin.clone(),
                        message,
                    };
                    self.refuse(&f.id, None, &e);
                    report.rejected.push(e);
                    continue;
                }
            };
            let hash = content_hash(&text);
            let (current, known, refused) = {
                let st = self.read();
                (
                    st.active.get(&f.id).map(|v| v.hash().to_string()),
                    st.versions.get(&(f.id.clone(), hash.clone())).cloned(),
                    st.refused.get(&f.id).and_then(|s| s.get(&hash)).cloned(),
                )
            };
            if current.as_deref() == Some(hash.as_str()) {
                report.unchanged.push((f.id, hash));
                continue;
            }
            if let Some(error) = refused {
                report.still_refused.push(StillRefused {
                    id: f.id,
                    origin: f.origin,
                    hash,
                    error,
                });
                continue;
            }
            if !self.of_this_game(&f.id, &hash, &f.origin, &text) {
                continue;
            }
            let version = match known {
                // A version already checked (e.g. a revert to a version games still use).
                Some(v) => v,
                None => match load::<V>(
                    &f.origin,
                    &text,
                    Some(&f.id),
                    self.config.random_deals,
                    self.config.seed,
                ) {
                    Ok((v, check)) => {
                        tracing::info!(
                            variant = %f.id,
                            version = v.short_hash(),
                            origin = %f.origin,
                            examples = check.examples,
                            random_calls = check.random_calls,
                            "variant version passed its checks"
                        );
                        v
                    }
                    Err(e) => {
                        self.refuse(&f.id, Some(hash.clone()), &e);
                        report.rejected_versions.insert(f.id.clone(), hash);
                        report.rejected.push(e);
                        continue;
                    }
                },
            };
            self.archive(&version);
            {
                let mut st = self.write();
                st.versions
                    .insert((f.id.clone(), hash.clone()), Arc::clone(&version));
                let previous = st.active.insert(f.id.clone(), Arc::clone(&version));
                st.last_error.remove(&f.id);
                tracing::info!(
                    variant = %f.id,
                    version = version.short_hash(),
                    previous = previous.as_ref().map(|p| p.short_hash().to_string()).unwrap_or_default(),
                    "variant version activated"
                );
            }
            self.counters.activated.fetch_add(1, Ordering::Relaxed);
            crate::metrics::variant_reload("activated");
            report.activated.push((f.id, hash));
        }
        {
            let mut st = self.write();
            let gone: Vec<String> = st
                .active
                .keys()
                .filter(|id| !present.contains(*id))
                .cloned()
                .collect();
            for id in gone {
                st.active.remove(&id);
                tracing::warn!(variant = %id, "variant file removed; variant deactivated (pinned games keep their version)");
                self.counters.removed.fetch_add(1, Ordering::Relaxed);
                report.removed.push(id);
            }
            // Keep only versions that are active or still held by a game.
            let State {
                active, versions, ..
            } = &mut *st;
            versions.retain(|(id, hash), v| {
                Arc::strong_count(v) > 1 || active.get(id).is_some_and(|a| a.hash() == hash)
            });
        }
        Ok(report)
    }

    fn refuse(&self, id: &str, hash: Option<String>, e: &VariantError) {
        tracing::warn!(variant = id, error = %e, "variant version refused; the previous version (if any) stays active");
        self.counters.rejected.fetch_add(1, Ordering::Relaxed);
        crate::metrics::variant_reload("rejected");
        let mut st = self.write();
        st.last_error.insert(id.to_string(), e.to_string());
        if let Some(h) = hash {
            st.refused
                .entry(id.to_string())
                .or_default()
                .insert(h, e.to_string());
        }
    }

    /// True when the file `id` at `hash` is a script of this registry's game (remembered when
    /// it is not, so a foreign file is looked at once per version).
    fn of_this_game(&self, id: &str, hash: &str, origin: &str, text: &str) -> bool {
        let key = (id.to_string(), hash.to_string());
        if self.read().foreign.contains(&key) {
            return false;
        }
        if game_of(origin, text) == V::GAME {
            return true;
        }
        self.write().foreign.insert(key);
        false
    }

    fn archive(&self, v: &V) {
        let Some(archive) = &self.config.archive else {
            return;
        };
        let dir = archive.join(v.id());
        let path = dir.join(format!("{}.rhai", v.hash()));
        if path.exists() {
            return;
        }
        let write = || -> std::io::Result<()> {
            fs::create_dir_all(&dir)?;
            let tmp = dir.join(format!(".{}.tmp", v.hash()));
            fs::write(&tmp, v.source())?;
            fs::rename(&tmp, &path)
        };
        if let Err(e) = write() {
            tracing::warn!(variant = v.id(), path = %path.display(), error = %e, "cannot archive variant version");
        }
    }

    /// The directory being served, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.config.dir.as_deref()
    }
}

/// What only Shuangkou versions have: option schemas and configured hooks.
impl Registry<CompiledVariant> {
    /// Creates the Shuangkou registry and loads every variant ([`Registry::open_family`]).
    pub fn open(config: RegistryConfig) -> Result<(Registry, ReloadReport), RegistryError> {
        Registry::open_family(config)
    }

    /// A registry of the embedded Shuangkou scripts.
    pub fn embedded() -> Result<Registry, RegistryError> {
        Registry::embedded_family()
    }

    /// The machine-readable option schema of the active version of `id` (what `ListVariants`
    /// and `shuangkou variants list --json` publish), in declaration order.
    pub fn option_schema(&self, id: &str) -> Option<Vec<OptionSchema>> {
        self.active(id).map(|v| OptionSchema::of_all(v.options()))
    }

    /// `compiled` configured with `options` (`name` → value text), shared by every game of that
    /// version with the same options: the hooks are immutable, configuring runs two script calls
    /// and the maps take ~3 KB, once per game otherwise. The cache is bounded (it starts over
    /// beyond [`CONFIGURED_MAX`] entries) and keeps the versions it holds alive.
    pub fn configured(
        &self,
        compiled: &Arc<CompiledVariant>,
        options: &BTreeMap<String, String>,
    ) -> Result<Arc<ScriptVariant>, VariantError> {
        let key: ConfiguredKey = (
            compiled.id().to_string(),
            compiled.hash().to_string(),
            options
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        if let Some(h) = self
            .configured
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(h);
        }
        let hooks = Arc::new(configure(compiled, options)?);
        if let Ok(mut m) = self.configured.lock() {
            if m.len() >= CONFIGURED_MAX {
                m.clear();
            }
            m.insert(key, Arc::clone(&hooks));
        }
        Ok(hooks)
    }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}
