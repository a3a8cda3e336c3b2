//! Fuzz target: requests from the wire into domain values (`service::wire::request` and
//! `service::record::Record::new`), the boundary every client's bytes cross first.
//!
//! Byte 0 picks the message (even: `SubmitPlayRequest`, odd: `CreateGameRequest`) and byte 1 a
//! built-in variant; the rest is decoded as that protobuf message (bytes that do not decode are
//! what tonic refuses before any handler runs, so they are skipped).
//! - A SubmitPlay becomes an action or a typed request error. An accepted play holds exactly the
//!   distinct ids sent, each below 108; a pass carries no cards.
//! - A CreateGame becomes a record checked against the variant, or a typed request error. An
//!   accepted record has the variant's player count, one seat token per player, and a seed of
//!   256 bits whose commitment is 64 hex digits.
//! Nothing panics, and no error claims a cause the request cannot have (a store or script failure).
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use prost::Message;
use shuangkou::service::pb;
use shuangkou::service::record::{Minting, Record};
use shuangkou::service::status::Reason;
use shuangkou::service::wire::{self, Action};

const VARIANTS: [&str; 6] = ["classic", "jj", "baibian", "huopin", "qianbian", "erren"];

/// The reasons a malformed request may be refused with.
const REQUEST_REASONS: [Reason; 6] = [
    Reason::BadRequest,
    Reason::BadCardId,
    Reason::DuplicateCard,
    Reason::BadOption,
    Reason::UnknownVariant,
    Reason::LimitExceeded,
];

fn submit_play(bytes: &[u8]) {
    let Ok(req) = pb::SubmitPlayRequest::decode(bytes) else {
        return;
    };
    match wire::action(&req) {
        Ok(Action::Pass) => assert!(req.pass && req.cards.is_empty(), "a pass with cards"),
        Ok(Action::Play { cards, .. }) => {
            let sent: BTreeSet<u32> = req.cards.iter().copied().collect();
            assert_eq!(sent.len(), req.cards.len(), "repeated ids accepted");
            assert!(sent.iter().all(|&id| id < 108), "an id ≥ 108 accepted");
            let got: BTreeSet<u32> = cards.ids().into_iter().collect();
            assert_eq!(got, sent, "the play is not the cards sent");
        }
        Err(e) => assert!(
            REQUEST_REASONS.contains(&e.reason),
            "SubmitPlay refused with {:?}: {}",
            e.reason,
            e.message
        ),
    }
}

fn create_game(variant: &str, bytes: &[u8]) {
    let Ok(mut req) = pb::CreateGameRequest::decode(bytes) else {
        return;
    };
    // The variant is looked up by the service before `Record::new`; pin it to a built-in one.
    req.variant = variant.to_string();
    let Ok(compiled) = shuangkou::variants::builtin(variant) else {
        panic!("built-in variant {variant} does not compile");
    };
    let new_game = wire::new_game(req);
    match Record::new(&compiled, &new_game, Minting::local("fuzz-game", &[7u8; 32], 0)) {
        Ok((record, tokens)) => {
            let players = compiled.meta().players as usize;
            assert_eq!(record.players.len(), players, "player count");
            assert_eq!(tokens.seats.len(), players, "one token per player");
            assert_eq!(record.seed_commitment().len(), 64, "seed commitment");
            assert!(record.seed_bytes().is_ok(), "the seed is 256 bits");
        }
        Err(e) => assert!(
            REQUEST_REASONS.contains(&e.reason),
            "CreateGame refused with {:?}: {}",
            e.reason,
            e.message
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let [kind, variant, rest @ ..] = data else {
        return;
    };
    if kind % 2 == 0 {
        submit_play(rest);
    } else {
        create_game(VARIANTS[*variant as usize % VARIANTS.len()], rest);
    }
});
