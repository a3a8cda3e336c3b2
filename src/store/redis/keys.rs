//! Key and channel names under the store's prefix. Every key of one game, its shard's
//! unfinished set and its shard's copy of a script carry the shard's hash tag (`{s17}`), so one
//! game's scripts touch one Redis Cluster slot.

use crate::store::shard::{Shard, hash_tag, shard_of};

/// Key names.
#[derive(Clone)]
pub(super) struct Keys {
    pub(super) prefix: String,
}

impl Keys {
    /// `<prefix>{sN}:` for game `id`'s shard.
    fn tagged(&self, id: &str) -> String {
        self.of_shard(shard_of(id))
    }
    fn of_shard(&self, shard: Shard) -> String {
        format!("{}{}:", self.prefix, hash_tag(shard))
    }
    pub(super) fn game(&self, id: &str) -> String {
        format!("{}game:{id}", self.tagged(id))
    }
    pub(super) fn log(&self, id: &str) -> String {
        format!("{}log:{id}", self.tagged(id))
    }
    pub(super) fn snapshots(&self, id: &str) -> String {
        format!("{}snap:{id}", self.tagged(id))
    }
    /// The script table's entry for `hash` in game `id`'s shard (one copy per shard and version).
    pub(super) fn script(&self, id: &str, hash: &str) -> String {
        format!("{}script:{hash}", self.tagged(id))
    }
    pub(super) fn unfinished(&self, shard: Shard) -> String {
        format!("{}unfinished", self.of_shard(shard))
    }
    pub(super) fn events(&self, id: &str) -> String {
        format!("{}events:{id}", self.tagged(id))
    }
    /// Game `id` if `channel` is its events channel.
    pub(super) fn events_of<'a>(&self, channel: &'a str) -> Option<&'a str> {
        let rest = channel.strip_prefix(self.prefix.as_str())?;
        let (_, id) = rest.split_once("}:events:")?;
        (self.events(id) == channel).then_some(id)
    }
    /// The idempotent create's key of `request_id`, in the shard of the game it creates (`id`):
    /// the service derives the id from the request, so a retry names the same shard.
    pub(super) fn request(&self, id: &str, platform: Option<&str>, request_id: &str) -> String {
        let tag = self.tagged(id);
        match platform {
            Some(p) => format!("{tag}req:{}:{p}:{request_id}", p.len()),
            None => format!("{tag}req:-:{request_id}"),
        }
    }
}

/// The names of the layout before shards (no hash tag; one unfinished set and one script table):
/// what the one-time migration at start renames.
#[derive(Clone)]
pub(super) struct UntaggedKeys {
    pub(super) prefix: String,
}

impl UntaggedKeys {
    pub(super) fn game(&self, id: &str) -> String {
        format!("{}game:{id}", self.prefix)
    }
    pub(super) fn log(&self, id: &str) -> String {
        format!("{}log:{id}", self.prefix)
    }
    pub(super) fn snapshots(&self, id: &str) -> String {
        format!("{}snap:{id}", self.prefix)
    }
    pub(super) fn script(&self, hash: &str) -> String {
        format!("{}script:{hash}", self.prefix)
    }
    pub(super) fn unfinished(&self) -> String {
        format!("{}unfinished", self.prefix)
    }
    pub(super) fn request(&self, platform: Option<&str>, request_id: &str) -> String {
        match platform {
            Some(p) => format!("{}req:{}:{p}:{request_id}", self.prefix, p.len()),
            None => format!("{}req:-:{request_id}", self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_a_game_carries_its_shard_tag() {
        let keys = Keys {
            prefix: "sk:".into(),
        };
        // shard_of("game-1") is 37 (pinned in store::shard).
        assert_eq!(keys.game("game-1"), "sk:{s37}:game:game-1");
        assert_eq!(keys.log("game-1"), "sk:{s37}:log:game-1");
        assert_eq!(keys.snapshots("game-1"), "sk:{s37}:snap:game-1");
        assert_eq!(keys.events("game-1"), "sk:{s37}:events:game-1");
        assert_eq!(keys.script("game-1", "h"), "sk:{s37}:script:h");
        assert_eq!(
            keys.request("game-1", Some("acme"), "r"),
            "sk:{s37}:req:4:acme:r"
        );
        assert_eq!(keys.unfinished(3), "sk:{s3}:unfinished");
        assert_eq!(keys.events_of("sk:{s37}:events:game-1"), Some("game-1"));
        // A channel of another shard's tag for the id is not its channel.
        assert_eq!(keys.events_of("sk:{s1}:events:game-1"), None);
        assert_eq!(keys.events_of("other:{s37}:events:game-1"), None);
    }
}
