//! Unit tests of the game record: its encoding, defaults left out, and older records read back.

use super::*;
use crate::game::HashScheme;

fn record() -> Record {
    Record {
        id: "g".into(),
        platform: None,
        variant: "classic".into(),
        version: "v".into(),
        script: String::new(),
        options: BTreeMap::new(),
        deals: 1,
        players: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        seed: "00".repeat(32),
        preset_hands: None,
        created_at: 1,
        seat_digests: vec![String::new(); 4],
        spectator_digest: String::new(),
        hash_scheme: HashScheme::Compact,
        request_digest: None,
        bots: BTreeMap::new(),
        bot_delay_ms: 0,
        auto_policy: String::new(),
    }
}

#[test]
fn player_names_default_to_player_n_and_must_seat_the_game_exactly() {
    let names = player_names(&[], 4, "升級").unwrap();
    assert_eq!(names, ["player0", "player1", "player2", "player3"]);
    let given = vec!["a".to_string(), "b".to_string()];
    assert_eq!(player_names(&given, 2, "classic").unwrap(), given);
    let e = player_names(&given, 4, "升級").unwrap_err();
    assert_eq!(e.reason, Reason::BadRequest);
    assert_eq!(e.message, "升級 needs 4 players, got 2");
    let three = player_names(&[], 3, "classic").unwrap();
    assert_eq!(
        three,
        ["player0", "player1", "player2"],
        "as many defaults as seats"
    );
}

#[test]
fn a_player_name_is_at_most_128_bytes() {
    let longest = vec!["x".repeat(128), "y".to_string()];
    assert!(player_names(&longest, 2, "g").is_ok());
    let long = vec!["x".repeat(129), "y".to_string()];
    let e = player_names(&long, 2, "g").unwrap_err();
    assert_eq!(e.reason, Reason::BadRequest);
    assert_eq!(e.message, "player names are at most 128 bytes");
}

#[test]
fn a_player_name_holds_no_control_or_bidi_character() {
    for bad in [
        "a\u{0}b",
        "bell\u{7}",
        "line\n",
        "\u{202E}evil",
        "x\u{2066}",
        "\u{200F}",
    ] {
        let names = vec![bad.to_string(), "y".to_string()];
        let e = player_names(&names, 2, "g").unwrap_err();
        assert_eq!(e.reason, Reason::BadRequest, "{bad:?}");
        assert!(
            e.message.starts_with("player 0's name holds U+"),
            "{}",
            e.message
        );
        assert!(e.metadata.contains(&("field".into(), "players".into())));
    }
    let fine = vec!["張三 Zhang".to_string(), "ナナ🂡".to_string()];
    assert!(player_names(&fine, 2, "g").is_ok());
}

/// A game in progress as `Record::new` writes it: default names, no platform, no options.
pub(crate) fn in_progress() -> Record {
    Record {
        id: "17f3ebc1db44fb034cf8b798".into(),
        version: "ecf5".repeat(16),
        players: (0..4).map(|i| format!("player{i}")).collect(),
        seat_digests: (0..4).map(|i| format!("{i}").repeat(64)).collect(),
        spectator_digest: "e".repeat(64),
        hash_scheme: HashScheme::Chained,
        ..record()
    }
}

/// The same record as every field was written before defaults were left out.
fn written_in_full(r: &Record) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&r.encode().unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.insert("platform".into(), serde_json::Value::Null);
    o.insert("script".into(), "".into());
    o.insert("options".into(), serde_json::json!({}));
    o.insert("players".into(), serde_json::json!(r.players));
    o.insert("preset_hands".into(), serde_json::Value::Null);
    serde_json::to_vec(&v).unwrap()
}

pub(crate) fn fields(bytes: &[u8]) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    v.as_object().unwrap().keys().cloned().collect()
}

pub(crate) fn same(a: &Record, b: &Record) {
    assert_eq!(
        serde_json::to_value(a).unwrap(),
        serde_json::to_value(b).unwrap()
    );
    assert_eq!(a.players, b.players);
}

#[test]
fn defaults_are_left_out_of_the_body_and_read_back() {
    let r = in_progress();
    let body = r.encode().unwrap();
    let keys = fields(&body);
    for left_out in ["platform", "script", "options", "players", "preset_hands"] {
        assert!(!keys.iter().any(|k| k == left_out), "{left_out} written");
    }
    let back = Record::decode(&body).unwrap();
    assert_eq!(
        back.players,
        ["player0", "player1", "player2", "player3"],
        "the default names come back, one per seat digest"
    );
    same(&back, &r);
    // A record written in full (every store's data before) reads as the same record.
    let full = written_in_full(&r);
    assert!(
        full.len() >= body.len() + 100,
        "{} vs {}",
        full.len(),
        body.len()
    );
    same(&Record::decode(&full).unwrap(), &r);
}

