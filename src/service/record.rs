//! A game's creation record: everything needed to rebuild it from its log, as stored.
//!
//! The record pins the variant version (content hash, and the script text itself so the version
//! survives restarts and reaches other replicas), holds the seed (revealed only by the replay
//! once the match is over), the options, the players, and the SHA-256 digests of the seat and
//! spectator tokens — never the tokens.
//!
//! Tokens are derived: `HMAC-SHA256(token key, game id | role)`, truncated to 128 bits. The
//! derivation lets an idempotent `CreateGame` retry return the same tokens, while the store only
//! ever holds their digests.
//!
//! Depends on `auth` (token digests) and `status`; never on the wire types (`wire` turns a
//! `CreateGameRequest` into a [`NewGame`]).

use std::collections::BTreeMap;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::auth::{GameToken, Role, SecretHash, SecretText, hash_secret};
use super::status::{ApiError, Reason};
use crate::cards::CardSet;
use crate::seat::Player;
use crate::variants::CompiledVariant;

mod idempotency;
use idempotency::at_most_bytes;
pub use idempotency::{
    MAX_REQUEST_ID_BYTES, RequestDigest, check_request_id, idempotency_conflict, request_digest,
};

/// The stored creation record (JSON). What a field holds by default is not written (no
/// platform, no script text, no options, no preset hands, the default player names), so a game
/// in progress costs its store fewer bytes; records written with every field read the same.
/// Decode with [`Record::decode`] (or [`Record::complete`] after decoding a record that embeds
/// this one), which restores the default player names.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    pub variant: String,
    pub version: String,
    /// The variant script at that version (empty: in the store's script table).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub script: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    pub deals: u32,
    /// Player names; not written when they are the defaults (`player0`…, one per seat digest).
    #[serde(default, skip_serializing_if = "are_default_names")]
    pub players: Vec<String>,
    /// The 256-bit seed, hex.
    pub seed: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset_hands: Option<Vec<Vec<u32>>>,
    pub created_at: u64,
    /// Digests of the seat tokens, by player (hex).
    pub seat_digests: Vec<String>,
    /// Digest of the spectator token (hex).
    pub spectator_digest: String,
    /// How the log's state hashes are computed: compact for every new game; records written
    /// before the compact scheme have no such field and verify with the JSON one.
    #[serde(default)]
    pub hash_scheme: crate::game::HashScheme,
    /// The digest of the CreateGame request ([`NewGame::digest`]) when it had a request id: a
    /// retry with the same id must be the same request (records written before have none, and
    /// any retry of them is taken as the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_digest: Option<String>,
    /// Bot seats: player → bot name (checked by `bot::styles::spec`); they have no token.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bots: BTreeMap<u8, String>,
    /// Milliseconds a bot waits before it plays.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bot_delay_ms: u32,
    /// The bot that plays 托管 in this game: CreateGame's `auto_policy`, else the variant's
    /// default; empty = the server's `--auto-policy` (and every record written before the field).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub auto_policy: String,
}

/// The game-token secrets a live game has verified, by role (both families' live games hold
/// one): a token seen again is compared with the remembered secret itself, in constant time,
/// instead of being hashed again ([`Record::verify`] takes a SHA-256 of the secret on every
/// request).
///
/// The answer is [`Record::verify`]'s: a secret is remembered only once its SHA-256 is the
/// digest stored for its role, so a later token of that role verifies exactly when its secret is
/// the same text (another text with that digest would be a SHA-256 collision). Memory only: it
/// is never stored, logged or sent, and lives as long as the game in the process's cache. It
/// holds what every request of that seat carries anyway, and what the process can re-derive for
/// any game from its token key (`SHUANGKOU_TOKEN_KEY`), so a look at the process's memory learns
/// nothing it could not before. At most one secret per role (the players and the spectator), 34
/// bytes each.
#[derive(Default)]
pub struct VerifiedTokens {
    secrets: Vec<(Role, SecretText)>,
}

