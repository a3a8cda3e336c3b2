//! The embedded store's in-memory index: where each game's frames are, its log length, and the
//! idempotency keys. Rebuilt from the journal at open ([`Index::replay`]); changed only by the
//! writer thread after a durable commit. Holds positions, never bodies; the one exception is the
//! script table (one text per variant version, a handful in all), which every load needs.
//!
//! Its only I/O is the positions side file ([`super::sidefile`]): full chunks of a log's
//! positions are written there as they fill, and read back by [`Game::page`].

use std::collections::HashMap;
use std::sync::Arc;

use super::chunked::{Positions, Slice};
use super::journal::{self, Finished, Rec, Span};
use super::sidefile::SideFile;

/// Where a game's frames are.
#[derive(Clone, Debug)]
pub enum Place {
    /// In the journal: the `Create` frame and one frame per log entry.
    Journal { record: Span, entries: Positions },
    /// In the archive: one frame with everything; `entries` log entries.
    Archive { span: Span, entries: u64 },
}

/// One game.
#[derive(Clone, Debug)]
pub struct Game {
    pub place: Place,
    /// Unix seconds when it finished (`None` while in progress).
    pub finished: Option<u64>,
    pub platform: Option<Box<str>>,
    pub request_id: Option<Box<str>>,
    /// Journal bytes of this game's frames (`Create`, `Append`, `Finish`, `Archived`).
    pub journal_bytes: u64,
}

impl Game {
    /// Its head as a finished game's frames carry it, finished at `at`.
    pub fn finished_head<'a>(&'a self, id: &'a str, at: u64) -> Finished<'a> {
        Finished {
            id,
            platform: self.platform.as_deref(),
            request_id: self.request_id.as_deref(),
            at,
        }
    }

    /// What a read of entries `first..first + limit` needs: where the game's record is, the
    /// positions of those entries of a journal log to read (a page of a long log reads and
    /// copies a page's positions, not the whole log's; no I/O here, so it is taken under the
    /// index's lock) and the index of the page's first entry (`first`, at most the log's
    /// length); an archived game's one frame.
    pub fn page(&self, first: usize, limit: usize) -> Page {
        match &self.place {
            Place::Journal { record, entries } => {
                let first = first.min(entries.len());
                Page::Journal {
                    record: *record,
                    entries: entries.slice(first, limit),
                    first,
                }
            }
            Place::Archive { span, .. } => Page::Archive { span: *span },
        }
    }

    /// Entries in the game's log.
    pub fn log_len(&self) -> u64 {
        match &self.place {
            Place::Journal { entries, .. } => entries.len() as u64,
            Place::Archive { entries, .. } => *entries,
        }
    }
}

/// The frames a read of a game needs ([`Game::page`]).
pub enum Page {
    /// In the journal: the `Create` frame, and the frames of entries `first..` (their
    /// positions read from the side file, [`Slice::read`]).
    Journal {
        record: Span,
        entries: Slice,
        first: usize,
    },
    /// In the archive: its one frame.
    Archive { span: Span },
}

/// An idempotency key: platform and request id.
pub type RequestKey = (Option<Box<str>>, Box<str>);

/// Every game of the store.
pub struct Index {
    pub games: HashMap<Box<str>, Game>,
    pub requests: HashMap<RequestKey, Box<str>>,
    /// The script table: each version hash's text.
    pub scripts: HashMap<Box<str>, Arc<str>>,
    /// Journal bytes a compaction folds away: finished games still in the journal.
    pub garbage: u64,
    /// Journal bytes a compaction keeps: games in progress, and one frame per archived game.
    pub kept: u64,
    /// The positions side file of this index's journal.
    pub side: SideFile,
}

pub fn request_key(platform: Option<&str>, request_id: &str) -> RequestKey {
    (platform.map(Box::from), Box::from(request_id))
}

impl Index {
    /// An empty index whose logs spill their positions to `side`.
    pub fn new(side: SideFile) -> Index {
        Index {
            games: HashMap::new(),
            requests: HashMap::new(),
            scripts: HashMap::new(),
            garbage: 0,
            kept: 0,
            side,
        }
    }

