//! Shards: the fixed partition of games that replicas own (issue "Replicas that divide the work").
//!
//! A game belongs to one of [`SHARDS`] shards by a stable hash of its id ([`shard_of`]): XXH3-64, a
//! specified, platform-independent hash, so every replica and every release puts a game in the
//! same shard. A replica owns a share of the shards through leases in the store; the Redis store
//! also puts every key of a game, and its shard's unfinished set, under the shard's hash tag
//! ([`hash_tag`]), so one game's scripts touch one Redis Cluster slot.
//!
//! The number is fixed for the life of a deployment's data: changing it moves games between
//! shards (and their keys between slots). 128 shards spread evenly over up to a few dozen replicas
//! and over every master of a cluster (16,384 slots), while a replica renews at most 128 leases.

/// How many shards games fall into.
pub const SHARDS: u16 = 128;

/// A shard's number, `0..SHARDS`.
pub type Shard = u16;

/// The shard game `id` belongs to.
pub fn shard_of(id: &str) -> Shard {
    (xxhash_rust::xxh3::xxh3_64(id.as_bytes()) % u64::from(SHARDS)) as Shard
}

/// Every shard, in order.
pub fn all_shards() -> impl Iterator<Item = Shard> + Clone {
    0..SHARDS
}

/// The Redis Cluster hash tag of a shard (`{s17}`): every key of a game carries its shard's tag.
pub fn hash_tag(shard: Shard) -> String {
    format!("{{s{shard}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_of_an_id_is_stable_and_in_range() {
        // Pinned values (XXH3-64 of the id, modulo 128, computed with the Python `xxhash` package): a change of hash would move every
        // stored game to another shard.
        assert_eq!(shard_of("game-1"), 37);
        assert_eq!(shard_of("7f3a9c"), 44);
        let ids: Vec<String> = (0..10_000).map(|i| format!("g{i:08x}")).collect();
        let mut counts = [0u32; SHARDS as usize];
        for id in &ids {
            let s = shard_of(id);
            assert!(s < SHARDS);
            assert_eq!(s, shard_of(id));
            counts[s as usize] += 1;
        }
        // 10,000 ids over 128 shards: about 78 each; none empty, none over twice the mean.
        assert!(counts.iter().all(|&c| c > 0 && c < 160), "{counts:?}");
    }

    #[test]
    fn hash_tags_are_braced() {
        assert_eq!(hash_tag(7), "{s7}");
    }
}
