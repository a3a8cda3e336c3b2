//! [`ScriptVariant`]: a compiled variant configured with a game's option values, the deal
//! engine's [`VariantHooks`]. Each hook converts the facts to a Rhai map, calls the script under
//! the sandbox and reads the result back (`super::returned`), recorded in the script metrics.

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rhai::Dynamic;

use super::returned::{Returned, parse_seating, parse_settlement};
use super::{CompiledVariant, shape_error};
use crate::game::hooks::{
    DealFacts, EscapeFacts, HookError, InHandWorth, SeatingDecision, SeatingFacts, Settlement,
    SumRule, TimeoutFacts, VariantHooks,
};
use crate::rules::Rules;
use crate::variants::engine::{self, describe};
use crate::variants::facts;
use crate::variants::options::{OptionValue, OptionValues};

/// A compiled variant configured with a game's option values: the deal engine's
/// [`VariantHooks`]. Cheap to clone (the AST and option values are shared).
#[derive(Clone)]
pub struct ScriptVariant {
    compiled: Arc<CompiledVariant>,
    values: Arc<OptionValues>,
    /// The `opts` argument of every hook, built once per configuration (each call gets a copy,
    /// so that a script cannot change what the next call sees).
    opts: Dynamic,
    rules: Rules,
    sum_rule: SumRule,
    /// The script's `contribution(stars, opts)` by star level, asked once per configuration on
    /// first need (shared by the clones).
    in_hand_worth: Arc<OnceLock<WorthResult>>,
}

type WorthResult = Result<Option<Arc<InHandWorth>>, HookError>;

/// The optional hook that prices a bomb by its star level (docs/VARIANTS.md).
pub const CONTRIBUTION_HOOK: &str = "contribution";

/// Star levels the contribution table covers; a level above the last is priced as the last
/// (above every bomb two decks can make: a 12-card bomb is 12相, a six-link chain bomb less
/// than 20).
pub const WORTH_LEVELS: u8 = 24;

impl fmt::Debug for ScriptVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptVariant")
            .field("id", &self.compiled.id())
            .field("hash", &self.compiled.short_hash())
            .field("options", &self.values)
            .finish()
    }
}

impl ScriptVariant {
    /// `compiled` with the option `values` and the rules they give.
    pub(super) fn new(
        compiled: Arc<CompiledVariant>,
        values: OptionValues,
        rules: Rules,
        sum_rule: SumRule,
    ) -> ScriptVariant {
        ScriptVariant {
            compiled,
            opts: Dynamic::from_map(values.to_map()),
            values: Arc::new(values),
            rules,
            sum_rule,
            in_hand_worth: Arc::new(OnceLock::new()),
        }
    }

    /// The compiled version (id, hash, meta…).
    pub fn compiled(&self) -> &Arc<CompiledVariant> {
        &self.compiled
    }

    /// The option values of this configuration.
    pub fn option_values(&self) -> &OptionValues {
        &self.values
    }

    /// One option value (e.g. `turn_seconds`, `deals_per_match`, `reconnect_seconds`).
    pub fn option(&self, name: &str) -> Option<&OptionValue> {
        self.values.get(name)
    }

    fn call(&self, hook: &str, facts: Dynamic) -> Result<Dynamic, HookError> {
        engine::call(
            self.compiled.ast(),
            self.compiled.origin(),
            Some(self.compiled.source()),
            hook,
            hook,
            (facts, self.opts.clone()),
        )
    }

    /// What `hook` of this configuration returned is read back for.
    fn returned<'a>(&'a self, hook: &'a str) -> Returned<'a> {
        Returned {
            hook,
            origin: self.compiled.origin(),
            players: self.rules.players,
        }
    }

    fn settlement(&self, hook: &str, v: Dynamic) -> Result<Settlement, HookError> {
        parse_settlement(&v, self.returned(hook))
    }

    /// The script's `contribution(stars, opts)` for every star level up to [`WORTH_LEVELS`], or
    /// `None` when the script does not define it.
    fn worth_table(&self) -> WorthResult {
        let defined = self
            .compiled
            .ast()
            .iter_functions()
            .any(|f| f.name == CONTRIBUTION_HOOK && f.params.len() == 2);
        if !defined {
            return Ok(None);
        }
        let table = (0..=WORTH_LEVELS)
            .map(|stars| {
                let v = self.call(CONTRIBUTION_HOOK, Dynamic::from_int(i64::from(stars)))?;
                v.as_int()
                    .ok()
                    .and_then(|u| u64::try_from(u).ok())
                    .ok_or_else(|| {
                        shape_error(
                            CONTRIBUTION_HOOK,
                            self.compiled.origin(),
                            format!(
                                "contribution({stars}, opts) returned {}; expected a whole number \
                                 of units, 0 or more",
                                describe(&v)
                            ),
                        )
                    })
            })
            .collect::<Result<Vec<u64>, HookError>>()?;
        Ok(Some(table.into()))
    }
}

impl ScriptVariant {
    /// Runs one hook call and records it in the script metrics (calls, latency, errors, limit
    /// hits — by variant, version and hook), shape errors included.
    fn observed<T>(
        &self,
        hook: &'static str,
        f: impl FnOnce() -> Result<T, HookError>,
    ) -> Result<T, HookError> {
        let start = Instant::now();
        let r = f();
        let (error, limit) = match &r {
            Ok(_) => (false, false),
            Err(e) => (true, e.limit),
        };
        crate::metrics::script_call(
            self.compiled.id(),
            self.compiled.hash(),
            hook,
            start.elapsed().as_secs_f64(),
            error,
            limit,
        );
        r
    }
}

impl VariantHooks for ScriptVariant {
    fn rules(&self) -> &Rules {
        &self.rules
    }

    fn partners_see_hands(&self) -> bool {
        self.compiled.meta.partners_see_hands
    }

    fn sum_rule(&self) -> SumRule {
        self.sum_rule
    }

    fn seating(&self, f: &SeatingFacts) -> Result<SeatingDecision, HookError> {
        self.observed("seating", || {
            let v = self.call("seating", facts::seating_map(f))?;
            parse_seating(&v, self.returned("seating"))
        })
    }

    fn settle(&self, f: &DealFacts) -> Result<Settlement, HookError> {
        self.observed("settle", || {
            let v = self.call("settle", facts::deal_map(f))?;
            self.settlement("settle", v)
        })
    }

    fn settle_escape(&self, f: &EscapeFacts) -> Result<Settlement, HookError> {
        self.observed("settle_escape", || {
            let v = self.call("settle_escape", facts::escape_map(f))?;
            self.settlement("settle_escape", v)
        })
    }

    fn in_hand_worth(&self) -> WorthResult {
        self.in_hand_worth
            .get_or_init(|| self.observed(CONTRIBUTION_HOOK, || self.worth_table()))
            .clone()
    }

    fn timeout_is_escape(&self, f: &TimeoutFacts) -> Result<bool, HookError> {
        self.observed("timeout_is_escape", || {
            let v = self.call("timeout_is_escape", facts::timeout_map(f))?;
            v.as_bool().map_err(|_| {
                shape_error(
                    "timeout_is_escape",
                    self.compiled.origin(),
                    format!(
                        "timeout_is_escape returned {}; expected true or false",
                        describe(&v)
                    ),
                )
            })
        })
    }
}
