//! One Shuangkou game as the client's bots see it: the seating, the cards left, the seat to act,
//! the hands as far as known, followed from the events of every accepted action.

use shuangkou::cards::CardSet;
use shuangkou::hand::Hand;
use shuangkou::service::pb;
use shuangkou::service::pb::game_event::Event as Ev;
use tonic::metadata::AsciiMetadataValue;

use crate::stats::Stats;

/// A game in play.
pub struct Run {
    pub id: String,
    /// `authorization` values, by player.
    pub auth: Vec<AsciiMetadataValue>,
    pub seq: u64,
    /// Player at each seat.
    pub seating: Vec<u8>,
    /// Cards left at each seat.
    pub cards_left: Vec<u32>,
    /// The seat to act.
    pub turn: u8,
    pub finished: bool,
    pub scores: Vec<f64>,
    pub plays: u64,
    /// `--hints local`: the top play of the trick and the hands (by player) as far as known.
    pub top: Option<Hand>,
    pub hands: Vec<Option<CardSet>>,
    /// Players from this index on are server-side bot seats.
    pub first_bot: u8,
    /// The spectator's `authorization` (reads while bot seats act).
    pub spectator: Option<AsciiMetadataValue>,
    /// Deals of the match seen settled so far.
    pub deals_seen: usize,
}

impl Run {
    pub fn next_active(&self, seat: u8) -> u8 {
        let n = self.seating.len() as u8;
        let mut s = seat;
        for _ in 0..n {
            s = (s + 1) % n;
            if self.cards_left.get(s as usize).is_some_and(|&c| c > 0) {
                return s;
            }
        }
        seat
    }

    /// Follows the events of an accepted action (as its actor sees them): the seat to act next,
    /// cards left, deals ended, the match result.
    pub fn follow(
        &mut self,
        events: &[pb::GameEvent],
        actor: u8,
        chosen: Option<Hand>,
        stats: &mut Stats,
    ) -> Result<(), String> {
        for e in events {
            match &e.event {
                Some(Ev::DealStarted(d)) => {
                    self.seating = d.players.iter().map(|&p| p as u8).collect();
                    let size = d.hand.len() as u32;
                    self.cards_left = vec![size; self.seating.len()];
                    self.turn = d.leader as u8;
                    self.top = None;
                    self.hands = vec![None; self.seating.len()];
                    if let Some(h) = self.hands.get_mut(actor as usize) {
                        *h = CardSet::from_ids(&d.hand).ok();
                    }
                }
                Some(Ev::Played(p)) => {
                    if let Some(c) = self.cards_left.get_mut(p.seat as usize) {
                        *c = p.cards_left;
                    }
                    self.turn = self.next_active(p.seat as u8);
                    self.top = chosen;
                }
                Some(Ev::Passed(p)) => self.turn = self.next_active(p.seat as u8),
                Some(Ev::TrickWon(t)) => {
                    self.turn = t.leader as u8;
                    self.top = None;
                }
                // The load generator never opens a stream: its seats are never disconnected.
                Some(
                    Ev::PlayerOut(_)
                    | Ev::PlayerLeft(_)
                    | Ev::SeatDisconnected(_)
                    | Ev::SeatReconnected(_)
                    | Ev::AutoPlayChanged(_),
                ) => {}
                Some(Ev::DealEnded(_)) => {
                    stats.deals += 1;
                    self.deals_seen += 1;
                }
                Some(Ev::MatchEnded(m)) => {
                    self.finished = true;
                    self.scores = m.scores.clone();
                }
                Some(Ev::Escaped(x)) => {
                    return Err(format!("unexpected escape of seat {}", x.seat));
                }
                // The load generator's games are never aborted (no admin acts in a run).
                Some(Ev::GameAborted(_)) => return Err("the game was aborted".into()),
                None => return Err("an event without a body".into()),
            }
        }
        Ok(())
    }
}
