//! What a hook returned, read back strictly: a settlement (line items, scores) or a seating
//! decision. A wrong shape is a [`HookError`] naming the hook, the script and the offending field.

use rhai::{Array, Dynamic, Map};

use super::shape_error;
use crate::game::hooks::{Centi, HookError, LineItem, Seat, SeatingDecision, Settlement};
use crate::variants::engine::{self, describe, to_centi_saturating};

/// The most line items a settlement may have.
pub const MAX_LINES: usize = 512;

/// What a hook returned is read back for: the hook `hook` of the script `origin`, in a game of
/// `players` seats. Its shape errors name both.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Returned<'a> {
    pub hook: &'a str,
    pub origin: &'a str,
    pub players: u8,
}

impl Returned<'_> {
    /// A shape error: `{hook} returned {message}`.
    fn err(&self, message: String) -> HookError {
        let hook = self.hook;
        shape_error(hook, self.origin, format!("{hook} returned {message}"))
    }

    /// The map the hook returned, holding no key but `keys`; `shape` (e.g. `#{ leader, swap }`)
    /// names what was expected in the error.
    fn map<'v>(
        &self,
        v: &'v Dynamic,
        keys: &[&str],
        shape: &str,
    ) -> Result<impl std::ops::Deref<Target = Map> + 'v, HookError> {
        let map = v
            .read_lock::<Map>()
            .ok_or_else(|| self.err(format!("{}; expected {shape}", describe(v))))?;
        if let Some(k) = map.keys().find(|k| !keys.contains(&k.as_str())) {
            return Err(self.err(format!("an unexpected key `{k}`; expected {shape}")));
        }
        Ok(map)
    }
}

pub(super) fn parse_settlement(v: &Dynamic, of: Returned) -> Result<Settlement, HookError> {
    let players = of.players;
    let err = |m: String| of.err(m);
    let map = of.map(v, &["lines"], "#{ lines: [...] }")?;
    let lines_v = map
        .get("lines")
        .ok_or_else(|| err("a map without `lines`; expected #{ lines: [...] }".into()))?;
    let lines = lines_v.read_lock::<Array>().ok_or_else(|| {
        err(format!(
            "lines = {}; expected an array of line items",
            describe(lines_v)
        ))
    })?;
    let mut out = Settlement {
        scores: vec![0; players as usize],
        lines: Vec::with_capacity(lines.len()),
    };
    let mut notes: Vec<LineItem> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        parse_line(line, players, &mut out.lines, &mut notes)
            .map_err(|m| err(format!("lines[{i}]: {m}")))?;
        if out.lines.len() > MAX_LINES {
            return Err(err(format!(
                "more than {MAX_LINES} line items (lines[{i}] passes the limit)"
            )));
        }
    }
    // At most one `saturated` note per seat (zero points: the sums stay as they are).
    out.lines.extend(notes);
    for (j, item) in out.lines.iter().enumerate() {
        let slot = &mut out.scores[item.seat.index()];
        *slot = slot.checked_add(item.amount).ok_or_else(|| {
            err(format!(
                "line item {j} (seat {}): the seat's total overflows",
                item.seat
            ))
        })?;
    }
    Ok(out)
}

