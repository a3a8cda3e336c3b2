//! The report of a run: plays per second, the transport baseline and the ratios to it, the
//! latency of every rpc, errors by code, verification, CPU per request; as text or one JSON
//! object (`--json`).

use hdrhistogram::Histogram;

use crate::args::Args;
use crate::cpu::Cpu;
use crate::stats::{CHECK, RPCS, Rpc, Stats};

/// What a run measured.
pub struct Report<'a> {
    pub args: &'a Args,
    /// Games in play at once and requests in flight (as used, at least 1).
    pub games: usize,
    pub concurrency: usize,
    /// The game phase: its statistics, seconds and CPU.
    pub total: &'a Stats,
    pub secs: f64,
    pub games_cpu: Cpu,
    /// The baseline: its statistics, the seconds asked for, Health/Check per second (all, the
    /// half before the games, the half after) and CPU.
    pub check: &'a Stats,
    pub baseline_secs: f64,
    pub check_rate: f64,
    pub check_first: f64,
    pub check_second: f64,
    pub check_cpu: Cpu,
    /// Completed games whose replay did not verify, and the seconds verification took.
    pub mismatches: &'a [String],
    pub verify_secs: f64,
}

/// The figures derived from a [`Report`].
struct Figures {
    plays: u64,
    plays_rate: f64,
    /// SubmitPlay and all game rpcs per second over the baseline's Health/Check per second.
    ratio: f64,
    rpc_ratio: f64,
    errors: u64,
    /// CPU µs (server, client) per Health/Check and per SubmitPlay, and the ratio of the two.
    cpu_check: (f64, f64),
    cpu_play: (f64, f64),
    cpu_ratio: f64,
}

fn quantiles(h: &Histogram<u64>) -> serde_json::Value {
    serde_json::json!({
        "count": h.len(),
        "p50_us": h.value_at_quantile(0.50),
        "p90_us": h.value_at_quantile(0.90),
        "p99_us": h.value_at_quantile(0.99),
        "max_us": h.max(),
        "mean_us": (h.mean() * 10.0).round() / 10.0,
    })
}

