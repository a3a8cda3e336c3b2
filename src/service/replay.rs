//! A finished match as `GetReplay` reveals it, in domain types, and its one verification.
//!
//! [`Replay`] is everything needed to re-execute a match with the core: the variant and its
//! pinned version, the options, the match configuration, the seed, the preset hands, the
//! creation time and the action log with the state hash recorded after each action. The service
//! builds it from a game (`session`); `wire` turns it into a `GetReplayResponse` and back
//! (`Replay::try_from(&response)`), so a client (the tests, the load generator) reads a replay
//! exactly as the server wrote it. [`verify`] re-executes it with the embedded variant and checks
//! every state hash and the final totals.
//!
//! Depends on the core (`game`, `cards`) and the variant host only: no wire, store or async type.

use std::collections::BTreeMap;

use crate::cards::CardSet;
use crate::game::hooks::VariantHooks;
use crate::game::{Entry, Game, GameConfig};
use crate::seat::Player;
use crate::variants::{OptionValue, ScriptVariant};

/// A match's replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// The match configuration at creation (variant, pinned version, deals, timing).
    pub config: GameConfig,
    pub options: BTreeMap<String, String>,
    pub seed: [u8; 32],
    /// Card ids dealt to each player, as the creator gave them.
    pub preset_hands: Option<Vec<Vec<u32>>>,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    /// The action log: entry `i` makes the game's seq `i + 1`.
    pub entries: Vec<Entry>,
    /// The state hash after each entry.
    pub hashes: Vec<String>,
    /// Each player's total, in hundredths of a point.
    pub final_totals: Vec<i64>,
    pub engine_version: String,
    /// Why an operator aborted the match (its last action), if one did.
    pub abort_reason: Option<String>,
}

/// A replay that verified: the hooks it ran with and the final state.
pub struct Verified {
    pub hooks: ScriptVariant,
    pub game: Game,
}

impl Replay {
    /// The preset hands as card sets.
    pub fn preset(&self) -> Result<Option<Vec<CardSet>>, String> {
        match &self.preset_hands {
            None => Ok(None),
            Some(h) => h
                .iter()
                .map(|ids| CardSet::from_ids(ids).map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }

    /// The hooks the match ran with: the embedded variant at the replay's pinned version,
    /// configured with its options. An error if the embedded version is another one.
    pub fn builtin_hooks(&self) -> Result<ScriptVariant, String> {
        let (variant, version) = (&self.config.variant, &self.config.version);
        let compiled = crate::variants::builtin(variant).map_err(|e| e.to_string())?;
        if compiled.hash() != version {
            return Err(format!(
                "the game ran {variant} version {version}, the embedded one is {}",
                compiled.hash()
            ));
        }
        crate::variants::registry::configure(&compiled, &self.options).map_err(|e| e.to_string())
    }
}

/// Verifies a replay with the embedded variant: the timing configuration agrees with the
/// variant's options (what the server derived it from), the core's re-execution
/// (`Game::replay`) reproduces every recorded state hash, and the final totals are the
/// replay's.
pub fn verify(replay: &Replay) -> Result<Verified, String> {
    let hooks = replay.builtin_hooks()?;
    let reconnect_seconds = match hooks.option("reconnect_seconds") {
        Some(OptionValue::Int(s)) => *s,
        _ => 90,
    };
    if replay.config.reconnect_ms != reconnect_seconds.max(1) as u64 * 1000 {
        return Err(format!(
            "reconnect_ms {} disagrees with the option reconnect_seconds {reconnect_seconds}",
            replay.config.reconnect_ms
        ));
    }
    let game = Game::new(
        replay.config.clone(),
        &hooks,
        replay.seed,
        replay.preset()?,
        replay.created_at,
    )
    .and_then(|(g, _)| g.replay(&hooks, &replay.entries, Some(&replay.hashes)))
    .map_err(|e| format!("replay does not verify: {e}"))?;
    if game.totals() != replay.final_totals.as_slice() {
        return Err(format!(
            "replayed totals {:?} != the replay's final totals {:?}",
            game.totals(),
            replay.final_totals
        ));
    }
    Ok(Verified { hooks, game })
}

/// The hands one deal started with (after any seat swap, before the first play).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dealt {
    pub deal_number: u32,
    /// The seq after which the deal was dealt: 0 for the first deal, else the action that
    /// settled the previous one.
    pub from_seq: u64,
    /// The hand at each seat.
    pub hands: Vec<CardSet>,
    /// The player at each seat.
    pub players: Vec<u8>,
}

fn dealt_now(game: &Game, from_seq: u64) -> Dealt {
    let n = game.players();
    let mut players = vec![0u8; n as usize];
    for p in 0..n {
        if let Some(seat) = game.seat_of(Player::new(p)) {
            players[seat.index()] = p;
        }
    }
    Dealt {
        deal_number: game.deal_number(),
        from_seq,
        hands: (0..n)
            .map(|s| game.hand(crate::seat::Seat::new(s)))
            .collect(),
        players,
    }
}

/// Every deal's starting hands, re-executed from the revealed seed and the log with `hooks`
/// (the game's own): what a replay viewer steps through, every seat's hand at every step being
/// these less the cards that seat played since.
pub fn dealt_hands(replay: &Replay, hooks: &dyn VariantHooks) -> Result<Vec<Dealt>, String> {
    let (mut game, _) = Game::new(
        replay.config.clone(),
        hooks,
        replay.seed,
        replay.preset()?,
        replay.created_at,
    )
    .map_err(|e| e.to_string())?;
    let mut out = vec![dealt_now(&game, 0)];
    for (i, entry) in replay.entries.iter().enumerate() {
        game.apply(hooks, *entry)
            .map_err(|e| format!("action {}: {e}", i + 1))?;
        let last = out.last().map_or(0, |d| d.deal_number);
        if game.deal_number() != last && game.phase() != crate::game::Phase::Finished {
            out.push(dealt_now(&game, i as u64 + 1));
        }
    }
    Ok(out)
}