impl VerifiedTokens {
    /// True if `token` is `record`'s for its role ([`Record::verify`]); the secret is
    /// remembered once verified.
    pub fn verify(&mut self, record: &Record, token: &GameToken) -> bool {
        if let Some((_, secret)) = self.secrets.iter().find(|(role, _)| *role == token.role) {
            return token.has_secret(secret);
        }
        if !record.verify(token) {
            return false;
        }
        if self.secrets.is_empty() {
            // Room for every role at once (the players and the spectator), no regrowth.
            self.secrets.reserve_exact(record.seat_digests.len() + 1);
        }
        self.secrets.push((token.role, token.secret()));
        true
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// The default name of seat `i` ([`player_names`] without requested names).
fn default_name(i: usize) -> String {
    format!("player{i}")
}

/// True if `names` are the default names of their seats (and there is at least one).
fn are_default_names(names: &[String]) -> bool {
    !names.is_empty() && names.iter().enumerate().all(|(i, n)| *n == default_name(i))
}

/// The name of bot seat `p` sent without one (an empty name in `players`): its style's seed
/// name (平凡型 …, `bot::styles::seed_name`) or its policy, and the player index, so no two
/// seats read alike ("平凡型 #1", "heuristic #2").
fn default_bot_name(bot: &str, p: u8) -> String {
    let label = crate::bot::styles::seed_name(bot).unwrap_or(bot);
    format!("{label} #{p}")
}

/// A request's `deals` and its option `deals_per_match` must not disagree (both set to
/// different counts): BAD_OPTION naming `deals`, instead of one silently winning.
fn deals_agree(deals: u32, options: &BTreeMap<String, String>) -> Result<(), ApiError> {
    let Some(option) = options.get("deals_per_match") else {
        return Ok(());
    };
    // The option passed the schema (an integer); compared as the schema parsed it.
    let per_match = option.trim().parse::<i64>().ok();
    if deals == 0 || per_match == Some(i64::from(deals)) {
        return Ok(());
    }
    let shown = per_match.map_or_else(|| "?".to_string(), |n| n.to_string());
    Err(bad(
        Reason::BadOption,
        format!("deals ({deals}) and the option deals_per_match ({shown}) disagree: set one"),
    )
    .with("field", "deals"))
}

/// Most milliseconds a bot may wait before it plays.
pub const MAX_BOT_DELAY_MS: u32 = 10_000;

/// Longest bot name accepted (bytes; the longest known is `search:5000`).
pub const MAX_BOT_NAME_BYTES: usize = 32;

/// The tokens of a new game (returned once, never stored).
pub struct Tokens {
    pub seats: Vec<String>,
    pub spectator: String,
}

/// What every create request asks for, in both games (Shuangkou's [`NewGame`] and 升級's
/// `NewShengji` embed it): the fields of a `CreateGameRequest` both read the same way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreateBase {
    /// The variant id.
    pub variant: String,
    /// Player names; empty = `player0`…
    pub players: Vec<String>,
    /// The variant's options (`name` → value text).
    pub options: BTreeMap<String, String>,
    /// The 256-bit seed in hex (admin only); empty = a random one.
    pub seed: String,
    /// The idempotency key; empty = none.
    pub request_id: String,
}

impl CreateBase {
    /// A request for `variant` with everything else left to its default.
    pub fn of(variant: impl Into<String>) -> CreateBase {
        CreateBase {
            variant: variant.into(),
            ..CreateBase::default()
        }
    }
}

/// What a client asks for when it creates a game (a `CreateGameRequest`, as `wire` reads it),
/// not yet checked against the variant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewGame {
    /// Variant, players, options, seed and idempotency key.
    pub base: CreateBase,
    /// Deals in the match; 0 = the variant's `deals_per_match`.
    pub deals: u32,
    /// Card ids dealt to each player (admin only).
    pub preset_hands: Option<Vec<Vec<u32>>>,
    /// Bot seats: player index → bot name.
    pub bots: BTreeMap<u32, String>,
    /// Milliseconds a bot waits before it plays.
    pub bot_delay_ms: u32,
    /// The bot that plays 托管; empty = the variant's default, else the server's.
    pub auto_policy: String,
}

