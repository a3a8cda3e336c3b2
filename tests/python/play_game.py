#!/usr/bin/env python3
"""An independent client: plays complete matches against a running shuangkou server.

Generated from proto/ by grpc_tools.protoc (not by anything in this repository), it uses only
what a platform frontend has: the seat tokens CreateGame returns, GetState, GetHints and
SubmitPlay. It never translates between seats and players to act: the player to act is the one
whose own view says the turn is its seat, and SubmitPlay names no seat (the token decides).
It checks what it sees (its own hand only, turn order, seq growth) and, at the end,
that GetReplay reveals a seed matching the commitment, that each deal's lines add up to its
scores, that the totals add up the deals, and that every deal obeys the variant's sum rule
(docs/rules/RULES.md §6; `check_scores`).

usage: play_game.py HOST:PORT [VARIANT ...]
"""

import hashlib
import os
import random
import sys
import tempfile

import grpc

import stubs


def play_match(stub, pb, variant: str, rng: random.Random) -> None:
    variants = {v.id: v for v in stub.ListVariants(pb.ListVariantsRequest()).variants}
    assert variant in variants, f"{variant} not in {sorted(variants)}"
    players = variants[variant].players
    created = stub.CreateGame(
        pb.CreateGameRequest(
            variant=variant,
            deals=2,
            players=[f"py{i}" for i in range(players)],
            request_id=f"py-{variant}-{rng.random()}",
        )
    )
    game_id = created.game_id
    tokens = list(created.seat_tokens)
    assert len(tokens) == players
    meta = [[("authorization", f"Bearer {t}")] for t in tokens]
    steps = 0
    last_seq = 0
    while True:
        states = [stub.GetState(pb.GetStateRequest(game_id=game_id), metadata=m) for m in meta]
        state = states[0]
        assert all(s.seq == state.seq for s in states), "players disagree on seq"
        assert state.seq >= last_seq
        last_seq = state.seq
        if state.phase == pb.PHASE_FINISHED:
            break
        # Each player sees its own hand and card counts that match it.
        for p, s in enumerate(states):
            mine = [x for x in s.seats if x.player == p][0]
            assert mine.card_count == len(s.hand), "card count differs from own hand"
        # The player to act: the one whose own view has the turn at its own seat.
        acting = [p for p, s in enumerate(states) if s.HasField("your_seat")
                  and s.your_seat == s.turn_seat]
        assert len(acting) == 1, f"players to act: {acting}"
        player = acting[0]
        hints = stub.GetHints(pb.GetHintsRequest(game_id=game_id, limit=50),
                              metadata=meta[player])
        assert hints.your_turn and len(hints.plays) <= 50 and hints.total >= len(hints.plays)
        if hints.can_pass and (not hints.plays or rng.random() < 0.5):
            # `pass` is a Python keyword: set the field by name. No seat: the token decides.
            req = pb.SubmitPlayRequest(
                game_id=game_id, expected_seq=state.seq,
                request_id=f"{game_id}-{state.seq}", **{"pass": True},
            )
        else:
            play = hints.plays[rng.randrange(len(hints.plays))]
            req = pb.SubmitPlayRequest(
                game_id=game_id, cards=list(play.cards),
                expected_seq=state.seq, request_id=f"{game_id}-{state.seq}",
            )
            if play.type:
                req.declared.type = play.type
                req.declared.key = play.key
        resp = stub.SubmitPlay(req, metadata=meta[player])
        assert resp.seq == state.seq + 1, (resp.seq, state.seq)
        # A retry with the same request id returns the same result and does not act again.
        again = stub.SubmitPlay(req, metadata=meta[player])
        assert again == resp, f"retry answered {again} after {resp}"
        after = stub.GetState(pb.GetStateRequest(game_id=game_id), metadata=meta[player])
        assert after.seq == resp.seq, f"the retry acted again: seq {after.seq} after {resp.seq}"
        # Naming another player with this token is refused, naming the token's player.
        other = (player + 1) % players
        try:
            stub.SubmitPlay(pb.SubmitPlayRequest(game_id=game_id, seat=other, expected_seq=0),
                            metadata=meta[player])
            raise AssertionError("acting for another player was accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.PERMISSION_DENIED, e
            assert f"player {player} (seat " in e.details(), e.details()
        # The same request id with another request is a conflict.
        try:
            stub.SubmitPlay(pb.SubmitPlayRequest(game_id=game_id, expected_seq=resp.seq,
                                                 request_id=req.request_id, cards=[107]),
                            metadata=meta[player])
            raise AssertionError("a reused request id for another request was accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.ALREADY_EXISTS, e
        steps += 1
        assert steps < 5000, "match did not end"
    # The replay, page by page (small pages, so a match takes several).
    pages, token = [], ""
    while True:
        page = stub.GetReplay(pb.GetReplayRequest(game_id=game_id, max_actions=40,
                                                  page_token=token), metadata=meta[0])
        pages.append(page)
        token = page.next_page_token
        if not token:
            break
    replay = pages[0]
    actions = [a for p in pages for a in p.actions]
    assert [a.seq for a in actions] == list(range(1, last_seq + 1)), "pages lose or repeat"
    assert all(p.total_actions == last_seq for p in pages)
    assert hashlib.sha256(bytes.fromhex(replay.seed)).hexdigest() == created.seed_commitment
    final = stub.GetState(pb.GetStateRequest(game_id=game_id), metadata=meta[0])
    check_scores(pb, variant, players, final.scores)
    total = sum(final.scores.total)
    print(f"{variant}: {steps} actions, {len(final.scores.deals)} deals, scores "
          f"{[round(x, 2) for x in final.scores.total]} (sum {round(total, 2)})")


# Sum rules from docs/rules/RULES.md §6 at the default options (no rake, no escape in these matches):
# classic, jj and erren are zero-sum; the 百變 family pays 平扣 as 1/0/0/1 × the multiplier
# (1, 2, 4, 8 or 16), every other result zero-sum.
ZERO_SUM = {"classic", "jj", "erren"}
BAIBIAN_FAMILY = {"baibian", "huopin", "qianbian"}


def check_scores(pb, variant: str, players: int, scores) -> None:
    """Each deal's lines add up to its scores per seat, its sum obeys the variant's rule, and the
    match totals are the deals' scores added up by player."""
    totals = [0.0] * players
    assert scores.deals, "no deal was settled"
    for d in scores.deals:
        where = f"{variant} deal {d.deal_number}"
        assert len(d.scores) == players and len(d.players) == players, where
        for seat in range(players):
            lines = sum(x.amount for x in d.lines if x.seat == seat)
            assert abs(lines - d.scores[seat]) < 1e-6, f"{where}: seat {seat} lines {lines}"
            totals[d.players[seat]] += d.scores[seat]
            # By player as well as by seat.
            assert abs(d.player_scores[d.players[seat]] - d.scores[seat]) < 1e-6, where
        s = sum(d.scores)
        if variant in ZERO_SUM or (variant in BAIBIAN_FAMILY and d.outcome != pb.OUTCOME_DRAW):
            assert abs(s) < 1e-6, f"{where}: scores {list(d.scores)} sum to {s}, not 0"
        elif variant in BAIBIAN_FAMILY:
            assert round(s / 2, 6) in (1, 2, 4, 8, 16), f"{where}: 平扣 sum {s} is not 2 × M"
        else:
            print(f"note: no sum rule known for {variant}")
    for p in range(players):
        assert abs(totals[p] - scores.total[p]) < 1e-6, (variant, p, totals, list(scores.total))


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    addr = sys.argv[1]
    variants = sys.argv[2:] or ["classic", "jj", "baibian", "huopin", "qianbian", "erren"]
    out = tempfile.mkdtemp(prefix="shuangkou-py-")
    pb, pbg = stubs.generate("shuangkou", out)

    seed = int(os.environ.get("SHUANGKOU_PY_SEED", "20261129"))
    print(f"seed {seed}")
    rng = random.Random(seed)
    with stubs.channel(addr) as channel:
        stub = pbg.GameEngineStub(channel)
        for v in variants:
            play_match(stub, pb, v, rng)
    print("python client: all matches complete")


if __name__ == "__main__":
    main()
