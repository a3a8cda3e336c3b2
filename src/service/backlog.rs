//! What a live game keeps of its recent past: the events of its last few actions (for WatchGame
//! streams that keep up and for the reply to an idempotent retry), the idempotency keys of those
//! actions, and each player's last presence entry (the reconnect window it opened or closed).
//!
//! Bounded per game, not per action: at most `limit` actions are kept (the creation, seq 0,
//! counts as one), whatever the match's length. What falls out of the window is in the store's
//! log and is re-derived from it on demand (`history`): a stream from an older seq replays the
//! log, a retry of an older action finds its entry there.

use crate::seat::Player;
use std::collections::VecDeque;

use crate::game::{Action, Event};

/// Actions kept by default (`--backlog-actions`).
pub const DEFAULT_ACTIONS: usize = crate::config::DEFAULT_BACKLOG_ACTIONS;

/// Idempotency keys remembered past the kept events, as fingerprints (8 bytes a key: [`Keys`]): a retry
/// of one of these actions is recognised before it could be judged as a new action (a retried
/// pass would otherwise be legal again and pass twice), and its entry is read from the store by
/// its seq. A retry older than this many keyed actions is judged as a new request (and answered
/// as a retry when it is refused: `rpc::retry::older`).
pub const KEYS_REMEMBERED: usize = 128;

/// One kept action.
struct Kept<E> {
    /// When it was accepted (Unix ms).
    at: u64,
    events: Vec<E>,
    /// The sending player and its idempotency key and request digest, if it came with a key.
    request: Option<(Player, Box<str>, Option<Box<str>>)>,
}

/// The recent past of one game; its events are Shuangkou's by default (a 升級 table keeps its
/// own event type, `shengji::table::TableEvent`, and tracks its reconnect windows itself).
pub struct Backlog<E = Event> {
    /// The seq of the oldest kept action.
    first: u64,
    kept: VecDeque<Kept<E>>,
    limit: usize,
    /// By player: whether its last `Disconnect`/`ReconnectExpired` entry was a `Disconnect`
    /// (its reconnect window is open, unless a reconnect closed it: the engine knows that).
    window_open: Vec<bool>,
    /// The last [`KEYS_REMEMBERED`] keyed actions that left `kept`.
    remembered: Keys,
}

/// The fingerprints and seqs of the last [`KEYS_REMEMBERED`] keyed actions that left the kept
/// events, 8 bytes a key (1 KiB a game once full, not the 2 KiB of a `(u64, u64)` a key): 32
/// bits of the key's [`fingerprint`] and the key's seq as its distance from the key after it.
///
/// 32 bits are enough because a fingerprint only names a candidate: the store's entry at its
/// seq is read and must carry the same player and request id (`history::find_request`), so a
/// false match (≈ 128 / 2³² a retry) is answered as no match, never with another action's
/// reply. A key more than `u32::MAX` seqs older than the next one is forgotten (its retry is
/// judged as a new request, as one older than the window is).
#[derive(Default)]
struct Keys {
    /// (32 bits of the fingerprint, its seq minus the seq of the key before it), oldest first
    /// (the oldest key's distance is not used).
    keys: VecDeque<(u32, u32)>,
    /// The seq of the newest key (`keys`' back).
    newest: u64,
    /// How many of the oldest keys are 32 bits of a [`sha256_fingerprint`] (resumed from a
    /// format-1 snapshot); the others are of a [`fingerprint`].
    sha256: usize,
}

/// The 32 bits of a fingerprint the window keeps (snapshots carry them as `u64`s; those of
/// older snapshots, all 64 bits, are cut the same way).
fn short(fingerprint: u64) -> u32 {
    fingerprint as u32
}

