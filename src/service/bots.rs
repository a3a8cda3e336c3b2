//! The server-side bot driver: plays bot seats (人機) when it is their turn, and the seats whose
//! turn deadline passed (托管).
//!
//! A decision is made from the acting seat's [`PlayerView`] only, with an RNG seeded from the
//! game's seed commitment, the seq and the player (so the same view at the same point decides
//! the same way), off the async runtime when it can take long (`search`: `spawn_blocking`), and
//! is committed as an ordinary play or pass: the log never depends on a bot's budget or speed,
//! and replays re-execute the logged cards.
//!
//! The schedule (`games`) says when a turn is due; this module decides and commits through the
//! commit protocol, re-checking under the game's lock that nothing moved in between. Depends on
//! `games`, `session`, `status` and the bot core; never on the wire types.

use std::sync::{Arc, Mutex, Weak};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use super::clock::now_ms;
use super::games::{DueTurn, Games, Shared};
use super::record::Record;
use super::session::Session;
use super::status::{ApiError, Reason};
use crate::bot::{Bot, BotSpec, Decision, Kind, PlayerView};
use crate::cards::CardSet;
use crate::game::Action;
use crate::seat::Player;
use crate::variants::ScriptVariant;
use tokio::sync::MutexGuard;

/// Milliseconds before a bot turn whose commit failed on the store is tried again.
const RETRY_MS: u64 = 1_000;

/// Plays a turn the schedule found due; failures are logged (the game is unchanged).
pub async fn play_due(games: &Games, turn: DueTurn) {
    let (id, result) = match turn {
        DueTurn::Deadline(id) => {
            let r = play_deadline(games, &id).await;
            (id, r)
        }
        DueTurn::Bot(id, seq) => {
            let r = play_bot_turn(games, &id, seq).await;
            if let Err(e) = &r
                && matches!(e.reason, Reason::StoreFailed | Reason::Unavailable)
            {
                // Not acknowledged: try again shortly, or the bot seat would stall the game.
                games.retry_bot_turn(Arc::clone(&id), seq, RETRY_MS);
            }
            (id, r)
        }
    };
    match result {
        Err(e) if games.expected_race(&id, &e) => {
            tracing::debug!(game = %id, error = %e, "automatic action not needed: lost an expected race")
        }
        Err(e) => tracing::warn!(game = %id, error = %e, "automatic action failed"),
        Ok(()) => {}
    }
}

/// The turn deadline of a game passed: 托管 by bot plays for the seat (or the variant rules an
/// escape). A bot seat past its deadline plays as itself. One lock of the game, one catch-up
/// with a shared store and one commit per play (a searching bot thinks with the lock released).
async fn play_deadline(games: &Games, id: &str) -> Result<(), ApiError> {
    let Some(game) = games.cached(id) else {
        return Ok(());
    };
    let live = games.current(&game).await?;
    let Some(player) = live.player_to_act() else {
        return Ok(());
    };
    let timed_out = live.deadline_passed(now_ms());
    let away_now = live.turn_is_away() && games.away_turns_immediate();
    if !(timed_out || away_now) {
        return Ok(());
    }
    if timed_out {
        crate::metrics::turn_timeout(&live.record.variant);
    }
    match live.bot(player).cloned() {
        Some(bot) => decide_and_commit(games, &game, live, player, bot, as_is).await,
        None => {
            let bot = auto_bot_for(games, &live);
            decide_and_commit(games, &game, live, player, bot, automatic).await
        }
    }
    .map(drop)
}

/// The bot that plays 托管 in a game: the one its record names (CreateGame's `auto_policy`, or
/// the variant's default), else the serve's (`--auto-policy`). A stored name this build does not
/// know (it was checked at creation) falls back to the serve's.
pub fn auto_bot(games: &Games, record: &Record) -> BotSpec {
    if record.auto_policy.is_empty() {
        return games.auto_bot();
    }
    crate::bot::styles::spec(&record.auto_policy).unwrap_or_else(|e| {
        tracing::warn!(game = %record.id, error = %e, "stored 托管 bot unknown; the serve's plays");
        games.auto_bot()
    })
}

/// The game's 托管 bot ready for its variant: made once per configured variant and spec (making
/// one probes the settlement with about twenty script calls), then cloned.
fn auto_bot_for(games: &Games, live: &Session) -> Bot {
    bot_for(auto_bot(games, &live.record), live.hooks())
}

/// Most bots [`bot_for`] keeps (one per configured variant and spec in use; beyond, the oldest
/// goes).
const BOTS_KEPT: usize = 64;

/// The bots made lately, by the configured variant (hooks) they play for and their spec. A
/// variant's hooks are shared by every game with the same options (the registry's cache), so a
/// server holds a handful. Held weakly: an entry whose hooks were dropped never matches.
static BOTS: Mutex<Vec<(Weak<ScriptVariant>, BotSpec, Bot)>> = Mutex::new(Vec::new());

