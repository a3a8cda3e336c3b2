//! The Lua scripts of the Redis store: each runs atomically on the server, loaded once and
//! called by SHA.

/// Compare-and-append. KEYS: game, log. ARGV: expected length, body, channel, read back (0/1).
/// Returns the new length (appended) | {1, current length, entries after the expected length
/// (at least 0) if asked} (conflict) | {2, 0, {}} (no game) | {3, length, {the frame if asked}}
/// (a finished game, compacted: its log is closed): a conflict carries the catch-up read in the
/// same round trip. The game's hash is looked up only while its log is empty: a log
/// has entries only once an append found the game, and both keys expire together.
pub(super) const APPEND_LUA: &str = r#"
local n = redis.call('LLEN', KEYS[2])
if n == 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 then return {2, 0, {}} end
  local done = redis.call('HGET', KEYS[1], 'entries')
  if done then
    if ARGV[4] == '1' then return {3, tonumber(done), {redis.call('HGET', KEYS[1], 'compact')}} end
    return {3, tonumber(done), {}}
  end
end
local expected = tonumber(ARGV[1])
if n == expected then
  n = redis.call('RPUSH', KEYS[2], ARGV[2])
  redis.call('PUBLISH', ARGV[3], n)
  return n
end
local from = math.max(expected, 0)
if ARGV[4] == '1' and from < n then
  return {1, n, redis.call('LRANGE', KEYS[2], from, -1)}
end
return {1, n, {}}
"#;

/// Idempotent create. KEYS: game, unfinished set, script key, [request key].
/// ARGV: id, body, has platform (0/1), platform, has request id (0/1), request id,
/// script: 0 (none) | 1 (hash only) | 2 (hash and text), script hash, script text.
/// Returns {0, ''} (created) | {1, existing id} | {2, ''} (id taken) | {3, ''} (the script table
/// lacks the hash sent without its text: send it again with the text).
pub(super) const CREATE_LUA: &str = r#"
if KEYS[4] then
  local existing = redis.call('GET', KEYS[4])
  if existing then return {1, existing} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {2, ''} end
if ARGV[7] ~= '0' and redis.call('EXISTS', KEYS[3]) == 0 then
  if ARGV[7] ~= '2' then return {3, ''} end
  redis.call('SET', KEYS[3], ARGV[9])
end
redis.call('HSET', KEYS[1], 'body', ARGV[2])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'platform', ARGV[4]) end
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'request_id', ARGV[6]) end
if ARGV[7] ~= '0' then redis.call('HSET', KEYS[1], 'script', ARGV[8]) end
if KEYS[4] then redis.call('SET', KEYS[4], ARGV[1]) end
redis.call('SADD', KEYS[2], ARGV[1])
return {0, ''}
"#;

/// Finishes a game: compacts it and starts the retention. KEYS: game, log, unfinished set,
/// snapshots, [request key]. ARGV: id, unix time, retention seconds (0: keep), the log length the
/// frame holds, the frame, compact (0/1: 0 when the game is gone or compacted already).
/// Returns 0 (done) | 1 (the log grew since it was read: read it and call again).
pub(super) const FINISH_LUA: &str = r#"
if ARGV[6] == '1' and redis.call('HEXISTS', KEYS[1], 'compact') == 0 then
  if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[4]) then return 1 end
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[4])
  redis.call('HSET', KEYS[1], 'compact', ARGV[5], 'entries', ARGV[4], 'finished_at', ARGV[2])
  local secs = tonumber(ARGV[3])
  if secs > 0 then
    redis.call('EXPIRE', KEYS[1], secs)
    if KEYS[5] then redis.call('EXPIRE', KEYS[5], secs) end
  end
end
redis.call('SREM', KEYS[3], ARGV[1])
return 0
"#;
