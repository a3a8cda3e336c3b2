//! The in-memory store: nothing survives a restart. For tests, benchmarks and `--store memory`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use super::{Appended, Created, GameRecord, LogEntry, LogPage, PinnedScript, StoreError};

struct Stored {
    record: GameRecord,
    log: Vec<LogEntry>,
    finished: bool,
    notify: broadcast::Sender<u64>,
}

/// Games in a map behind one mutex (operations are short and never await while holding it).
#[derive(Default)]
pub struct MemoryStore {
    games: Mutex<HashMap<String, Stored>>,
    by_request: Mutex<HashMap<(Option<String>, String), String>>,
    /// The script table: one text per version hash, shared by every record that pins it.
    scripts: Mutex<HashMap<String, Arc<str>>>,
    /// Snapshots of game states (`store::snapshots`).
    snapshots: super::snapshots::SnapshotMap,
}

fn poisoned(op: &'static str) -> StoreError {
    StoreError {
        op,
        message: "internal lock poisoned".into(),
    }
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// The snapshots of game states (`store::snapshots`).
    pub fn snapshots(&self) -> &super::snapshots::SnapshotMap {
        &self.snapshots
    }

    pub fn create(&self, record: &GameRecord) -> Result<Created, StoreError> {
        let mut by_request = self.by_request.lock().map_err(|_| poisoned("create"))?;
        if let Some(rid) = &record.request_id {
            let key = (record.platform.clone(), rid.clone());
            if let Some(existing) = by_request.get(&key) {
                return Ok(Created::Existing(existing.clone()));
            }
            by_request.insert(key, record.id.clone());
        }
        let mut games = self.games.lock().map_err(|_| poisoned("create"))?;
        if games.contains_key(&record.id) {
            return Err(StoreError {
                op: "create",
                message: format!("game {} exists", record.id),
            });
        }
        let script = match &record.script {
            Some(s) => {
                let mut scripts = self.scripts.lock().map_err(|_| poisoned("create"))?;
                let text = scripts
                    .entry(s.hash.clone())
                    .or_insert_with(|| Arc::clone(&s.text));
                Some(PinnedScript {
                    hash: s.hash.clone(),
                    text: Arc::clone(text),
                })
            }
            None => None,
        };
        // Every game has its channel from the start, so its buffer is per-game memory (~48 B a
        // slot): 16 slots, like a live game's own notifier (a lagging watcher re-reads the log).
        let (notify, _) = broadcast::channel(16);
        games.insert(
            record.id.clone(),
            Stored {
                record: GameRecord {
                    script,
                    ..record.clone()
                },
                log: Vec::new(),
                finished: false,
                notify,
            },
        );
        Ok(Created::New)
    }

    pub fn load(&self, id: &str) -> Result<Option<(GameRecord, Vec<LogEntry>)>, StoreError> {
        let games = self.games.lock().map_err(|_| poisoned("load"))?;
        Ok(games.get(id).map(|g| (g.record.clone(), g.log.clone())))
    }

    pub fn log_lengths(&self, ids: &[String]) -> Result<Vec<u64>, StoreError> {
        let games = self.games.lock().map_err(|_| poisoned("log_lengths"))?;
        Ok(ids
            .iter()
            .map(|id| games.get(id).map_or(0, |g| g.log.len() as u64))
            .collect())
    }

    pub fn head(&self, id: &str) -> Result<Option<(GameRecord, u64)>, StoreError> {
        let games = self.games.lock().map_err(|_| poisoned("head"))?;
        Ok(games
            .get(id)
            .map(|g| (g.record.clone(), g.log.len() as u64)))
    }

    pub fn entries(&self, id: &str, page: LogPage) -> Result<Vec<LogEntry>, StoreError> {
        let games = self.games.lock().map_err(|_| poisoned("entries"))?;
        Ok(games
            .get(id)
            .map(|g| {
                let start = usize::try_from(page.after).unwrap_or(usize::MAX);
                g.log.iter().skip(start).take(page.limit).cloned().collect()
            })
            .unwrap_or_default())
    }

    pub fn append(&self, id: &str, entry: &LogEntry) -> Result<Appended, StoreError> {
        let mut games = self.games.lock().map_err(|_| poisoned("append"))?;
        let g = games.get_mut(id).ok_or_else(|| StoreError {
            op: "append",
            message: format!("no game {id}"),
        })?;
        let current = g.log.len() as u64;
        if entry.seq != current + 1 {
            return Ok(Appended::Conflict { current });
        }
        g.log.push(entry.clone());
        let _ = g.notify.send(entry.seq);
        Ok(Appended::Ok)
    }

    pub fn subscribe(&self, id: &str) -> broadcast::Receiver<u64> {
        match self.games.lock() {
            Ok(games) => match games.get(id) {
                Some(g) => g.notify.subscribe(),
                None => broadcast::channel(1).1,
            },
            Err(_) => broadcast::channel(1).1,
        }
    }

    pub fn unfinished(&self) -> Vec<String> {
        self.games
            .lock()
            .map(|g| {
                g.iter()
                    .filter(|(_, s)| !s.finished)
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn finish(&self, id: &str) {
        if let Ok(mut games) = self.games.lock() {
            if let Some(g) = games.get_mut(id) {
                g.finished = true;
            }
        }
    }
}
