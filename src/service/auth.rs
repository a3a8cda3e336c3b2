//! Credentials: seat and spectator tokens, platform API keys and the admin key.
//!
//! A game token reads `<game id>.<role>.<secret>` where the role is `p<player>` or `spec` and the
//! secret is 128 random bits from the OS generator, in hex. The service stores only the SHA-256
//! of each secret and compares digests in constant time (`subtle`). Tokens are never logged:
//! nothing here implements `Display` for a secret, and `Debug` redacts it.
//!
//! Depends only on `status`.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::status::{ApiError, Reason};
use crate::seat::Player;

/// The SHA-256 digest of a secret.
pub type SecretHash = [u8; 32];

/// A game token's secret as sent (32 hex digits; [`GameToken::parse`] takes no other length).
pub type SecretText = [u8; 32];

/// Who a game token speaks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A player (index into the game's seat tokens).
    Player(Player),
    /// A spectator.
    Spectator,
}

/// A parsed game token (not yet verified against the game).
#[derive(Clone, PartialEq, Eq)]
pub struct GameToken {
    pub game_id: String,
    pub role: Role,
    secret: String,
}

impl fmt::Debug for GameToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GameToken")
            .field("game_id", &self.game_id)
            .field("role", &self.role)
            .field("secret", &"<redacted>")
            .finish()
    }
}

impl GameToken {
    /// Parses `<game id>.<role>.<secret>`; `None` if it is not a game token.
    pub fn parse(token: &str) -> Option<GameToken> {
        let mut parts = token.rsplitn(3, '.');
        let secret = parts.next()?;
        let role = parts.next()?;
        let game_id = parts.next()?;
        if secret.len() != 32
            || !secret.bytes().all(|b| b.is_ascii_hexdigit())
            || game_id.is_empty()
        {
            return None;
        }
        let role = match role {
            "spec" => Role::Spectator,
            r => Role::Player(Player::new(r.strip_prefix('p')?.parse().ok()?)),
        };
        Some(GameToken {
            game_id: game_id.to_string(),
            role,
            secret: secret.to_string(),
        })
    }

    /// True if the secret's digest equals `hash` (constant time).
    pub fn verify(&self, hash: &SecretHash) -> bool {
        hash_secret(&self.secret).ct_eq(hash).into()
    }

    /// The secret's text (its 32 hex digits, as sent), to remember once verified
    /// ([`super::record::VerifiedTokens`]).
    pub fn secret(&self) -> SecretText {
        let mut text = [0u8; 32];
        text.copy_from_slice(self.secret.as_bytes());
        text
    }

    /// True if the secret is `text` (constant time).
    pub fn has_secret(&self, text: &SecretText) -> bool {
        self.secret.as_bytes().ct_eq(text).into()
    }
}

/// A fresh token for `role` in `game_id`, and the digest to store.
pub fn new_token(game_id: &str, role: Role) -> Result<(String, SecretHash), ApiError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("no OS randomness: {e}")))?;
    let secret = hex::encode(bytes);
    let role = match role {
        Role::Player(p) => format!("p{p}"),
        Role::Spectator => "spec".to_string(),
    };
    let hash = hash_secret(&secret);
    Ok((format!("{game_id}.{role}.{secret}"), hash))
}

/// 128 random bits in hex, for game ids.
pub fn random_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes)
        .map_err(|e| ApiError::new(Reason::Unavailable, format!("no OS randomness: {e}")))?;
    Ok(hex::encode(bytes))
}

/// The id of an idempotent create: derived from the platform and request id with the token key,
/// so every replica sharing the key derives the same id.
pub fn derived_id(key: &[u8; 32], platform: Option<&str>, request_id: &str) -> String {
    match <Hmac<Sha256> as Mac>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(b"create|");
            mac.update(platform.unwrap_or("").as_bytes());
            mac.update(b"|");
            mac.update(request_id.as_bytes());
            hex::encode(&mac.finalize().into_bytes()[..12])
        }
        Err(_) => hex::encode(&Sha256::digest(request_id.as_bytes())[..12]),
    }
}

/// SHA-256 of a secret.
pub fn hash_secret(secret: &str) -> SecretHash {
    Sha256::digest(secret.as_bytes()).into()
}

/// The bearer token of a request, if any.
pub fn bearer(metadata: &tonic::metadata::MetadataMap) -> Option<&str> {
    let value = metadata.get("authorization")?.to_str().ok()?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))?;
    Some(token.trim())
}

/// Platform API keys and the admin key, from configuration (stored as digests).
#[derive(Clone, Default)]
pub struct Keys {
    platforms: Vec<(String, SecretHash)>,
    admin: Option<SecretHash>,
    /// True when a configured key has a game token's shape ([`GameToken::parse`] reads it):
    /// only then must a game-shaped credential be compared with the keys (checked on load).
    game_shaped: bool,
}