/// Reads one line of a settlement into `out`: `#{ seat, label, points, detail }` is one line
/// item; `#{ label, points: [p0, p1, …], detail }` (points by seat, one entry per player) is one
/// line item for every seat whose entry is not zero, in seat order, sharing label and detail.
/// An amount beyond the host's line limit is saturated, and the seat gets a zero-point
/// `saturated` note in `notes` (the first such amount of the seat is the one described).
fn parse_line(
    v: &Dynamic,
    players: u8,
    out: &mut Vec<LineItem>,
    notes: &mut Vec<LineItem>,
) -> Result<(), String> {
    let map = v.read_lock::<Map>().ok_or_else(|| {
        format!(
            "{}; expected #{{ seat, label, points, detail }} or #{{ label, points: [by seat], detail }}",
            describe(v)
        )
    })?;
    const KEYS: [&str; 4] = ["seat", "label", "points", "detail"];
    if let Some(k) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "unexpected key `{k}` (keys: seat, label, points, detail)"
        ));
    }
    let get = |k: &str| map.get(k).ok_or_else(|| format!("missing `{k}`"));
    let label_v = get("label")?;
    let label_ref = label_v
        .as_immutable_string_ref()
        .map_err(|_| format!("label = {}; expected a string", describe(label_v)))?;
    let label = label_ref.as_str();
    if label.is_empty()
        || label.len() > 32
        || !label
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
    {
        return Err(format!(
            "label {label:?} must be 1–32 lower-case letters, digits or _"
        ));
    }
    let detail_v = get("detail")?;
    let detail_ref = detail_v
        .as_immutable_string_ref()
        .map_err(|_| format!("detail = {}; expected a string", describe(detail_v)))?;
    // A detail longer than 256 characters (e.g. the list of every bomb of a heavy deal) is cut
    // to 255 and an ellipsis: the settlement stands. A string of at most 256 bytes has at most
    // 256 characters: count only longer ones.
    let detail: std::borrow::Cow<str> =
        if detail_ref.len() > 256 && detail_ref.chars().count() > 256 {
            let mut cut: String = detail_ref.chars().take(255).collect();
            cut.push('…');
            cut.into()
        } else {
            detail_ref.as_str().into()
        };
    let detail = detail.as_ref();
    let points_v = get("points")?;
    if let Some(by_seat) = points_v.read_lock::<Array>() {
        if map.contains_key("seat") {
            return Err(
                "points is an array (points by seat) and `seat` is given: use one or the other"
                    .into(),
            );
        }
        if by_seat.len() != players as usize {
            return Err(format!(
                "points has {} entries; points by seat needs one per player ({players})",
                by_seat.len()
            ));
        }
        for (seat, p) in by_seat.iter().enumerate() {
            let (amount, saturated) =
                to_centi_saturating(p).map_err(|m| format!("points[{seat}]: {m}"))?;
            if saturated {
                note_saturation(notes, Seat::at(seat), label, p);
            }
            if amount != 0 {
                out.push(LineItem {
                    seat: Seat::at(seat),
                    label: label.to_string(),
                    amount,
                    detail: detail.to_string(),
                });
            }
        }
        return Ok(());
    }
    let seat_v = get("seat")?;
    let seat = seat_v
        .as_int()
        .ok()
        .filter(|s| (0..players as i64).contains(s))
        .ok_or_else(|| {
            format!(
                "seat = {} is not a seat 0..{}",
                describe(seat_v),
                players.saturating_sub(1)
            )
        })
        .map(|s| Seat::new(s as u8))?;
    let (amount, saturated): (Centi, bool) =
        to_centi_saturating(points_v).map_err(|m| format!("points: {m}"))?;
    if saturated {
        note_saturation(notes, seat, label, points_v);
    }
    out.push(LineItem {
        seat,
        label: label.to_string(),
        amount,
        detail: detail.to_string(),
    });
    Ok(())
}

/// Records that `seat`'s amount `raw` on the line `label` was saturated (once per seat).
fn note_saturation(notes: &mut Vec<LineItem>, seat: Seat, label: &str, raw: &Dynamic) {
    if notes.iter().any(|n| n.seat == seat) {
        return;
    }
    let cap = engine::MAX_POINTS;
    notes.push(LineItem {
        seat,
        label: crate::game::hooks::SATURATED.to_string(),
        amount: 0,
        detail: format!("{label}: {raw} points capped at ±{cap:e} (the host's line limit)"),
    });
}

/// Reads a seating decision (`#{ leader, swap }`, `swap` = `()` or `[a, b]`).
pub(crate) fn parse_seating(v: &Dynamic, of: Returned) -> Result<SeatingDecision, HookError> {
    let players = of.players;
    let err = |m: String| of.err(m);
    let map = of.map(v, &["leader", "swap"], "#{ leader, swap }")?;
    let seat = |v: &Dynamic, what: &str| -> Result<Seat, HookError> {
        v.as_int()
            .ok()
            .filter(|s| (0..players as i64).contains(s))
            .map(|s| Seat::new(s as u8))
            .ok_or_else(|| {
                err(format!(
                    "{what} = {}; expected a seat 0..{}",
                    describe(v),
                    players.saturating_sub(1)
                ))
            })
    };
    let leader = seat(
        map.get("leader").ok_or_else(|| err("no `leader`".into()))?,
        "leader",
    )?;
    let swap = match map.get("swap") {
        None => None,
        Some(s) if s.is_unit() => None,
        Some(s) => {
            let arr = s
                .read_lock::<Array>()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| {
                    err(format!(
                        "swap = {}; expected () or [seat, seat]",
                        describe(s)
                    ))
                })?;
            let a = seat(&arr[0], "swap[0]")?;
            let b = seat(&arr[1], "swap[1]")?;
            if a == b {
                return Err(err(format!(
                    "swap = [{a}, {b}]: a seat cannot swap with itself"
                )));
            }
            Some((a, b))
        }
    };
    Ok(SeatingDecision { leader, swap })
}

/// Hundredths as a points string (`950` → `9.5`, `-400` → `-4`).
pub fn points(centi: impl Into<i128>) -> String {
    let c: i128 = centi.into();
    let sign = if c < 0 { "-" } else { "" };
    let a = c.unsigned_abs();
    let (whole, frac) = (a / 100, a % 100);
    match frac {
        0 => format!("{sign}{whole}"),
        f if f % 10 == 0 => format!("{sign}{whole}.{}", f / 10),
        f => format!("{sign}{whole}.{f:02}"),
    }
}
