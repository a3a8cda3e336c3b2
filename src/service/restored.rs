//! What a rebuild of a live game from a tail of its log gave (`Restored`): the game, or which
//! entries it needs first. The same for every game family, so that the owner of live games
//! (`games`) reads it without seeing a family's snapshot format (`session::snapshot`).

/// What a rebuild from a tail of the log gave (`session::Session::restore_from_tail`, or
/// another family's `LiveGame::restore_from_snapshots`).
pub enum Restored<G> {
    /// The game, rebuilt.
    Game(G),
    /// The newest usable snapshot is at seq `after + 1`, before the tail: rebuild again from the
    /// entries after `after` and the snapshots up to `after + 1` (the chain is already counted).
    EntriesAfter(u64),
    /// No snapshot serves and the tail is not the whole log: replay the whole log
    /// (`Session::replay_whole`), the snapshots' chain covering `covered` deals.
    WholeLog { covered: u32 },
}