impl Keys {
    /// Remembers the key of the action at `seq` (after every key it holds), forgetting the
    /// oldest beyond [`KEYS_REMEMBERED`]; `sha256` if its fingerprint is a
    /// [`sha256_fingerprint`] (only keys resumed from a format-1 snapshot, which come first).
    fn push(&mut self, fingerprint: u64, seq: u64, sha256: bool) {
        let gap = seq
            .checked_sub(self.newest)
            .and_then(|gap| u32::try_from(gap).ok());
        let gap = match gap {
            Some(gap) if !self.keys.is_empty() => gap,
            // The first key, or one out of reach (or out of order, which no backlog writes): the
            // older keys are forgotten.
            _ => {
                self.keys.clear();
                self.sha256 = 0;
                0
            }
        };
        if self.keys.len() == KEYS_REMEMBERED {
            self.keys.pop_front();
            self.sha256 = self.sha256.saturating_sub(1);
        }
        self.keys.push_back((short(fingerprint), gap));
        self.newest = seq;
        if sha256 && self.sha256 + 1 == self.keys.len() {
            self.sha256 += 1;
        }
    }

    /// (32 bits of the fingerprint, seq, whether it is of a [`sha256_fingerprint`]) of each
    /// key, newest first.
    fn newest_first(&self) -> impl Iterator<Item = (u32, u64, bool)> + '_ {
        let mut seq = self.newest;
        let sha256 = self.sha256;
        self.keys
            .iter()
            .enumerate()
            .rev()
            .map(move |(i, &(short, gap))| {
                let this = seq;
                seq = seq.wrapping_sub(u64::from(gap));
                (short, this, i < sha256)
            })
    }

    /// The seq of the newest key whose 32 bits match: `want(bits, sha256)` is asked of each key,
    /// newest first, and only the match's seq is derived (the distances after it, summed), so a
    /// miss, the common case of a new request, reads the fingerprints alone.
    fn newest_match(&self, want: impl Fn(u32, bool) -> bool) -> Option<u64> {
        let sha256 = self.sha256;
        let i = self
            .keys
            .iter()
            .enumerate()
            .rev()
            .find(|&(i, &(short, _))| want(short, i < sha256))?
            .0;
        let after: u64 = self
            .keys
            .range(i + 1..)
            .map(|&(_, gap)| u64::from(gap))
            .sum();
        Some(self.newest.wrapping_sub(after))
    }
}

/// A fingerprint of `player`'s idempotency key (a match is confirmed against the store): XXH3
/// (64 bits) of the key, seeded with the player number. It needs no cryptographic strength, but
/// must be stable across builds and platforms (snapshots carry fingerprints, `session::snapshot`):
/// XXH3 is a specified algorithm, and its output does not depend on the platform.
fn fingerprint(player: Player, request_id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(request_id.as_bytes(), u64::from(player.number()))
}

/// The fingerprint snapshots of format 1 carry (written before [`fingerprint`] was XXH3): the
/// first 8 bytes of SHA-256 over the player number and the key. Only a backlog resumed from
/// such a snapshot computes it, for the keys it remembers from there ([`Memory::sha256_keys`]).
fn sha256_fingerprint(player: Player, request_id: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update([player.number()]);
    h.update(request_id.as_bytes());
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// What a snapshot keeps of a backlog (`session::snapshot`): the (fingerprint, seq) of the
/// last [`KEYS_REMEMBERED`] keyed actions, oldest first, and each player's open reconnect
/// window. The fingerprints written are the 32 bits the backlog keeps ([`Keys`]); a snapshot's
/// fingerprint is read as its low 32 bits, so the whole fingerprints of older snapshots serve
/// (format-1 snapshots carry all 64 bits of a SHA-256 one). The events are not kept: a session
/// resumed from a snapshot replays at least a backlog's worth of entries after it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Memory {
    pub keys: Vec<(u64, u64)>,
    pub window_open: Vec<bool>,
    /// How many of the oldest `keys` are SHA-256 fingerprints (kept from a format-1 snapshot,
    /// whose fingerprints all are); the rest are XXH3 ones.
    pub sha256_keys: u32,
}