    /// Applies one committed journal frame (at open, or by the writer after a commit). A frame
    /// inconsistent with the ones before (a second create, an append out of order, a record for
    /// an unknown game) is an error: it cannot have been written by a commit.
    pub fn apply(&mut self, span: Span, rec: &Rec<'_>) -> Result<(), String> {
        let bytes = u64::from(span.len);
        match *rec {
            Rec::Create {
                id,
                platform,
                request_id,
                script,
                ..
            } => {
                if self.games.contains_key(id) {
                    return Err(format!("second create of game {id}"));
                }
                if let Some(hash) = script.filter(|h| !self.scripts.contains_key(*h)) {
                    return Err(format!("game {id} pins script {hash}, not in the journal"));
                }
                self.put(
                    id,
                    Game {
                        place: Place::Journal {
                            record: span,
                            entries: Positions::default(),
                        },
                        finished: None,
                        platform: platform.map(Box::from),
                        request_id: request_id.map(Box::from),
                        journal_bytes: bytes,
                    },
                );
            }
            Rec::Script { hash, text } => {
                if self.scripts.contains_key(hash) {
                    return Err(format!("second script frame for version {hash}"));
                }
                self.scripts.insert(Box::from(hash), Arc::from(text));
                self.kept += bytes;
            }
            Rec::Append { id, seq, .. } => {
                let g = self
                    .games
                    .get_mut(id)
                    .ok_or_else(|| format!("append to unknown game {id}"))?;
                let (Place::Journal { entries, .. }, None) = (&mut g.place, g.finished) else {
                    return Err(format!("append to finished game {id}"));
                };
                if seq != entries.len() as u64 + 1 {
                    return Err(format!("append {seq} out of order in game {id}"));
                }
                entries.push(span, &mut self.side);
                g.journal_bytes += bytes;
                self.kept += bytes;
            }
            Rec::Finish { id, at } => {
                let g = self
                    .games
                    .get_mut(id)
                    .ok_or_else(|| format!("finish of unknown game {id}"))?;
                if g.finished.is_some() || matches!(g.place, Place::Archive { .. }) {
                    return Err(format!("second finish of game {id}"));
                }
                g.finished = Some(at);
                self.kept -= g.journal_bytes;
                g.journal_bytes += bytes;
                self.garbage += g.journal_bytes;
            }
            Rec::Archived {
                game:
                    Finished {
                        id,
                        platform,
                        request_id,
                        at,
                    },
                entries,
                span: archived,
            } => {
                if self.games.contains_key(id) {
                    return Err(format!("archived game {id} appears twice"));
                }
                self.put(
                    id,
                    Game {
                        place: Place::Archive {
                            span: archived,
                            entries,
                        },
                        finished: Some(at),
                        platform: platform.map(Box::from),
                        request_id: request_id.map(Box::from),
                        journal_bytes: bytes,
                    },
                );
            }
            Rec::Game { .. } => return Err("archive frame in the journal".into()),
        }
        Ok(())
    }

    /// Adds a game (in progress or archived) and its idempotency key.
    pub fn put(&mut self, id: &str, game: Game) {
        if let Some(rid) = &game.request_id {
            self.requests
                .insert(request_key(game.platform.as_deref(), rid), Box::from(id));
        }
        if game.finished.is_some() && matches!(game.place, Place::Journal { .. }) {
            self.garbage += game.journal_bytes;
        } else {
            self.kept += game.journal_bytes;
        }
        self.games.insert(Box::from(id), game);
    }

    /// Rebuilds the index from a journal file, spilling the logs' positions to `side` as their
    /// chunks fill. Returns it, the end of the valid data, and why the scan stopped early (a
    /// torn tail) if it did.
    pub fn replay(
        file: &super::disk::DiskFile,
        side: SideFile,
    ) -> std::io::Result<(Index, u64, Option<String>)> {
        let mut index = Index::new(side);
        let (end, stop) = journal::scan(file, |span, payload| {
            let rec = journal::decode(payload)?;
            index.apply(span, &rec)
        })?;
        index.shrink_to_fit();
        Ok((index, end, stop))
    }

    /// Gives back the capacity the maps and the logs' position lists grew past their length
    /// while the index was rebuilt (so that a recovered server holds no more than the one that
    /// wrote the journal).
    pub fn shrink_to_fit(&mut self) {
        for g in self.games.values_mut() {
            if let Place::Journal { entries, .. } = &mut g.place {
                entries.shrink_to_fit();
            }
        }
        self.games.shrink_to_fit();
        self.requests.shrink_to_fit();
        self.scripts.shrink_to_fit();
    }
}
