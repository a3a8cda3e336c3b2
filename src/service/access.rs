//! Who is calling and what they may do: the caller of a request (from its bearer credential),
//! who may create games, who may use the admin service, and the game a request is about with
//! the viewer the caller is in it (`game::Viewer`).
//!
//! Depends on `auth` (credentials), `games` (to verify a game token against its game),
//! `presence` (a seat call of a disconnected player reconnects it) and `status`; never on the
//! wire types.

use tonic::metadata::MetadataMap;

use super::auth::{self, GameToken, Key, Keys, Role};
use super::games::{Games, LiveGame, Shared};
use super::presence;
use super::status::{ApiError, Reason};
use crate::game::Viewer;
use crate::seat::Player;

/// Who is calling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// No credential, or the service runs open.
    Anonymous,
    /// A platform API key (its name).
    Platform(String),
    /// The admin key.
    Admin,
    /// A game token (not yet verified against the game's digests).
    Game(GameToken),
    /// A credential was sent but it is none of the above: not a configured key, not shaped like a
    /// game token (INVALID_TOKEN wherever a credential is needed, unlike no credential at all).
    Invalid,
}

/// The caller of a request with these headers.
pub fn caller(keys: &Keys, metadata: &MetadataMap) -> Caller {
    let Some(token) = auth::bearer(metadata) else {
        return Caller::Anonymous;
    };
    // The shape decides first unless a configured key has a game token's shape: a game token
    // then costs no hash of the keys (its secret is verified against its game later).
    let game = GameToken::parse(token);
    if !keys.game_shaped()
        && let Some(t) = game
    {
        return Caller::Game(t);
    }
    match (keys.find(token), game) {
        (Some(Key::Admin), _) => Caller::Admin,
        (Some(Key::Platform(p)), _) => Caller::Platform(p.to_string()),
        (None, Some(t)) => Caller::Game(t),
        (None, None) => Caller::Invalid,
    }
}

/// The rejection of a credential that was sent but is not valid.
pub fn invalid_token() -> ApiError {
    ApiError::new(
        Reason::InvalidToken,
        "the bearer credential is not a valid key or token (malformed, unknown or expired)",
    )
}

/// A caller that may create games: a platform key (its name), the admin key, or anyone when
/// open.
pub fn creator(keys: &Keys, caller: &Caller) -> Result<Option<String>, ApiError> {
    platform_or_admin(keys, caller, "CreateGame")
}

/// A caller with a platform key (its name) or the admin key (`None`: every platform), or anyone
/// when open (`None`); `rpc` names what needs it in the refusals.
pub fn platform_or_admin(
    keys: &Keys,
    caller: &Caller,
    rpc: &str,
) -> Result<Option<String>, ApiError> {
    match caller {
        Caller::Platform(p) => Ok(Some(p.clone())),
        Caller::Admin => Ok(None),
        _ if keys.open() => Ok(None),
        Caller::Game(_) => Err(ApiError::new(
            Reason::PermissionDenied,
            format!("a game token cannot call {rpc}; use a platform API key"),
        )),
        Caller::Anonymous => Err(ApiError::new(
            Reason::Unauthenticated,
            format!("{rpc} needs a platform API key (authorization: Bearer <key>)"),
        )),
        Caller::Invalid => Err(invalid_token()),
    }
}

/// The admin key (or anyone when open): the admin service.
pub fn admin(keys: &Keys, caller: &Caller) -> Result<(), ApiError> {
    match caller {
        Caller::Admin => Ok(()),
        _ if keys.open() => Ok(()),
        Caller::Anonymous => Err(ApiError::new(
            Reason::Unauthenticated,
            "the admin key is required",
        )),
        Caller::Invalid => Err(invalid_token()),
        _ => Err(ApiError::new(
            Reason::PermissionDenied,
            "the admin key is required",
        )),
    }
}

/// The player of a viewer that must be one; `refusal` says what needs a seat token.
pub fn player(viewer: Viewer, refusal: &'static str) -> Result<Player, ApiError> {
    match viewer {
        Viewer::Player(p) => Ok(p),
        _ => Err(ApiError::new(Reason::PermissionDenied, refusal)),
    }
}

/// How a game family refuses a token (its API's contract).
#[derive(Clone, Copy, Debug)]
pub struct TokenRules {
    /// An unknown game is NOT_FOUND/NO_SUCH_GAME whatever the credential (the game is looked up
    /// before the token); otherwise the token's own game is looked up first.
    pub game_first: bool,
    /// The refusal of a token that does not verify (forged, expired, or for no game).
    pub bad_token: fn() -> ApiError,
}

/// `shuangkou.v1`'s: the game first, a bad token INVALID_TOKEN.
pub const SHUANGKOU_TOKENS: TokenRules = TokenRules {
    game_first: true,
    bad_token: invalid_token,
};