/// `spec` ready to play the variant of `hooks` ([`Bot::new`]), from [`BOTS`] when it has it.
pub fn bot_for(spec: BotSpec, hooks: &Arc<ScriptVariant>) -> Bot {
    let same = |(h, s, _): &&(Weak<ScriptVariant>, BotSpec, Bot)| {
        *s == spec && h.strong_count() > 0 && std::ptr::eq(h.as_ptr(), Arc::as_ptr(hooks))
    };
    if let Ok(kept) = BOTS.lock()
        && let Some((_, _, bot)) = kept.iter().find(same)
    {
        return bot.clone();
    }
    let bot = Bot::new(spec, hooks.as_ref());
    if let Ok(mut kept) = BOTS.lock() {
        kept.retain(|(h, _, _)| h.strong_count() > 0);
        if kept.len() >= BOTS_KEPT {
            kept.remove(0);
        }
        kept.push((Arc::downgrade(hooks), spec, bot.clone()));
    }
    bot
}

/// 托管's action for a decision: an automatic play, or an automatic pass.
fn automatic(decided: Action) -> Action {
    match decided {
        Action::Play { cards, declared } => Action::Auto { cards, declared },
        _ => Action::Auto {
            cards: CardSet::EMPTY,
            declared: None,
        },
    }
}

/// A bot seat's action as its bot decided it.
fn as_is(decided: Action) -> Action {
    decided
}

/// Decides for `player` with `bot` from the seat's view of `live` (the game locked and caught
/// up) and commits the action `wrap` makes of the decision. A bot that decides in microseconds
/// does so under the lock (one lock and one catch-up per play); a searching bot thinks with the
/// lock released, off the async runtime, and its decision is committed only if the game has not
/// moved meanwhile. Returns the new seq, or `None` when the game moved on.
async fn decide_and_commit(
    games: &Games,
    game: &Shared,
    live: MutexGuard<'_, Session>,
    player: Player,
    bot: Bot,
    wrap: fn(Action) -> Action,
) -> Result<Option<u64>, ApiError> {
    let seq = live.seq();
    let pending = Pending::new(&live, player, bot)?;
    let (mut live, decided) = if pending.searches() {
        drop(live);
        let decided = pending.decide_off_runtime().await?;
        let live = games.current(game).await?;
        if live.seq() != seq {
            return Ok(None);
        }
        (live, decided)
    } else {
        let decided = pending.decide()?;
        (live, decided)
    };
    let action = wrap(decided);
    let now = now_ms();
    let submitted = games
        .commit(&mut live, |l| l.prepare_action(player, action, now))
        .await?;
    Ok(Some(submitted.seq))
}

/// 托管 by bot, the one entry point for turn deadlines and disconnects: if it is `player`'s turn
/// and its deadline has passed or it is disconnected, the game's auto bot ([`auto_bot`])
/// decides from the seat's view and the service commits an automatic play or pass
/// ([`Action::Auto`]; past the deadline it counts as a timeout, so the variant may rule an
/// escape instead). Returns the new seq, or `None` when there was nothing to do (not its turn,
/// not due, or the game moved on while the bot thought).
pub async fn play_for(
    games: &Games,
    game: &Shared,
    player: Player,
) -> Result<Option<u64>, ApiError> {
    let live = games.current(game).await?;
    let due = live.deadline_passed(now_ms()) || live.game().is_disconnected(player);
    if live.player_to_act() != Some(player) || !due {
        return Ok(None);
    }
    let bot = auto_bot_for(games, &live);
    decide_and_commit(games, game, live, player, bot, automatic).await
}

/// The decision the game's auto bot would make for `player` now, from its view only (GetHints'
/// `suggested`): a play, or `None` for a pass, and the bot's name.
pub async fn suggest(
    games: &Games,
    game: &Shared,
    player: Player,
) -> Result<(Option<(CardSet, crate::hand::Hand)>, String), ApiError> {
    let pending = {
        let live = games.current(game).await?;
        let bot = auto_bot_for(games, &live);
        Pending::new(&live, player, bot)?
    };
    let hand = pending.hand;
    let name = pending.bot.spec().label();
    let play = match pending.decision_off_runtime().await? {
        Decision::Pass => None,
        Decision::Play(p) => hand.take(p.cards).map(|cards| (cards, p.hand)),
    };
    Ok((play, name))
}

/// A bot seat's turn at `seq`: decides from the seat's view and commits the play or pass, unless
/// the game moved on meanwhile (a duplicate schedule entry, an escape).
async fn play_bot_turn(games: &Games, id: &str, seq: u64) -> Result<(), ApiError> {
    let Some(game) = games.cached(id) else {
        return Ok(());
    };
    let live = games.current(&game).await?;
    if live.seq() != seq {
        return Ok(());
    }
    let Some(player) = live.bot_to_act() else {
        return Ok(());
    };
    let Some(bot) = live.bot(player).cloned() else {
        return Ok(());
    };
    decide_and_commit(games, &game, live, player, bot, as_is)
        .await
        .map(drop)
}