impl<E> Backlog<E> {
    /// A backlog holding the creation events (seq 0), keeping at most `limit` actions.
    pub fn new(created_at: u64, events: Vec<E>, players: usize, limit: usize) -> Backlog<E> {
        let mut kept = VecDeque::with_capacity(limit.clamp(1, DEFAULT_ACTIONS));
        kept.push_back(Kept {
            at: created_at,
            events,
            request: None,
        });
        Backlog {
            first: 0,
            kept,
            limit: limit.max(1),
            window_open: vec![false; players],
            remembered: Keys::default(),
        }
    }

    /// A backlog resuming after the action at `seq` from what a snapshot kept of it: no
    /// events yet (the actions after `seq` are pushed next), the keys and windows as they were.
    pub fn resume(seq: u64, memory: Memory, players: usize, limit: usize) -> Backlog {
        let mut window_open = memory.window_open;
        window_open.resize(players, false);
        let skip = memory.keys.len().saturating_sub(KEYS_REMEMBERED);
        let sha256_keys = (memory.sha256_keys as usize).saturating_sub(skip);
        let mut remembered = Keys::default();
        for (i, (fingerprint, seq)) in memory.keys.into_iter().skip(skip).enumerate() {
            remembered.push(fingerprint, seq, i < sha256_keys);
        }
        Backlog {
            first: seq + 1,
            kept: VecDeque::with_capacity(limit.clamp(1, DEFAULT_ACTIONS)),
            limit: limit.max(1),
            window_open,
            remembered,
        }
    }

    /// What a snapshot keeps of this backlog ([`Memory`]).
    pub fn memory(&self) -> Memory {
        let kept = self.kept.iter().enumerate().filter_map(|(i, k)| {
            let (player, id, _) = k.request.as_ref()?;
            Some((short(fingerprint(*player, id)), self.first + i as u64))
        });
        let mut keys: Vec<(u32, u64)> = self
            .remembered
            .newest_first()
            .map(|(short, seq, _)| (short, seq))
            .collect();
        keys.reverse();
        keys.extend(kept);
        let keys: Vec<(u64, u64)> = keys
            .into_iter()
            .map(|(f, seq)| (u64::from(f), seq))
            .collect();
        let skip = keys.len().saturating_sub(KEYS_REMEMBERED);
        Memory {
            keys: keys[skip..].to_vec(),
            window_open: self.window_open.clone(),
            sha256_keys: u32::try_from(self.remembered.sha256.saturating_sub(skip))
                .unwrap_or(u32::MAX),
        }
    }