/// Resolves the game a request is about and how the caller sees it (both games, each with its
/// [`TokenRules`]).
///
/// Shuangkou's: an unknown game is NOT_FOUND/NO_SUCH_GAME whatever the credential (game ids are
/// 96 random bits: knowing that one does not exist tells nothing). Then a game token is verified
/// against the game it names: a forged or expired one is refused whatever game it is used on,
/// and only a genuine token for another game is PERMISSION_DENIED. A seat call of a disconnected
/// player is its return (presence).
pub async fn authorize<G: LiveGame>(
    games: &Games<G>,
    caller: &Caller,
    game_id: &str,
    rules: TokenRules,
) -> Result<(Shared<G>, Viewer), ApiError> {
    if game_id.is_empty() {
        return Err(ApiError::new(Reason::BadRequest, "game_id is required"));
    }
    let game = match rules.game_first {
        true => Some(games.load(game_id).await?),
        false => None,
    };
    let Some(token) = game_token(caller)? else {
        let game = match game {
            Some(game) => game,
            None => games.load(game_id).await?,
        };
        return Ok((game, Viewer::Admin));
    };
    let own = match game.filter(|_| token.game_id == game_id) {
        Some(game) => game,
        None => games
            .load(&token.game_id)
            .await
            .map_err(|e| match e.reason {
                Reason::NoSuchGame => (rules.bad_token)(),
                _ => e,
            })?,
    };
    let (ok, away) = {
        let mut live = own.lock().await;
        let away = match token.role {
            Role::Player(p) => live.is_disconnected(p).then_some(p),
            Role::Spectator => None,
        };
        (live.verify_token(token), away)
    };
    if !ok {
        return Err((rules.bad_token)());
    }
    if token.game_id != game_id {
        return Err(another_game());
    }
    // A seat call of a disconnected player is its return (docs/OPERATIONS.md, presence).
    if let Some(p) = away
        && let Err(e) = presence::reconnect(games, &own, p).await
    {
        tracing::warn!(game = %game_id, player = p.number(), error = %e, "logging a reconnect failed");
    }
    Ok((own, viewer(token.role)))
}

/// The game token of a caller acting in a game (both games): `None` for the admin key (every
/// game, as `Viewer::Admin`); a platform key, no credential or an invalid one is refused.
pub fn game_token(caller: &Caller) -> Result<Option<&GameToken>, ApiError> {
    match caller {
        Caller::Admin => Ok(None),
        Caller::Game(token) => Ok(Some(token)),
        Caller::Platform(_) => Err(ApiError::new(
            Reason::PermissionDenied,
            "a platform key cannot act in a game; use the seat or spectator token",
        )),
        Caller::Anonymous => Err(ApiError::new(
            Reason::Unauthenticated,
            "missing token (authorization: Bearer <token>)",
        )),
        Caller::Invalid => Err(invalid_token()),
    }
}

/// Who may read a game's replay (both games): a platform key its own games only (another
/// platform's game answers exactly as a game that does not exist, NO_SUCH_GAME), and, while the
/// match is in progress, the admin key only (the replay holds the seed).
pub fn replay(
    caller: &Caller,
    platform: Option<&str>,
    finished: bool,
    game_id: &str,
) -> Result<(), ApiError> {
    if let Caller::Platform(p) = caller
        && platform != Some(p.as_str())
    {
        return Err(ApiError::new(
            Reason::NoSuchGame,
            format!("no game {game_id}"),
        ));
    }
    if !finished && *caller != Caller::Admin {
        return Err(ApiError::new(
            Reason::GameInProgress,
            "the replay (with the seed) is available when the match is over",
        ));
    }
    Ok(())
}

/// The refusal of a genuine game token used on another game.
pub fn another_game() -> ApiError {
    ApiError::new(Reason::PermissionDenied, "the token is for another game")
}

/// How the holder of a verified game token sees its game.
pub fn viewer(role: Role) -> Viewer {
    match role {
        Role::Player(p) => Viewer::Player(p),
        Role::Spectator => Viewer::Spectator,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_bearer(token: &str) -> MetadataMap {
        let mut m = MetadataMap::new();
        let value = format!("Bearer {token}")
            .parse()
            .expect("an ASCII header value");
        m.insert("authorization", value);
        m
    }

    /// A game-shaped credential is a game token unless a configured key has that shape: then
    /// the keys are compared first, and only a credential that is none of them is a game token.
    #[test]
    fn the_shape_decides_unless_a_key_has_it() {
        let token = format!("g1.p2.{}", "ab".repeat(16));
        let other = format!("g1.p2.{}", "cd".repeat(16));
        let plain = Keys::new(
            &["acme=0123456789abcdef".into()],
            Some("admin-key-0123456789"),
        );
        let plain = plain.unwrap();
        let game = GameToken::parse(&token).unwrap();
        assert_eq!(caller(&plain, &with_bearer(&token)), Caller::Game(game));
        assert_eq!(
            caller(&plain, &with_bearer("0123456789abcdef")),
            Caller::Platform("acme".into())
        );
        assert_eq!(
            caller(&plain, &with_bearer("admin-key-0123456789")),
            Caller::Admin
        );
        assert_eq!(caller(&plain, &with_bearer("not-a-key")), Caller::Invalid);
        assert_eq!(caller(&plain, &MetadataMap::new()), Caller::Anonymous);

        let shaped = Keys::new(&[format!("acme={token}")], Some(&other)).unwrap();
        let bearer = |t: &str| caller(&shaped, &with_bearer(t));
        assert_eq!(bearer(&token), Caller::Platform("acme".into()));
        assert_eq!(bearer(&other), Caller::Admin);
        let third = format!("g1.p2.{}", "ef".repeat(16));
        assert_eq!(
            bearer(&third),
            Caller::Game(GameToken::parse(&third).unwrap())
        );

        let open = Keys::default();
        let game = GameToken::parse(&token).unwrap();
        assert_eq!(caller(&open, &with_bearer(&token)), Caller::Game(game));
        assert_eq!(caller(&open, &with_bearer("not-a-key")), Caller::Invalid);
    }
}