/// `x` rounded to `1 / scale`.
fn round(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

impl Report<'_> {
    /// Nothing failed: no rpc error, mismatch, desync or failed game.
    pub fn ok(&self) -> bool {
        self.total.error_count() + self.check.error_count() == 0
            && self.mismatches.is_empty()
            && self.total.desyncs == 0
            && self.total.games_failed == 0
    }

    /// The latency histogram of the rpc at `i` in [`RPCS`] (the baseline's for Health/Check).
    fn histogram(&self, i: usize) -> &Histogram<u64> {
        if i == CHECK {
            &self.check.latency[i]
        } else {
            &self.total.latency[i]
        }
    }

    fn figures(&self) -> Figures {
        let (total, check, secs, check_rate) = (self.total, self.check, self.secs, self.check_rate);
        let (games_cpu, check_cpu) = (self.games_cpu, self.check_cpu);
        let plays = total.ok[Rpc::Submit as usize];
        let plays_rate = plays as f64 / secs.max(1e-9);
        let game_rpcs: u64 = total.ok[..CHECK].iter().sum();
        let ratio = if check_rate > 0.0 {
            plays_rate / check_rate
        } else {
            0.0
        };
        let rpc_ratio = if check_rate > 0.0 {
            game_rpcs as f64 / secs.max(1e-9) / check_rate
        } else {
            0.0
        };
        let errors = total.error_count() + check.error_count();
        // CPU per request: per Health/Check in the baseline, per SubmitPlay in the game phase (which
        // carries the phase's other rpcs too: creates, hints, states, replays).
        let per = |us: u64, n: u64| if n == 0 { 0.0 } else { us as f64 / n as f64 };
        let checks = check.ok[CHECK];
        let cpu_check = (per(check_cpu.server, checks), per(check_cpu.client, checks));
        let cpu_play = (per(games_cpu.server, plays), per(games_cpu.client, plays));
        let cpu_ratio = if cpu_play.0 + cpu_play.1 > 0.0 {
            (cpu_check.0 + cpu_check.1) / (cpu_play.0 + cpu_play.1)
        } else {
            0.0
        };
        Figures {
            plays,
            plays_rate,
            ratio,
            rpc_ratio,
            errors,
            cpu_check,
            cpu_play,
            cpu_ratio,
        }
    }

    /// Prints the report: one JSON object with `--json`, else text.
    pub fn print(&self) {
        if self.args.json {
            println!("{}", self.json());
        } else {
            self.text();
        }
    }

    fn json(&self) -> serde_json::Value {
        let (args, total, check) = (self.args, self.total, self.check);
        let f = self.figures();
        let mut rpcs = serde_json::Map::new();
        for (i, name) in RPCS.iter().enumerate() {
            let h = self.histogram(i);
            if !h.is_empty() {
                rpcs.insert(name.to_string(), quantiles(h));
            }
        }
        let errs: Vec<_> = total
            .errors
            .iter()
            .chain(check.errors.iter())
            .map(|((rpc, code), n)| serde_json::json!({"rpc": rpc, "code": code, "count": n}))
            .collect();
        let cpu = |(server, client): (f64, f64)| serde_json::json!({"server": round(server, 10.0), "client": round(client, 10.0)});
        serde_json::json!({
            "target": args.target,
            "game": format!("{:?}", args.game).to_lowercase(),
            "variant": args.variant,
            "policy": format!("{:?}", args.policy).to_lowercase(),
            "hints": format!("{:?}", args.hints).to_lowercase(),
            "bot_seats": args.bot_seats,
            "bot_policy": args.bot_policy,
            "auto_policy": args.auto_policy,
            "games": self.games,
            "concurrency": self.concurrency,
            "connections": args.connections,
            "rate": args.rate,
            "seconds": round(self.secs, 100.0),
            "games_created": total.games_created,
            "games_completed": total.games_done.len(),
            "games_failed": total.games_failed,
            "deals": total.deals,
            "plays": f.plays,
            "plays_per_second": f.plays_rate.round(),
            "baseline_checks_per_second": self.check_rate.round(),
            "baseline_before": self.check_first.round(),
            "baseline_after": self.check_second.round(),
            "ratio_submit_to_baseline": round(f.ratio, 1000.0),
            "ratio_game_rpcs_to_baseline": round(f.rpc_ratio, 1000.0),
            "rpcs": rpcs,
            "errors": errs,
            "desyncs": total.desyncs,
            "verified": total.games_done.len() - self.mismatches.len(),
            "mismatches": self.mismatches,
            "verify_seconds": round(self.verify_secs, 100.0),
            "cpu_us_per_check": cpu(f.cpu_check),
            "cpu_us_per_play": cpu(f.cpu_play),
            "cpu_ratio_check_to_play": round(f.cpu_ratio, 1000.0),
            "server_pid_given": args.server_pid.is_some(),
            "ok": self.ok(),
        })
    }

    fn text(&self) {
        let (args, total, check) = (self.args, self.total, self.check);
        let f = self.figures();
        let baseline = self.baseline_secs > 0.0;
        println!(
            "shuangkou-load → {}: game {:?}, variant {}, policy {:?}, hints {:?}, {} games in play, concurrency {}, {} connections{}",
            args.target,
            args.game,
            args.variant,
            args.policy,
            args.hints,
            self.games,
            self.concurrency,
            args.connections,
            args.rate
                .map(|r| format!(", target rate {r}/s"))
                .unwrap_or_default()
        );
        if baseline {
            println!(
                "baseline: {:.0} Health/Check per second ({:.0} before, {:.0} after the games)",
                self.check_rate, self.check_first, self.check_second
            );
        }
        println!(
            "games: {} created, {} completed, {} failed; {} deals, {} plays in {:.2} s = {:.0} plays/s",
            total.games_created,
            total.games_done.len(),
            total.games_failed,
            total.deals,
            f.plays,
            self.secs,
            f.plays_rate
        );
        if baseline {
            println!(
                "ratio SubmitPlay/baseline = {:.3}   (all game rpcs/baseline = {:.3})",
                f.ratio, f.rpc_ratio
            );
        }
        println!(
            "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9}   (µs)",
            "rpc", "count", "p50", "p90", "p99", "max"
        );
        for (i, name) in RPCS.iter().enumerate() {
            let h = self.histogram(i);
            if h.is_empty() {
                continue;
            }
            println!(
                "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9}",
                name,
                h.len(),
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.9),
                h.value_at_quantile(0.99),
                h.max()
            );
        }
        if f.errors == 0 {
            println!("errors: none");
        } else {
            for ((rpc, code), n) in total.errors.iter().chain(check.errors.iter()) {
                println!("errors: {rpc} {code} × {n}");
            }
            for s in &total.samples {
                println!("  e.g. {s}");
            }
        }
        if total.desyncs > 0 {
            println!("bot desyncs: {}", total.desyncs);
        }
        println!(
            "verified: {} of {} completed games replayed with matching state hashes and scores ({:.2} s)",
            total.games_done.len() - self.mismatches.len(),
            total.games_done.len(),
            self.verify_secs
        );
        for m in self.mismatches.iter().take(5) {
            println!("  MISMATCH {m}");
        }
        if args.server_pid.is_some() && baseline {
            println!(
                "cpu per request (µs, server + client): Health/Check {:.1} + {:.1}, SubmitPlay {:.1} + {:.1}; ratio {:.3}",
                f.cpu_check.0, f.cpu_check.1, f.cpu_play.0, f.cpu_play.1, f.cpu_ratio
            );
        }
        println!("{}", if self.ok() { "OK" } else { "FAILED" });
    }
}
