//! Watching the variants directory: any change (a file written, created, removed, renamed, or
//! the atomic `..data` symlink swap of a Kubernetes ConfigMap volume) triggers
//! [`Registry::reload`] once the directory has been quiet for the debounce interval.
//!
//! The watcher runs one background thread; dropping the [`DirWatcher`] stops it.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use super::registry::{Registry, RegistryError};

/// A running directory watcher. Drop it to stop watching.
pub struct DirWatcher {
    watcher: Option<notify::RecommendedWatcher>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for DirWatcher {
    fn drop(&mut self) {
        // Dropping the notify watcher drops the event sender; the thread sees the channel close.
        self.watcher.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn relevant(kind: &EventKind) -> bool {
    // Reading the scripts during a reload produces access events; they must not trigger another.
    !matches!(kind, EventKind::Access(_))
}

impl<V: super::Family> Registry<V> {
    /// Starts watching the registry's directory; changes reload it after `debounce` of quiet.
    pub fn watch(self: &Arc<Self>, debounce: Duration) -> Result<DirWatcher, RegistryError> {
        let Some(dir) = self.dir().map(|d| d.to_path_buf()) else {
            return Err(RegistryError::Watch {
                dir: "(embedded)".into(),
                message: "the registry has no directory to watch".into(),
            });
        };
        let (tx, rx) = mpsc::channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(event) if relevant(&event.kind) => {
                    let _ = tx.send(());
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "variants directory watch error"),
            })
            .map_err(|e| RegistryError::Watch {
                dir: dir.display().to_string(),
                message: e.to_string(),
            })?;
        watcher
            .watch(&dir, RecursiveMode::Recursive)
            .map_err(|e| RegistryError::Watch {
                dir: dir.display().to_string(),
                message: e.to_string(),
            })?;
        let registry = Arc::clone(self);
        let thread = std::thread::Builder::new()
            .name("variants-watch".into())
            .spawn(move || {
                // Wait for a first event, then for `debounce` without events, then reload.
                while rx.recv().is_ok() {
                    loop {
                        match rx.recv_timeout(debounce) {
                            Ok(()) => continue,
                            Err(RecvTimeoutError::Timeout) => break,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    match registry.reload() {
                        Ok(r) => tracing::info!(
                            activated = r.activated.len(),
                            rejected = r.rejected.len(),
                            removed = r.removed.len(),
                            "variants directory reloaded"
                        ),
                        Err(e) => tracing::warn!(error = %e, "variants directory reload failed; active versions unchanged"),
                    }
                }
            })
            .map_err(|e| RegistryError::Watch {
                dir: dir.display().to_string(),
                message: e.to_string(),
            })?;
        tracing::info!(dir = %dir.display(), ?debounce, "watching the variants directory");
        Ok(DirWatcher {
            watcher: Some(watcher),
            thread: Some(thread),
        })
    }
}
