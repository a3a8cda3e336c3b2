//! The compact form a live game keeps a settled deal in: postcard of the result with each
//! distinct score-line text (label, detail) written once and referred to by its index. A
//! variant's settlement repeats a line's text for every seat (the 4 seats' `base` lines share
//! their label and detail), so the text, most of a result's bytes, shrinks about fourfold.
//!
//! Only memory holds this form: the chained digest, the snapshots and every encoding of the
//! state still see the result itself (decoded from this, exactly as it was).

use serde::{Deserialize, Serialize};

use super::DealResult;
use crate::game::hooks::{Centi, LineItem, Outcome, Settlement};
use crate::seat::{Seat, Seating};

/// A deal result with its line texts in one list (`T`: `&str` written, `String` read).
#[derive(Serialize, Deserialize)]
struct Packed<T> {
    deal_number: u32,
    outcome: Option<Outcome>,
    escaped: Option<Seat>,
    places: Vec<Seat>,
    players: Seating,
    scores: Vec<Centi>,
    /// Each distinct label and detail text once, in order of first use.
    texts: Vec<T>,
    lines: Vec<Line>,
}

/// A score line, its texts as indexes into [`Packed::texts`].
#[derive(Serialize, Deserialize)]
struct Line {
    seat: Seat,
    label: u32,
    amount: Centi,
    detail: u32,
}

/// The compact bytes of `result` (empty if it does not encode, which a result cannot fail to).
pub fn pack<'a>(result: &'a DealResult) -> Vec<u8> {
    let mut texts: Vec<&'a str> = Vec::new();
    let mut index = |text: &'a str| -> u32 {
        let at = texts.iter().position(|t| *t == text).unwrap_or_else(|| {
            texts.push(text);
            texts.len() - 1
        });
        at as u32
    };
    let lines = result.settlement.lines.iter().map(|l| Line {
        seat: l.seat,
        label: index(&l.label),
        amount: l.amount,
        detail: index(&l.detail),
    });
    let lines: Vec<Line> = lines.collect();
    let packed = Packed {
        deal_number: result.deal_number,
        outcome: result.outcome,
        escaped: result.escaped,
        places: result.places.clone(),
        players: result.players.clone(),
        scores: result.settlement.scores.clone(),
        texts,
        lines,
    };
    postcard::to_stdvec(&packed).unwrap_or_default()
}

/// The result `bytes` ([`pack`]'s) stand for (`None` if they are not a packed result).
pub fn unpack(bytes: &[u8]) -> Option<DealResult> {
    let packed: Packed<String> = postcard::from_bytes(bytes).ok()?;
    let text = |i: u32| packed.texts.get(i as usize).cloned();
    let lines = packed.lines.iter().map(|l| {
        Some(LineItem {
            seat: l.seat,
            label: text(l.label)?,
            amount: l.amount,
            detail: text(l.detail)?,
        })
    });
    let lines = lines.collect::<Option<Vec<_>>>()?;
    Some(DealResult {
        deal_number: packed.deal_number,
        outcome: packed.outcome,
        escaped: packed.escaped,
        places: packed.places,
        players: packed.players,
        settlement: Settlement {
            scores: packed.scores,
            lines,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seat::Player;

    fn line(seat: u8, label: &str, amount: Centi, detail: &str) -> LineItem {
        LineItem {
            seat: Seat::new(seat),
            label: label.into(),
            amount,
            detail: detail.into(),
        }
    }

    /// Texts shared by seats, texts of one seat, a label reused as another line's detail and
    /// an empty text read back in place; the packed form is smaller than postcard's.
    #[test]
    fn a_packed_result_reads_back_exactly_and_smaller() {
        let bomb = "貢獻分: seat 2's 6★ (8♠ 8♠ 8♥ 8♥ 8♦ 8♦), paid by each other player";
        let mut lines = Vec::new();
        for s in 0..4 {
            lines.push(line(
                s,
                "base",
                [400, -400][usize::from(s % 2)],
                "雙扣 double",
            ));
        }
        lines.push(line(0, "multiplier", 400, "×2: winners' 5★ bomb"));
        for s in [3, 1, 2, 0] {
            lines.push(line(
                s,
                "contribution",
                if s == 2 { 300 } else { -100 },
                bomb,
            ));
        }
        lines.push(line(1, "rake", -10, ""));
        lines.push(line(2, "base", 0, "base"));
        let result = DealResult {
            deal_number: 700,
            outcome: Some(Outcome::Double),
            escaped: Some(Seat::new(3)),
            places: Seat::list(&[2, 0, 1, 3]),
            players: Seating::from_players(Player::list(&[1, 0, 3, 2])),
            settlement: Settlement {
                scores: vec![700, -510, 400, -500],
                lines,
            },
        };
        let packed = pack(&result);
        assert_eq!(unpack(&packed), Some(result.clone()));
        let plain = postcard::to_stdvec(&result).unwrap();
        assert!(
            packed.len() * 2 < plain.len(),
            "packed {} B, postcard {} B",
            packed.len(),
            plain.len()
        );
        // Cut short, the bytes are no result.
        assert_eq!(unpack(&packed[..packed.len() - 1]), None);
    }
}