impl NewGame {
    /// The digest of what the request asks for (not its key): a retry under the same key must
    /// have the same one.
    pub fn digest(&self) -> String {
        let options: Vec<u8> = serde_json::to_vec(&self.base.options).unwrap_or_default();
        let players = self.base.players.join("\u{1f}");
        let hands = serde_json::to_vec(&self.preset_hands).unwrap_or_default();
        let deals = self.deals.to_le_bytes();
        let mut parts: Vec<&[u8]> = vec![
            b"create",
            self.base.variant.as_bytes(),
            &options,
            &deals,
            players.as_bytes(),
            self.base.seed.as_bytes(),
            &hands,
        ];
        // Bot seats are part of the request when there are any (a request without them digests
        // as before they existed).
        let bots = serde_json::to_vec(&self.bots).unwrap_or_default();
        let delay = self.bot_delay_ms.to_le_bytes();
        if !self.bots.is_empty() {
            parts.extend([b"bots".as_slice(), &bots, &delay]);
        }
        // Likewise the 托管 bot, when the request names one.
        if !self.auto_policy.is_empty() {
            parts.extend([b"auto_policy".as_slice(), self.auto_policy.as_bytes()]);
        }
        request_digest(&parts)
    }
}

fn derive_secret(key: &[u8; 32], game_id: &str, role: Role) -> Result<String, ApiError> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key)
        .map_err(|_| ApiError::new(Reason::Unavailable, "bad token key"))?;
    mac.update(game_id.as_bytes());
    mac.update(b"|");
    match role {
        Role::Player(p) => mac.update(format!("p{p}").as_bytes()),
        Role::Spectator => mac.update(b"spec"),
    }
    let out = mac.finalize().into_bytes();
    Ok(hex::encode(&out[..16]))
}

fn token(game_id: &str, role: Role, secret: &str) -> String {
    let r = match role {
        Role::Player(p) => format!("p{p}"),
        Role::Spectator => "spec".to_string(),
    };
    format!("{game_id}.{r}.{secret}")
}

/// The 256-bit seed of a new game as hex: `given` (64 hex digits) or, when empty, a random one.
pub fn seed_hex(given: &str) -> Result<String, ApiError> {
    if given.is_empty() {
        let mut s = [0u8; 32];
        getrandom::fill(&mut s)
            .map_err(|e| bad(Reason::Unavailable, format!("no OS randomness: {e}")))?;
        return Ok(hex::encode(s));
    }
    let bytes =
        hex::decode(given).map_err(|_| bad(Reason::BadRequest, "seed must be 64 hex digits"))?;
    if bytes.len() != 32 {
        return Err(bad(
            Reason::BadRequest,
            "seed must be 64 hex digits (256 bits)",
        ));
    }
    Ok(hex::encode(bytes))
}

/// The tokens and digests of a game (every game family's); a bot seat (in `bots`) has neither
/// (empty strings: no token verifies against an empty digest).
pub fn tokens_for(
    key: &[u8; 32],
    game_id: &str,
    players: usize,
    bots: &BTreeMap<u8, String>,
) -> Result<(Tokens, Vec<String>, String), ApiError> {
    let mut seats = Vec::with_capacity(players);
    let mut digests = Vec::with_capacity(players);
    for p in 0..players {
        if bots.contains_key(&(p as u8)) {
            digests.push(String::new());
            seats.push(String::new());
            continue;
        }
        let role = Role::Player(Player::at(p));
        let secret = derive_secret(key, game_id, role)?;
        digests.push(hex::encode(hash_secret(&secret)));
        seats.push(token(game_id, role, &secret));
    }
    let secret = derive_secret(key, game_id, Role::Spectator)?;
    let spectator_digest = hex::encode(hash_secret(&secret));
    let spectator = token(game_id, Role::Spectator, &secret);
    Ok((Tokens { seats, spectator }, digests, spectator_digest))
}

/// A new game's player names (every game family's): the request's, else `player0`…; `game`
/// (named in the refusal) seats exactly `players`, each name at most 128 bytes.
pub fn player_names(
    requested: &[String],
    players: usize,
    game: &str,
) -> Result<Vec<String>, ApiError> {
    let names: Vec<String> = if requested.is_empty() {
        (0..players).map(default_name).collect()
    } else {
        requested.to_vec()
    };
    if names.len() != players {
        return Err(bad(
            Reason::BadRequest,
            format!("{game} needs {players} players, got {}", names.len()),
        ));
    }
    if names.iter().any(|n| n.len() > 128) {
        return Err(
            bad(Reason::BadRequest, "player names are at most 128 bytes").with("field", "players"),
        );
    }
    if let Some((i, c)) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| n.chars().find(|&c| unprintable(c)).map(|c| (i, c)))
    {
        return Err(bad(
            Reason::BadRequest,
            format!(
                "player {i}'s name holds U+{:04X}: names hold no control or bidi characters",
                u32::from(c)
            ),
        )
        .with("field", "players"));
    }
    Ok(names)
}

