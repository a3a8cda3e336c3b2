//! The command line of `shuangkou-load`: the game family, the bots' policy, where legal plays
//! come from, and every option of a run.

use clap::{Parser, ValueEnum};
use shuangkou::rules::Rules;

/// The game family played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Family {
    /// Shuangkou over `shuangkou.v1`.
    Shuangkou,
    /// 升級 over `shengji.v1` (the client's rule bot; `--bot-seats` up to 3; `--variant`,
    /// `--policy`, `--hints` do not apply).
    Shengji,
}

/// How the bot chooses among the legal actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    /// Pass with `--pass-probability` when passing is legal, else a uniform legal play.
    Random,
    /// The weakest legal play; pass only when nothing beats the trick.
    Greedy,
    /// The server's suggested play (`GetHints` with `suggest`: the game's 托管 bot, `--auto-policy`
    /// here or the serve's, deciding from the seat's view); needs `--hints server`.
    Suggest,
}

/// Where the legal plays come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Hints {
    /// `GetHints` before every play (two rpcs per turn).
    Server,
    /// Enumerated by the client from the hand it tracks (one rpc per turn: SubmitPlay only).
    Local,
}

/// Load generator for `shuangkou serve`: plays real, verified games.
#[derive(Debug, Parser)]
#[command(name = "shuangkou-load", version, about)]
pub struct Args {
    /// Server address (host:port), or several replicas' (`a:p,b:p,c:p`): every request goes
    /// to one of them (balanced per request, no stickiness), as through a Kubernetes Service.
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub target: String,
    /// The game family.
    #[arg(long, value_enum, default_value = "shuangkou")]
    pub game: Family,
    /// Games in play at once.
    #[arg(long, default_value_t = 64)]
    pub games: usize,
    /// Requests in flight at once (worker tasks; each drives games/concurrency games).
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Variant id (an embedded variant, so the replay can be verified).
    #[arg(long, default_value = "baibian")]
    pub variant: String,
    /// Seed of the bots' choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Target plays (SubmitPlay) per second; default: closed loop, as fast as it goes.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Run for this many seconds (games are replaced as they finish).
    #[arg(long, conflicts_with = "deals")]
    pub duration: Option<f64>,
    /// Play this many deals in all, then stop (every game completes and is verified).
    #[arg(long)]
    pub deals: Option<u64>,
    /// Deals per match.
    #[arg(long, default_value_t = 1)]
    pub deals_per_game: u32,
    /// Bot policy.
    #[arg(long, value_enum, default_value = "random")]
    pub policy: Policy,
    /// Where legal plays come from.
    #[arg(long, value_enum, default_value = "server")]
    pub hints: Hints,
    /// Bot seats per game played by the server (CreateGame `bots`): the last K players. With
    /// K = players the server plays whole games by itself. Needs `--hints server`.
    #[arg(long, default_value_t = 0)]
    pub bot_seats: u8,
    /// The bot of those seats: any bot name of docs/BOTS.md (`heuristic`, `search`, `search:N`,
    /// `laoshou`, …).
    #[arg(long, default_value = "heuristic")]
    pub bot_policy: String,
    /// Every game's 托管 bot (CreateGame `auto_policy`; empty = the variant's or the serve's),
    /// which `--policy suggest` plays the driven seats with: any bot name of docs/BOTS.md.
    #[arg(long, default_value = "")]
    pub auto_policy: String,
    /// Probability of passing when passing is legal (random policy).
    #[arg(long, default_value_t = 0.3)]
    pub pass_probability: f64,
    /// HTTP/2 connections to the server (requests are spread over them).
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Seconds of health-check baseline (half before the games, half after); 0 = none.
    /// Default: 10, or the duration if shorter.
    #[arg(long)]
    pub baseline_secs: Option<f64>,
    /// Send no request_id with SubmitPlay (by default every play carries one, as real clients do).
    #[arg(long)]
    pub no_request_ids: bool,
    /// Send the player index in SubmitPlay's `seat` (left out by default, as the API advises):
    /// servers before the optional seat (8f19468 and older) require it, so one load generator
    /// can be run against the servers before and after (a like-for-like comparison).
    #[arg(long)]
    pub send_seat: bool,
    /// Platform API key for CreateGame (when the server has keys).
    #[arg(long, env = "SHUANGKOU_LOAD_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Client runtime threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Memory mode: create this many games, make --plays-per-game plays in each, exit (the games
    /// stay in progress on the server).
    #[arg(long)]
    pub populate: Option<u64>,
    /// Plays per game in --populate mode.
    #[arg(long, default_value_t = 4)]
    pub plays_per_game: u32,
    /// PID of the server (on this machine): also report its CPU time per request, read from
    /// /proc — unlike throughput, it does not depend on what else the machine is running.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    /// Refuses combinations that cannot run: bot seats beyond the game's players, local hints
    /// with server-side seats or suggestions, unknown bot names.
    pub fn check(&self, rules: &Rules) -> Result<(), String> {
        if self.game == Family::Shengji && (self.bot_seats > 3 || self.populate.is_some()) {
            return Err("--game shengji takes --bot-seats 0..=3 and no --populate".into());
        }
        if self.game == Family::Shuangkou && self.bot_seats > rules.players {
            return Err(format!(
                "--bot-seats {} but {} has {} players",
                self.bot_seats, self.variant, rules.players
            ));
        }
        if self.hints == Hints::Local && (self.bot_seats > 0 || self.policy == Policy::Suggest) {
            return Err("--bot-seats and --policy suggest need --hints server".into());
        }
        shuangkou::bot::styles::spec(&self.bot_policy).map_err(|e| format!("--bot-policy: {e}"))?;
        if !self.auto_policy.is_empty() {
            shuangkou::bot::styles::spec(&self.auto_policy)
                .map_err(|e| format!("--auto-policy: {e}"))?;
        }
        Ok(())
    }

    /// Games to create in all (`--populate`, or enough for `--deals`); `u64::MAX` = unbounded.
    pub fn games_left(&self) -> u64 {
        match (self.populate, self.deals) {
            (Some(n), _) => n,
            (None, Some(d)) => d.div_ceil(u64::from(self.deals_per_game.max(1))),
            (None, None) => u64::MAX,
        }
    }

    /// Seconds of games: `--duration`, or 10 when neither deals nor populate bound the run.
    pub fn duration(&self) -> Option<f64> {
        match (self.populate, self.duration, self.deals) {
            (None, None, None) => Some(10.0),
            (_, d, _) => d,
        }
    }

    /// Seconds of health-check baseline: none with `--populate`; by default 10, or the
    /// duration if shorter.
    pub fn baseline_secs(&self) -> f64 {
        match self.populate {
            Some(_) => 0.0,
            None => self
                .baseline_secs
                .unwrap_or_else(|| self.duration().unwrap_or(10.0).min(10.0)),
        }
    }
}