    /// Keeps at most `limit` actions from now on (the oldest go first).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit.max(1);
        self.trim(self.limit);
    }

    /// Lets the oldest actions go until `keep` are kept.
    fn trim(&mut self, keep: usize) {
        while self.kept.len() > keep {
            if let Some(Kept {
                request: Some((player, id, _)),
                ..
            }) = self.kept.pop_front()
            {
                self.remembered
                    .push(fingerprint(player, &id), self.first, false);
            }
            self.first += 1;
        }
    }

    /// Records the events of the action that made the game's seq `seq` (the next one), with the
    /// sending player's idempotency key and request digest, if any (borrowed, they are copied;
    /// owned, moved).
    pub fn push_events<K: Into<Box<str>>>(
        &mut self,
        seq: u64,
        player: Player,
        at: u64,
        events: Vec<E>,
        request: Option<(K, Option<K>)>,
    ) {
        debug_assert_eq!(seq, self.first + self.kept.len() as u64);
        // Room is made before the push, so the kept actions never outgrow `limit` (a deque
        // full at `limit` would double its capacity for one more).
        self.trim(self.limit - 1);
        // An action's events are built by pushes (a `Vec` of at least 4 when it grows), most
        // actions make one or two: the kept ones hold what they use.
        let mut events = events;
        events.shrink_to_fit();
        self.kept.push_back(Kept {
            at,
            events,
            request: request.map(|(id, digest)| (player, id.into(), digest.map(Into::into))),
        });
    }

    /// The seq of the oldest action kept: events of earlier actions come from the store.
    pub fn first_seq(&self) -> u64 {
        self.first
    }

    /// The action at `seq` if kept: when it was accepted and its events.
    pub fn action_at(&self, seq: u64) -> Option<(u64, &[E])> {
        let i = usize::try_from(seq.checked_sub(self.first)?).ok()?;
        self.kept.get(i).map(|k| (k.at, k.events.as_slice()))
    }

    /// The seq of a kept action `player` caused with `request_id`, and its request's digest.
    pub fn request_seq(&self, player: Player, request_id: &str) -> Option<(u64, Option<&str>)> {
        self.kept
            .iter()
            .enumerate()
            .find_map(|(i, k)| match &k.request {
                Some((p, id, digest)) if *p == player && &**id == request_id => {
                    Some((self.first + i as u64, digest.as_deref()))
                }
                _ => None,
            })
    }

    /// The seq of an action older than the kept ones that `player` may have caused with
    /// `request_id` (its fingerprint is remembered): the store's entry at that seq says.
    pub fn remembered_seq(&self, player: Player, request_id: &str) -> Option<u64> {
        let f = short(fingerprint(player, request_id));
        let old =
            (self.remembered.sha256 > 0).then(|| short(sha256_fingerprint(player, request_id)));
        self.remembered.newest_match(|g, sha256| match sha256 {
            true => old == Some(g),
            false => g == f,
        })
    }

    /// True when `player`'s last presence entry opened a reconnect window.
    pub fn window_open(&self, player: Player) -> bool {
        self.window_open
            .get(player.index())
            .copied()
            .unwrap_or(false)
    }
}

