#!/usr/bin/env python3
"""An independent client of shengji.v1 (升級): plays complete matches against a running server.

Generated from proto/ by grpc_tools.protoc (not by anything in this repository), it uses only
what a platform frontend has: the seat tokens CreateGame returns, GetState, GetHints,
SubmitAction and WatchGame. Each seat decides from its own view. It checks what it sees: its own
hand only, the bottom only as the dealer, a spectator's stream without a hidden card; and, from
the rules text (SHENGJI.md A2, written out here independently of the engine), every deal's
points (100 in a deck), the 摳底 bonus, the upgrade band, the levels and the next dealer; at the
end, that GetReplay reveals a seed matching the commitment.

usage: play_shengji.py HOST:PORT [MATCHES]
"""

import hashlib
import os
import random
import sys
import tempfile
import threading

import grpc

import stubs

POINTS = {2: 5, 7: 10, 10: 10}  # rank index (id % 13: 0 = "3") -> points of 5, T, K


def points(card: int) -> int:
    return 0 if card >= 52 else POINTS.get(card % 13, 0)


def upgrade(p: int):
    """The seed's table: 0 -> dealer +3; under 40 -> dealer +1; 40 -> opponents +1, +1 per 20."""
    if p == 0:
        return ("dealer", 3)
    if p < 40:
        return ("dealer", 1)
    return ("opponents", min(12, 1 + (p - 40) // 20))


def collect(stream, out: list, errors: list) -> None:
    """Reads the spectator's stream into `out`; an error ends it into `errors` (checked by the
    match, which fails on it: the reader thread never dies silently)."""
    try:
        for event in stream:
            out.append(event)
    except Exception as e:  # grpc.RpcError, or anything else the reader met
        errors.append(e)


def rank_index(card: int) -> int:
    return card % 54 % 13


def effective_suit(card: int, level: int, trump: int):
    """SHENGJI.md A2.3, written out here: jokers, the level's cards and the trump suit's cards are
    all trumps ("T"); every other card belongs to its suit (0 spades .. 3 diamonds, the card id's
    13-block). `level` is the face 2..14 (A = 14), `trump` the proto Suit (0: no trump suit)."""
    if card % 54 >= 52:
        return "T"
    level_rank = 12 if level == 2 else level - 3  # rank index: 0 = "3" .. 11 = "A", 12 = "2"
    suit = card % 54 // 13
    if rank_index(card) == level_rank or (trump != 0 and suit == trump - 1):
        return "T"
    return suit


def follow_rule(hand, trick, level: int, trump: int) -> set:
    """SHENGJI.md A2.6, written out here: a card led is free; after it, a seat holding cards of
    the led card's (effective) suit must play one of them, else any card."""
    if not trick:
        return set(hand)
    led = effective_suit(trick[0].card, level, trump)
    same = {c for c in hand if effective_suit(c, level, trump) == led}
    return same or set(hand)


def play_match(stub, pb, rng: random.Random, index: int) -> None:
    created = stub.CreateGame(
        pb.CreateGameRequest(players=[f"py{i}" for i in range(4)], request_id=f"py-sj-{rng.random()}")
    )
    gid = created.game_id
    seats = [[("authorization", f"Bearer {t}")] for t in created.seat_tokens]
    spectator = [("authorization", f"Bearer {created.spectator_token}")]
    watched: list = []
    stream_errors: list = []
    stream = stub.WatchGame(pb.WatchGameRequest(game_id=gid), metadata=spectator, timeout=600)
    watcher = threading.Thread(target=collect, args=(stream, watched, stream_errors), daemon=True)
    watcher.start()

    def state(meta):
        return stub.GetState(pb.GetStateRequest(game_id=gid), metadata=meta).state

    def submit(seat: int, seq: int, **action):
        req = pb.SubmitActionRequest(game_id=gid, seat=seat, expected_seq=seq, **action)
        return stub.SubmitAction(req, metadata=seats[seat])

    steps = 0
    last_seq = 0
    probes = 0
    while True:
        steps += 1
        assert steps < 20000, "the match did not end"
        views = [state(m) for m in seats]
        spec = state(spectator)
        assert spec.seq >= last_seq, "seq went back"
        last_seq = spec.seq
        # Each seat sees its own hand only; the bottom only as the dealer, once taken.
        assert not spec.hand and not spec.bottom_visible
        held = set()
        for s, v in enumerate(views):
            assert v.your_seat == s
            assert len(v.hand) == spec.hand_counts[s]
            assert not held & set(v.hand), "a card in two hands"
            held |= set(v.hand)
            taken = spec.phase in (pb.PHASE_EXCHANGE, pb.PHASE_PLAYING)
            is_dealer = spec.HasField("dealer") and spec.dealer == s
            assert v.bottom_visible == (taken and is_dealer), f"seat {s} bottom visibility"
        if spec.phase == pb.PHASE_FINISHED:
            break
        seq = spec.seq
        if spec.phase == pb.PHASE_DEALING:
            if not spec.HasField("declaration") and rng.random() < 0.3:
                s = rng.randrange(4)
                hints = stub.GetHints(pb.GetHintsRequest(game_id=gid), metadata=seats[s])
                if hints.declarable:
                    submit(s, seq, declare=pb.Declare(card=hints.declarable[0]))
                    continue
            submit(rng.randrange(4), seq, deal=pb.Deal(count=rng.randint(1, 12)))
            continue
        turn = spec.turn
        hints = stub.GetHints(pb.GetHintsRequest(game_id=gid), metadata=seats[turn])
        assert hints.your_turn
        if hints.must_bury:
            hand = list(views[turn].hand)
            assert len(hand) == 18, "the dealer holds 18 cards"
            pool = [c for c in hand if hints.bury_points_allowed or points(c) == 0]
            submit(turn, seq, bury=pb.Bury(cards=rng.sample(pool, 6)))
        else:
            legal = list(hints.legal_cards)
            hand = list(views[turn].hand)
            assert legal and set(legal) <= set(hand)
            # The follow rule from the rules text, not from the engine's answer: the engine's
            # legal cards are exactly those, and a card outside them is refused.
            allowed = follow_rule(hand, list(spec.trick), spec.level, spec.trump)
            assert set(legal) == allowed, (
                f"legal cards {sorted(legal)}, the follow rule allows {sorted(allowed)} "
                f"(trick {[(t.seat, t.card) for t in spec.trick]}, level {spec.level}, trump {spec.trump})"
            )
            if len(allowed) < len(hand):
                # A card the rule forbids is refused with MUST_FOLLOW.
                probes += 1
                bad = next(c for c in hand if c not in allowed)
                try:
                    submit(turn, seq, play=pb.PlayCard(card=bad))
                    raise AssertionError("a card that does not follow was accepted")
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.FAILED_PRECONDITION, e
                    assert e.details().startswith("MUST_FOLLOW"), e.details()
            submit(turn, seq, play=pb.PlayCard(card=rng.choice(legal)))

    end = state(spectator)
    check_results(pb, end)
    assert probes > 0, "no turn where the follow rule forbade a card: the probe never ran"
    watcher.join(timeout=60)
    assert not watcher.is_alive(), "the spectator's stream did not end with the match"
    assert not stream_errors, f"the spectator's stream failed: {stream_errors[0]!r}"
    seen = {"card_dealt": 0, "buried": 0}
    for e in watched:
        kind = e.WhichOneof("kind")
        if kind in seen:
            seen[kind] += 1
        if kind == "card_dealt":
            assert not e.card_dealt.HasField("card"), "a spectator saw a dealt card"
        if kind in ("bottom_taken", "buried"):
            assert not getattr(e, kind).visible and not getattr(e, kind).cards
    # The hidden-card checks above looked at something: every card dealt and every burial.
    deals = len(end.results)
    assert seen == {"card_dealt": 48 * deals, "buried": deals}, (
        f"the spectator saw {seen} in {deals} deals"
    )
    replay = stub.GetReplay(pb.GetReplayRequest(game_id=gid), metadata=spectator)
    seed = bytes.fromhex(replay.seed)
    assert hashlib.sha256(seed).hexdigest() == created.seed_commitment, "seed commitment"
    assert len(replay.results) == len(end.results)
    print(
        f"match {index}: {len(end.results)} deals, team {end.winner} wins, "
        f"{len(replay.steps)} core steps, {len(watched)} events watched, {probes} follow probes"
    )


def check_results(pb, end) -> None:
    levels = [2, 2]
    dealer = None
    for r in end.results:
        assert r.deal_number == len([x for x in end.results if x.deal_number <= r.deal_number])
        if dealer is not None:
            assert r.dealer == dealer, "the next dealer rule"
        assert sum(r.trick_points) + r.buried_points == 100, "100 points in a deck"
        assert r.buried_points == sum(points(c) for c in r.buried)
        assert len(r.buried) == 6
        dteam = r.dealer % 2
        opp = 1 - dteam
        assert r.level == levels[dteam], "the 莊家 side's level is played"
        kou = r.last_trick_winner % 2 == opp
        assert r.bottom_bonus == (r.buried_points * r.multiplier if kou else 0)
        assert (r.multiplier > 0) == kou
        assert r.opponents_points == r.trick_points[opp] + r.bottom_bonus
        side, n = upgrade(r.opponents_points)
        want_side = pb.SIDE_DEALER if side == "dealer" else pb.SIDE_OPPONENTS
        assert (r.upgrade_side, r.upgrade_levels) == (want_side, n), (r.opponents_points, r)
        up = dteam if side == "dealer" else opp
        levels[up] = min(14, levels[up] + n)
        assert [r.levels_after.team0, r.levels_after.team1] == levels
        if r.HasField("winner"):
            assert levels[r.winner] == 14 and r.winner == up
            assert not r.HasField("next_dealer")
        else:
            dealer = (r.dealer + 2) % 4 if side == "dealer" else (r.dealer + 1) % 4
            assert r.next_dealer == dealer
    assert end.HasField("winner") and end.results[-1].winner == end.winner


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    addr = sys.argv[1]
    matches = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    seed = int(os.environ.get("SHENGJI_PY_SEED", "2026"))
    print(f"seed {seed} (rerun with SHENGJI_PY_SEED={seed})")
    with tempfile.TemporaryDirectory() as out:
        pb, pb_grpc = stubs.generate("shengji", out)

        with stubs.channel(addr) as channel:
            stub = pb_grpc.ShengjiEngineStub(channel)
            rng = random.Random(seed)
            for i in range(matches):
                play_match(stub, pb, rng, i)
    print(f"ok: {matches} 升級 matches")


if __name__ == "__main__":
    main()