/// A character a display name may not hold: a control character (NUL, BEL, newline…) or a
/// bidirectional formatting one (a right-to-left override would reorder what a table shows
/// after the name).
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

fn bad(reason: Reason, msg: impl Into<String>) -> ApiError {
    ApiError::new(reason, msg)
}

/// A request's bot seats, checked: each index is a player of the game and each name a known bot.
fn bot_seats(
    requested: &BTreeMap<u32, String>,
    players: usize,
) -> Result<BTreeMap<u8, String>, ApiError> {
    let mut bots = BTreeMap::new();
    for (&p, name) in requested {
        if p as usize >= players {
            return Err(bad(
                Reason::BadRequest,
                format!("bots: no player {p} (the game has {players})"),
            )
            .with("field", "bots"));
        }
        bot_name(name, "bots", &format!("bots: player {p}"))?;
        bots.insert(p as u8, name.clone());
    }
    Ok(bots)
}

/// Checks a bot name of the request's `field` (BAD_REQUEST naming the field, `what` leading the
/// message): a known bot, and short (a long one is not echoed back).
fn bot_name(name: &str, field: &'static str, what: &str) -> Result<(), ApiError> {
    at_most_bytes(name, MAX_BOT_NAME_BYTES, |n| {
        format!("{what}: a bot name is at most {MAX_BOT_NAME_BYTES} bytes, not {n}")
    })
    .map_err(|e| e.with("field", field))?;
    if name.chars().any(unprintable) {
        return Err(bad(
            Reason::BadRequest,
            format!("{what}: a bot name holds no control or bidi characters"),
        )
        .with("field", field));
    }
    crate::bot::styles::spec(name)
        .map_err(|e| bad(Reason::BadRequest, format!("{what}: {e}")).with("field", field))?;
    Ok(())
}

/// The game's 托管 bot: the request's (checked), else the variant's default (checked when the
/// script compiled), else empty (the server's `--auto-policy`).
fn auto_policy(requested: &str, compiled: &CompiledVariant) -> Result<String, ApiError> {
    if requested.is_empty() {
        return Ok(compiled.meta().auto_policy.clone().unwrap_or_default());
    }
    bot_name(requested, "auto_policy", "auto_policy")?;
    Ok(requested.to_string())
}

/// The server's side of creating a game, in either game: the caller's platform, the new game's
/// id, the key its tokens are derived with and the creation time (Unix ms).
pub struct Minting<'a> {
    pub platform: Option<String>,
    pub game_id: &'a str,
    pub token_key: &'a [u8; 32],
    pub now_ms: u64,
}

impl<'a> Minting<'a> {
    /// A game created with no platform (tools, tests and the fuzz target).
    pub fn local(game_id: &'a str, token_key: &'a [u8; 32], now_ms: u64) -> Minting<'a> {
        Minting {
            platform: None,
            game_id,
            token_key,
            now_ms,
        }
    }
}