#[test]
fn fields_other_than_their_defaults_are_written_and_read_back() {
    let r = Record {
        platform: Some("p".into()),
        script: "fn x() {}".into(),
        options: BTreeMap::from([("a".into(), "1".into())]),
        players: vec!["player0".into(), "bob".into(), "player2".into(), "d".into()],
        preset_hands: Some(vec![vec![1], vec![2], vec![3], vec![4]]),
        ..in_progress()
    };
    let body = r.encode().unwrap();
    let keys = fields(&body);
    for kept in ["platform", "script", "options", "players", "preset_hands"] {
        assert!(keys.iter().any(|k| k == kept), "{kept} left out");
    }
    let back = Record::decode(&body).unwrap();
    same(&back, &r);
    assert_eq!(back.players, r.players);
    // Default names in another order, or fewer than the seats, are not the defaults.
    let swapped = Record {
        players: vec!["player1".into(), "player0".into()],
        seat_digests: vec![String::new(); 2],
        ..in_progress()
    };
    assert_eq!(
        Record::decode(&swapped.encode().unwrap()).unwrap().players,
        ["player1", "player0"]
    );
}

#[test]
fn a_record_without_players_or_seat_digests_is_refused() {
    let r = Record {
        seat_digests: Vec::new(),
        ..in_progress()
    };
    let e = Record::decode(&r.encode().unwrap()).unwrap_err();
    assert_eq!(e.reason, Reason::StoreFailed);
    assert_eq!(
        e.message,
        "stored record unreadable: no players and no seat digests"
    );
}

#[test]
fn the_hash_scheme_round_trips_and_defaults_to_json_for_older_records() {
    let r = record();
    let back = Record::decode(&r.encode().unwrap()).unwrap();
    assert_eq!(back.hash_scheme, HashScheme::Compact);
    // A record written before the field existed: its log was hashed over JSON.
    let mut v: serde_json::Value = serde_json::from_slice(&r.encode().unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("hash_scheme");
    let old = Record::decode(&serde_json::to_vec(&v).unwrap()).unwrap();
    assert_eq!(old.hash_scheme, HashScheme::Json);
}

/// A remembered token secret answers as `Record::verify` does: a genuine token verifies (first
/// by its digest, then by the remembered secret, without reading the digest again), a forged
/// one of a remembered role or of another role does not and is not remembered, and a spectator
/// token is remembered apart from the seats'.
#[test]
fn remembered_token_secrets_answer_as_the_digests_do() {
    let key = [7u8; 32];
    let (tokens, seat_digests, spectator_digest) =
        tokens_for(&key, "g", 4, &BTreeMap::new()).unwrap();
    let mut r = Record {
        seat_digests,
        spectator_digest,
        ..record()
    };
    let parse = |t: &str| GameToken::parse(t).unwrap();
    let forge = |t: &str| {
        let (head, secret) = t.rsplit_once('.').unwrap();
        let flipped = if secret.starts_with('0') { "1" } else { "0" };
        parse(&format!("{head}.{flipped}{}", &secret[1..]))
    };
    let mut memory = VerifiedTokens::default();
    assert!(
        !memory.verify(&r, &forge(&tokens.seats[1])),
        "not yet remembered"
    );
    assert!(memory.verify(&r, &parse(&tokens.seats[1])), "by the digest");
    assert!(
        !memory.verify(&r, &forge(&tokens.seats[1])),
        "remembered role"
    );
    assert!(!memory.verify(&r, &parse(&tokens.seats[2].replace(".p2.", ".p1."))));
    assert!(!memory.verify(&r, &forge(&tokens.spectator)));
    assert!(memory.verify(&r, &parse(&tokens.spectator)));
    // Remembered: the digests are not read again (a record without them still answers).
    r.seat_digests = vec![String::new(); 4];
    r.spectator_digest = String::new();
    assert!(memory.verify(&r, &parse(&tokens.seats[1])));
    assert!(memory.verify(&r, &parse(&tokens.spectator)));
    assert!(!memory.verify(&r, &forge(&tokens.seats[1])));
    assert!(
        !memory.verify(&r, &parse(&tokens.seats[0])),
        "never verified"
    );
    assert!(!r.verify(&parse(&tokens.seats[1])));
}