/// The RNG seed of one decision: SHA-256 of the game's seed commitment (hex, as CreateGame
/// returns it), the seq the decision is made at and the player. The commitment is public and says
/// nothing about the hidden cards.
pub fn decision_seed(seed_commitment: &str, seq: u64, player: Player) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"shuangkou bot decision|");
    h.update(seed_commitment.as_bytes());
    h.update(seq.to_le_bytes());
    h.update([player.number()]);
    h.finalize().into()
}

fn decision_rng(live: &Session, player: Player) -> ChaCha8Rng {
    ChaCha8Rng::from_seed(decision_seed(
        &live.record.seed_commitment(),
        live.seq(),
        player,
    ))
}

/// A decision to make, detached from the game (its lock is not held while a bot thinks).
pub struct Pending {
    bot: Bot,
    view: PlayerView,
    hand: CardSet,
    hooks: Arc<ScriptVariant>,
    rng: ChaCha8Rng,
}

impl Pending {
    /// What `bot` needs to decide for `player` now: the seat's view, its own cards (to name the
    /// physical cards of the chosen play), the variant's settlement and the seeded RNG.
    pub fn new(live: &Session, player: Player, bot: Bot) -> Result<Pending, ApiError> {
        let game = live.game();
        let seat = game
            .seat_of(player)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, "no such player"))?;
        let view = PlayerView::new(game, seat)
            .ok_or_else(|| ApiError::new(Reason::BadRequest, "no such seat"))?;
        Ok(Pending {
            bot,
            view,
            hand: game.hand(seat),
            hooks: Arc::clone(live.hooks()),
            rng: decision_rng(live, player),
        })
    }

    /// The bot's decision (on this thread).
    pub fn decision(&mut self) -> Decision {
        self.bot
            .decide(&self.view, self.hooks.as_ref(), &mut self.rng)
    }

    /// The decision as the engine action (the physical cards of the play, or a pass).
    pub fn decide(mut self) -> Result<Action, ApiError> {
        let decision = self.decision();
        action_of(decision, self.hand)
    }

    /// True when the bot searches (it can think for a few hundred milliseconds); the others
    /// decide in microseconds.
    pub fn searches(&self) -> bool {
        self.bot.spec().kind == Kind::Search
    }

    /// As [`Pending::decision`], on a blocking thread when the bot searches, inline otherwise.
    pub async fn decision_off_runtime(mut self) -> Result<Decision, ApiError> {
        if !self.searches() {
            return Ok(self.decision());
        }
        tokio::task::spawn_blocking(move || self.decision())
            .await
            .map_err(|e| ApiError::new(Reason::Unavailable, format!("bot task failed: {e}")))
    }

    /// As [`Pending::decide`], off the async runtime when it can take long.
    pub async fn decide_off_runtime(self) -> Result<Action, ApiError> {
        let hand = self.hand;
        let decision = self.decision_off_runtime().await?;
        action_of(decision, hand)
    }
}

/// The engine action of a decision, with the physical cards taken from `hand`.
fn action_of(decision: Decision, hand: CardSet) -> Result<Action, ApiError> {
    decision.action(hand).ok_or_else(|| {
        ApiError::new(
            Reason::Unavailable,
            "the bot chose cards its seat does not hold",
        )
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::variants::Registry;

    fn hooks(registry: &Registry, variant: &str, options: &[(&str, &str)]) -> Arc<ScriptVariant> {
        let options: BTreeMap<String, String> = options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let compiled = registry.active(variant).expect("an embedded variant");
        registry
            .configured(&compiled, &options)
            .expect("configured")
    }

    /// A kept bot is the bot [`Bot::new`] makes for the same configured variant, and another
    /// configured variant (a different settlement) gets its own: the oracle is a bot made afresh.
    #[test]
    fn a_kept_bot_plays_for_the_variant_it_was_made_for() {
        let registry = Registry::embedded().expect("the embedded variants");
        let spec = crate::bot::styles::spec("heuristic").expect("heuristic");
        let classic = hooks(&registry, "classic", &[]);
        let doubled = hooks(&registry, "baibian", &[("double_points", "100")]);
        for h in [&classic, &doubled, &classic, &doubled] {
            let fresh = Bot::new(spec, h.as_ref());
            assert_eq!(bot_for(spec, h).profile(), fresh.profile());
        }
        assert_ne!(
            bot_for(spec, &classic).profile(),
            bot_for(spec, &doubled).profile(),
            "two settlements, two profiles (else this test proves nothing)"
        );
    }
}