impl Record {
    /// Validates a CreateGame request against the variant and builds the record and tokens.
    pub fn new(
        compiled: &std::sync::Arc<CompiledVariant>,
        req: &NewGame,
        minting: Minting<'_>,
    ) -> Result<(Record, Tokens), ApiError> {
        let players = compiled.meta().players as usize;
        let mut names = player_names(&req.base.players, players, compiled.id())?;
        // Options are checked against the variant's schema (and configure() evaluates rules()).
        crate::variants::registry::configure(compiled, &req.base.options)
            .map_err(|e| bad(Reason::BadOption, e.to_string()))?;
        if req.deals > 1000 {
            return Err(bad(Reason::BadRequest, "at most 1000 deals per match"));
        }
        deals_agree(req.deals, &req.base.options)?;
        let seed = seed_hex(&req.base.seed)?;
        let preset_hands = match &req.preset_hands {
            None => None,
            Some(hands) => {
                if hands.len() != players {
                    return Err(bad(
                        Reason::BadRequest,
                        format!("preset_hands needs {players} hands"),
                    ));
                }
                let mut all = CardSet::EMPTY;
                for h in hands {
                    let set = CardSet::from_ids(h)?;
                    if !set.intersection(all).is_empty() {
                        return Err(bad(
                            Reason::DuplicateCard,
                            "a card appears in two preset hands",
                        ));
                    }
                    all = all.union(set);
                }
                Some(hands.clone())
            }
        };
        let bots = bot_seats(&req.bots, players)?;
        for (&p, bot) in &bots {
            let name = &mut names[usize::from(p)];
            if name.is_empty() {
                *name = default_bot_name(bot, p);
            }
        }
        if req.bot_delay_ms > MAX_BOT_DELAY_MS {
            return Err(bad(
                Reason::BadRequest,
                format!("bot_delay_ms is at most {MAX_BOT_DELAY_MS}"),
            )
            .with("field", "bot_delay_ms"));
        }
        let auto_policy = auto_policy(&req.auto_policy, compiled)?;
        let (tokens, seat_digests, spectator_digest) =
            tokens_for(minting.token_key, minting.game_id, players, &bots)?;
        let record = Record {
            id: minting.game_id.to_string(),
            platform: minting.platform,
            variant: compiled.id().to_string(),
            version: compiled.hash().to_string(),
            script: compiled.source().to_string(),
            options: req.base.options.clone(),
            deals: req.deals,
            players: names,
            seed,
            preset_hands,
            created_at: minting.now_ms,
            seat_digests,
            spectator_digest,
            hash_scheme: crate::game::HashScheme::Chained,
            request_digest: (!req.base.request_id.is_empty()).then(|| req.digest()),
            bot_delay_ms: if bots.is_empty() { 0 } else { req.bot_delay_ms },
            bots,
            auto_policy,
        };
        Ok((record, tokens))
    }

    /// The tokens again (idempotent create); an error if the token key changed since.
    pub fn tokens_again(&self, token_key: &[u8; 32]) -> Result<Tokens, ApiError> {
        let (tokens, digests, spec) =
            tokens_for(token_key, &self.id, self.players.len(), &self.bots)?;
        if digests != self.seat_digests || spec != self.spectator_digest {
            return Err(bad(
                Reason::TokenKeyChanged,
                "the game exists but its tokens cannot be re-issued (the server token key changed: set a fixed SHUANGKOU_TOKEN_KEY); use the tokens of the first response",
            ));
        }
        Ok(tokens)
    }

    /// True if the token's secret matches the digest stored for its role.
    pub fn verify(&self, token: &GameToken) -> bool {
        let digest = match token.role {
            Role::Player(p) => self.seat_digests.get(p.index()),
            Role::Spectator => Some(&self.spectator_digest),
        };
        let Some(digest) = digest else { return false };
        // Decoded on the stack: this runs on every authenticated request.
        let mut hash = SecretHash::default();
        if hex::decode_to_slice(digest, &mut hash).is_err() {
            return false;
        }
        token.verify(&hash)
    }

    /// Hex SHA-256 of the seed bytes.
    pub fn seed_commitment(&self) -> String {
        match hex::decode(&self.seed) {
            Ok(bytes) => hex::encode(Sha256::digest(&bytes)),
            Err(_) => String::new(),
        }
    }

    /// The seed bytes.
    pub fn seed_bytes(&self) -> Result<[u8; 32], ApiError> {
        let bytes = hex::decode(&self.seed)
            .map_err(|_| bad(Reason::StoreFailed, "stored seed is not hex"))?;
        <[u8; 32]>::try_from(bytes.as_slice())
            .map_err(|_| bad(Reason::StoreFailed, "stored seed is not 256 bits"))
    }

    pub fn encode(&self) -> Result<Vec<u8>, ApiError> {
        serde_json::to_vec(self).map_err(|e| bad(Reason::StoreFailed, e.to_string()))
    }

    pub fn decode(bytes: &[u8]) -> Result<Record, ApiError> {
        let mut record: Record = serde_json::from_slice(bytes).map_err(|e| {
            bad(
                Reason::StoreFailed,
                format!("stored record unreadable: {e}"),
            )
        })?;
        record.complete()?;
        Ok(record)
    }

    /// Restores what the encoding leaves out and the record's own fields imply: the default
    /// player names, one per seat digest (every seat has a digest, a bot seat an empty one).
    pub fn complete(&mut self) -> Result<(), ApiError> {
        if self.players.is_empty() {
            if self.seat_digests.is_empty() {
                return Err(bad(
                    Reason::StoreFailed,
                    "stored record unreadable: no players and no seat digests",
                ));
            }
            self.players = (0..self.seat_digests.len()).map(default_name).collect();
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
