//! The metrics an accepted action's events move (plays, 托管, settlements, presence, escapes).

use super::Session;
use crate::game::Event;
use crate::game::hooks::Outcome;

impl Session {
    pub(super) fn record_metrics(&self, events: &[Event]) {
        let variant = &self.record.variant;
        for e in events {
            match e {
                Event::Played { hand, auto, .. } => {
                    crate::metrics::play(variant, hand.kind.name(), hand.stars, hand.is_bomb());
                    if *auto {
                        crate::metrics::auto_play(variant);
                    }
                }
                Event::DealEnded(r) => {
                    crate::metrics::deal_settled(variant, outcome_name(r.outcome));
                }
                Event::Passed { auto: true, .. } => {
                    crate::metrics::auto_play(variant);
                }
                Event::Disconnected { .. } => crate::metrics::presence(variant, "disconnect"),
                Event::Reconnected { .. } => crate::metrics::presence(variant, "reconnect"),
                Event::Escaped { reason, .. } => crate::metrics::escape(variant, reason.name()),
                _ => {}
            }
        }
    }
}

fn outcome_name(o: Option<Outcome>) -> &'static str {
    o.map_or("escape", Outcome::name)
}