/// The configured key a credential is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'a> {
    /// The admin key.
    Admin,
    /// A platform API key (its platform's name).
    Platform(&'a str),
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keys")
            .field(
                "platforms",
                &self.platforms.iter().map(|p| &p.0).collect::<Vec<_>>(),
            )
            .field("admin", &self.admin.is_some())
            .finish()
    }
}

impl Keys {
    /// Builds the key set from `name=key` platform entries and an optional admin key.
    pub fn new(platforms: &[String], admin: Option<&str>) -> Result<Keys, String> {
        let mut out = Vec::new();
        for entry in platforms {
            let (name, key) = entry.split_once('=').ok_or_else(|| {
                format!(
                    "platform key entry must be NAME=KEY, got one for {:?}",
                    entry.split('=').next().unwrap_or("")
                )
            })?;
            if name.is_empty() || key.len() < 16 {
                return Err(format!(
                    "platform {name:?}: name must be set and the key at least 16 characters"
                ));
            }
            out.push((name.to_string(), hash_secret(key)));
        }
        if let Some(a) = admin {
            if a.len() < 16 {
                return Err("the admin key must be at least 16 characters".into());
            }
        }
        let keys = platforms
            .iter()
            .filter_map(|e| e.split_once('=').map(|(_, k)| k));
        let game_shaped = keys.chain(admin).any(|k| GameToken::parse(k).is_some());
        Ok(Keys {
            platforms: out,
            admin: admin.map(hash_secret),
            game_shaped,
        })
    }

    /// True when no key is configured: the service runs open for local development.
    pub fn open(&self) -> bool {
        self.platforms.is_empty() && self.admin.is_none()
    }

    /// True when a configured key has a game token's shape: a credential of that shape may then
    /// be a key, and is compared with them before it is taken for a game token. Otherwise a
    /// game-shaped credential is a game token without a comparison (the shape is no secret).
    pub fn game_shaped(&self) -> bool {
        self.game_shaped
    }

    /// The configured key `key` is, if any: its SHA-256 once (none when no key is configured),
    /// compared in constant time with the admin key and with every platform key.
    pub fn find(&self, key: &str) -> Option<Key<'_>> {
        if self.open() {
            return None;
        }
        let h = hash_secret(key);
        let mut found = None;
        for (name, k) in &self.platforms {
            if bool::from(h.ct_eq(k)) {
                found = Some(Key::Platform(name.as_str()));
            }
        }
        let admin = self.admin.as_ref().is_some_and(|a| bool::from(h.ct_eq(a)));
        match admin {
            true => Some(Key::Admin),
            false => found,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_verify() {
        let (token, hash) = new_token("g1", Role::Player(Player::new(3))).unwrap();
        let t = GameToken::parse(&token).unwrap();
        assert_eq!(t.game_id, "g1");
        assert_eq!(t.role, Role::Player(Player::new(3)));
        assert!(t.verify(&hash));
        let (other, _) = new_token("g1", Role::Player(Player::new(3))).unwrap();
        assert!(!GameToken::parse(&other).unwrap().verify(&hash));
        assert!(!format!("{t:?}").contains(&token[token.len() - 32..]));
        assert!(GameToken::parse("nonsense").is_none());
        assert!(GameToken::parse("g.p1.short").is_none());
        let (spec, _) = new_token("abc", Role::Spectator).unwrap();
        assert_eq!(GameToken::parse(&spec).unwrap().role, Role::Spectator);
    }

    #[test]
    fn keys() {
        let keys = Keys::new(
            &["acme=0123456789abcdef".into()],
            Some("admin-key-0123456789"),
        )
        .unwrap();
        assert!(!keys.open());
        assert!(!keys.game_shaped());
        assert_eq!(keys.find("0123456789abcdef"), Some(Key::Platform("acme")));
        assert_eq!(keys.find("wrong"), None);
        assert_eq!(keys.find("admin-key-0123456789"), Some(Key::Admin));
        assert!(Keys::new(&["acme=short".into()], None).is_err());
        assert!(Keys::default().open());
        assert_eq!(Keys::default().find("admin-key-0123456789"), None);
    }

    /// A key shaped like a game token is noticed on load, whether a platform's or the admin's.
    #[test]
    fn game_shaped_keys() {
        let shaped = format!("g1.p2.{}", "ab".repeat(16));
        let platform = Keys::new(&[format!("acme={shaped}")], None).unwrap();
        assert!(platform.game_shaped());
        assert_eq!(platform.find(&shaped), Some(Key::Platform("acme")));
        let admin = Keys::new(&[], Some(&shaped)).unwrap();
        assert!(admin.game_shaped());
        assert_eq!(admin.find(&shaped), Some(Key::Admin));
        let near = format!("g1.p2.{}", "ab".repeat(15));
        assert!(
            !Keys::new(&[format!("acme={near}")], Some(&near))
                .unwrap()
                .game_shaped()
        );
    }
}