impl Backlog<Event> {
    /// Records the action that made the game's seq `seq` (the next one).
    pub fn push<K: Into<Box<str>>>(
        &mut self,
        seq: u64,
        player: Player,
        action: &Action,
        at: u64,
        events: Vec<Event>,
        request: Option<(K, Option<K>)>,
    ) {
        match action {
            Action::Disconnect | Action::ReconnectExpired => {
                if let Some(open) = self.window_open.get_mut(player.index()) {
                    *open = *action == Action::Disconnect;
                }
            }
            _ => {}
        }
        self.push_events(seq, player, at, events, request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An action without an idempotency key.
    const NO_KEY: Option<(&str, Option<&str>)> = None;

    #[test]
    fn keeps_the_last_actions_and_their_keys_only() {
        let mut b = Backlog::new(5, Vec::new(), 4, 3);
        for seq in 1..=5u64 {
            let id = format!("r{seq}");
            b.push(
                seq,
                Player::new((seq % 4) as u8),
                &Action::Pass,
                100 + seq,
                Vec::new(),
                Some((id.as_str(), None)),
            );
        }
        assert_eq!(b.first_seq(), 3);
        assert!(b.action_at(2).is_none());
        assert_eq!(b.action_at(3).map(|(at, _)| at), Some(103));
        assert_eq!(b.action_at(5).map(|(at, _)| at), Some(105));
        assert!(b.action_at(6).is_none());
        assert_eq!(b.request_seq(Player::new(1), "r5"), Some((5, None)));
        assert_eq!(
            b.request_seq(Player::new(2), "r5"),
            None,
            "another player's key"
        );
        assert_eq!(
            b.request_seq(Player::new(2), "r2"),
            None,
            "out of the window"
        );
        b.push(
            6,
            Player::new(2),
            &Action::Disconnect,
            106,
            Vec::new(),
            NO_KEY,
        );
        assert!(b.window_open(Player::new(2)));
        b.push(
            7,
            Player::new(2),
            &Action::ReconnectExpired,
            107,
            Vec::new(),
            NO_KEY,
        );
        assert!(!b.window_open(Player::new(2)));
    }

    /// A backlog of `limit` actions after `actions` actions, every third one keyed (`k{seq}`,
    /// by player `seq % 4`): the keyed actions are far apart in seqs, as in a game with bots.
    fn keyed(actions: u64, limit: usize) -> Backlog {
        let mut b = Backlog::new(0, Vec::new(), 4, limit);
        for seq in 1..=actions {
            let id = format!("k{seq}");
            let key = (seq % 3 == 0).then_some((id.as_str(), None));
            b.push(seq, player(seq), &Action::Pass, seq, Vec::new(), key);
        }
        b
    }

    fn player(seq: u64) -> Player {
        Player::new((seq % 4) as u8)
    }

    #[test]
    fn the_kept_actions_hold_no_spare_capacity() {
        let mut b = Backlog::new(0, Vec::new(), 4, DEFAULT_ACTIONS);
        let full = b.kept.capacity();
        for seq in 1..=50u64 {
            // Spare room, as an action's events grown by pushes have.
            let mut events = Vec::with_capacity(4);
            events.push(Event::Passed {
                seat: crate::seat::Seat::new(0),
                auto: false,
            });
            b.push(seq, player(seq), &Action::Pass, seq, events, NO_KEY);
            assert!(b.kept.len() <= DEFAULT_ACTIONS);
            assert_eq!(b.kept.capacity(), full, "the deque of kept actions grew");
            let kept = b.kept.back().map(|k| k.events.capacity());
            assert_eq!(kept, Some(1), "the events of seq {seq} hold spare capacity");
        }
    }

    #[test]
    fn remembers_the_seqs_of_the_last_keys_that_left_the_kept_actions() {
        let b = keyed(1000, 3);
        assert_eq!(b.first_seq(), 998);
        // Keyed actions that left the kept ones: seqs 3, 6, …, 996; the last 128 remembered.
        let left: Vec<u64> = (1..998).filter(|s| s % 3 == 0).collect();
        let (forgotten, remembered) = left.split_at(left.len() - KEYS_REMEMBERED);
        for &seq in remembered {
            let id = format!("k{seq}");
            assert_eq!(b.remembered_seq(player(seq), &id), Some(seq), "key {id}");
            assert_eq!(
                b.remembered_seq(player(seq + 1), &id),
                None,
                "{id}, another player"
            );
        }
        for &seq in forgotten {
            assert_eq!(
                b.remembered_seq(player(seq), &format!("k{seq}")),
                None,
                "k{seq}"
            );
        }
        // 8 bytes a key: the window of a game holds 1 KiB once full.
        assert_eq!(b.remembered.keys.len(), KEYS_REMEMBERED);
        let key = b.remembered.keys.front().map_or(0, std::mem::size_of_val);
        let bytes = b.remembered.keys.capacity() * key;
        assert!(bytes <= 8 * KEYS_REMEMBERED, "{bytes} bytes for the keys");
    }

    #[test]
    fn a_snapshot_memory_resumes_to_the_same_keys() {
        let b = keyed(1000, 3);
        let memory = b.memory();
        assert_eq!(memory.keys.len(), KEYS_REMEMBERED);
        let resumed = Backlog::<Event>::resume(1000, memory.clone(), 4, 3);
        assert_eq!(
            resumed.memory(),
            memory,
            "a resumed backlog writes the same memory"
        );
        // The kept actions' keys are remembered by the resumed backlog (it has no events).
        for seq in (1..=1000)
            .filter(|s| s % 3 == 0)
            .skip(333 - KEYS_REMEMBERED)
        {
            let id = format!("k{seq}");
            assert_eq!(resumed.remembered_seq(player(seq), &id), Some(seq), "{id}");
        }
    }

    #[test]
    fn the_whole_fingerprints_of_older_snapshots_are_read_as_the_same_keys() {
        // What a format-1 snapshot (written before the window kept 32 bits) held: the whole
        // SHA-256 fingerprint.
        let keys: Vec<(u64, u64)> = (1..=200u64)
            .map(|seq| (sha256_fingerprint(player(seq), &format!("k{seq}")), seq * 5))
            .collect();
        let memory = Memory {
            keys,
            window_open: vec![false, true, false, false],
            sha256_keys: 200,
        };
        let b = Backlog::<Event>::resume(1000, memory, 4, 3);
        for seq in 1..=200u64 {
            let want = (seq > 200 - KEYS_REMEMBERED as u64).then_some(seq * 5);
            let id = format!("k{seq}");
            assert_eq!(b.remembered_seq(player(seq), &id), want, "{id}");
        }
        assert!(b.window_open(Player::new(1)));
    }

    #[test]
    fn a_key_out_of_reach_of_the_next_forgets_the_older_ones() {
        let far = u64::from(u32::MAX) + 10;
        let keys = vec![
            (fingerprint(player(1), "a"), 7),
            (fingerprint(player(1), "b"), 9),
            (fingerprint(player(1), "c"), 9 + far),
            (fingerprint(player(1), "d"), 12 + far),
        ];
        let memory = Memory {
            keys,
            window_open: Vec::new(),
            sha256_keys: 0,
        };
        let b = Backlog::<Event>::resume(20 + far, memory, 4, 3);
        assert_eq!(b.remembered_seq(player(1), "a"), None);
        assert_eq!(b.remembered_seq(player(1), "b"), None);
        assert_eq!(b.remembered_seq(player(1), "c"), Some(9 + far));
        assert_eq!(b.remembered_seq(player(1), "d"), Some(12 + far));
    }

    /// A backlog resumed from a format-1 snapshot (SHA-256 fingerprints) recognises those keys
    /// and the XXH3 ones of the actions after it; the count of SHA-256 ones follows them out of
    /// the window and into the next snapshot.
    #[test]
    fn keys_remembered_from_a_format_1_snapshot_are_recognised() {
        let (p1, p2) = (Player::new(1), Player::new(2));
        let old: Vec<(u64, u64)> = (1..=KEYS_REMEMBERED as u64)
            .map(|seq| (sha256_fingerprint(p1, &format!("old{seq}")), seq))
            .collect();
        let memory = Memory {
            keys: old,
            window_open: vec![false; 4],
            sha256_keys: KEYS_REMEMBERED as u32,
        };
        let last = KEYS_REMEMBERED as u64;
        let mut b = Backlog::<Event>::resume(last, memory, 4, 1);
        assert_eq!(b.remembered_seq(p1, "old1"), Some(1));
        assert_eq!(b.remembered_seq(p1, "old128"), Some(128));
        assert_eq!(b.remembered_seq(p2, "old1"), None, "another player's key");
        for seq in last + 1..=last + 3 {
            let id = format!("new{seq}");
            b.push(
                seq,
                p2,
                &Action::Pass,
                seq,
                Vec::new(),
                Some((id.as_str(), None)),
            );
        }
        // Two new keys left the kept action for `remembered`, pushing out old1 and old2.
        assert_eq!(b.remembered_seq(p1, "old1"), None);
        assert_eq!(b.remembered_seq(p1, "old3"), Some(3));
        assert_eq!(b.remembered_seq(p2, "new129"), Some(129));
        assert_eq!(b.remembered_seq(p2, "new130"), Some(130));
        assert_eq!(b.request_seq(p2, "new131"), Some((131, None)));
        let next = b.memory();
        assert_eq!(next.keys.len(), KEYS_REMEMBERED);
        assert_eq!(next.sha256_keys, KEYS_REMEMBERED as u32 - 3);
        let again = Backlog::<Event>::resume(last + 3, next, 4, 1);
        assert_eq!(again.remembered_seq(p1, "old4"), Some(4));
        assert_eq!(again.remembered_seq(p1, "old3"), None, "out of the window");
        assert_eq!(again.remembered_seq(p2, "new131"), Some(131));
    }
}
