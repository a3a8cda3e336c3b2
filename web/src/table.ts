// The table, for a seat (its hand, play, pass, hint, interpretations) or a spectator: seats with
// names, card counts, places, turn and markers, the trick and who played it, the partner's hand
// under 雙明, the shown card, the results. GetState is the truth; WatchGame says when to read it
// again and who did what in the trick.

import type { GameEvent, GetStateResponse, Play, SeatState } from "./gen/shuangkou/v1/shuangkou_pb";
import { Phase } from "./gen/shuangkou/v1/shuangkou_pb";
import { api, auth, rejection, type Interpretation } from "./api";
import { cardElement, cardRow, sortHand, wildOf, type Wild } from "./cards";
import { absolute, button, countdown, h, measured, moveFocus, recallGame, shareLinks, typing } from "./dom";
import { Feed, LiveTable, coalesced } from "./live";
import { botWords, dealWords, ordinal, outcomeWords, t, teamWords, typeWords } from "./i18n";
import { againButton } from "./lobby";
import { points, renderResults } from "./results";
import { named, relation, relationMarker } from "./seats";

interface TrickEntry {
  pass: boolean;
  play?: Play;
}

/** SeatState.connected of the presence API, read where the server sends it. */
function connected(s: SeatState): boolean | undefined {
  const c = (s as unknown as Record<string, unknown>)["connected"];
  return typeof c === "boolean" ? c : undefined;
}

function describe(p: Play): string {
  return `${typeWords(p.typeName)}${p.key ? " " + p.key : ""}${p.stars ? ` ${p.stars}★` : ""}`;
}

export class Table extends LiveTable<GameEvent> {
  private state?: GetStateResponse;
  private wild: Wild = "none";
  private selected = new Set<number>();
  private hints: Play[] = [];
  private hintAt = -1;
  private hintsSeq = -1n;
  private trick = new Map<number, TrickEntry>();
  private trickDone = false;
  private readonly feed = new Feed();
  private ambiguity?: { cards: number[]; options: Interpretation[] };

  private nameOfSeat(seat: number): string {
    return this.state?.seats.find((s) => s.seat === seat)?.name ?? `#${seat}`;
  }

  /** Names by player, each with its relation to the viewer's seat ("partner", "left opponent"). */
  private namesByPlayer(): string[] {
    const st = this.state;
    const names: string[] = [];
    for (const s of st?.seats ?? []) names[s.player] = named(s.name, relation(s.seat, st?.yourSeat, st?.seats.length ?? 4));
    return names;
  }

  /** A deal result's scores in words, by seat, with the names and relations. */
  private scoreLines(scores: number[], players: number[]): string[] {
    const names = this.namesByPlayer();
    return scores.map((v, seat) => `${names[players[seat] ?? seat] ?? `#${seat}`}: ${points(v)}`);
  }

  protected async leaveCost(): Promise<string[]> {
    const r = await api.leaveGame({ gameId: this.viewer.game, dryRun: true }, auth(this.viewer.token));
    const d = r.dealResult;
    return d ? [t("leaveEscape"), ...this.scoreLines(d.scores, d.players)] : [t("leaveFree")];
  }

  protected async leaveNow(): Promise<string[]> {
    const r = await api.leaveGame({ gameId: this.viewer.game, requestId: crypto.randomUUID() }, auth(this.viewer.token));
    const d = r.dealResult;
    return d ? [t("leftTable"), t("leftScored"), ...this.scoreLines(d.scores, d.players)] : [t("leftTable")];
  }

  protected redraw(): void {
    this.render();
  }

  /** Reads GetState and renders (coalesced: see `live.ts`). */
  protected readonly refresh = coalesced(async () => {
    try {
      const s = await api.getState({ gameId: this.viewer.game }, auth(this.viewer.token));
      if (!this.state || s.seq >= this.state.seq) this.state = s;
      const created = recallGame(this.viewer.game);
      this.wild = wildOf(s.variant, created?.options ?? {});
    } catch (e) {
      this.say(rejection(e));
    }
    this.render();
  });

  protected events(from: bigint, signal: AbortSignal): AsyncIterable<GameEvent> {
    return api.watchGame({ gameId: this.viewer.game, fromSeq: from }, auth(this.viewer.token, signal));
  }

  protected over(): boolean {
    return this.state?.phase === Phase.FINISHED;
  }

  protected onEvent(ev: GameEvent): void {
    const e = ev.event;
    const say = (s: string) => this.feed.say(s);
    switch (e.case) {
      case "dealStarted":
        this.trick.clear();
        this.trickDone = false;
        say(`${dealWords(e.value.dealNumber)}`);
        break;
      case "played":
      case "passed":
        if (this.trickDone) {
          this.trick.clear();
          this.trickDone = false;
        }
        if (e.case === "played") {
          this.trick.set(e.value.seat, { pass: false, play: e.value.play });
          say(`${this.nameOfSeat(e.value.seat)}: ${e.value.play?.notation ?? ""}`);
        } else {
          this.trick.set(e.value.seat, { pass: true });
          say(`${this.nameOfSeat(e.value.seat)}: ${t("passed")}`);
        }
        break;
      case "trickWon":
        this.trickDone = true;
        say(`${this.nameOfSeat(e.value.winner)} ${t("trickWon")}`);
        break;
      case "playerOut":
        say(`${this.nameOfSeat(e.value.seat)} ${t("out")} (${ordinal(e.value.place)})`);
        break;
      case "dealEnded":
        say(`${dealWords(e.value.dealNumber)}: ${outcomeWords(e.value.outcome)}`);
        break;
      case "escaped":
        say(`${this.nameOfSeat(e.value.seat)} ${t("escaped")}`);
        break;
      default:
        break;
    }
  }

  private myTurn(): boolean {
    const s = this.state;
    return !!s && s.phase === Phase.PLAYING && s.yourSeat !== undefined && s.turnSeat === s.yourSeat;
  }

  // --- actions -------------------------------------------------------------------------------

  protected seq(): bigint | undefined {
    return this.state?.seq;
  }

  private submit(cards: number[], pass: boolean, declared?: Interpretation): Promise<void> {
    return this.send(
      pass ? "pass" : "play",
      (seat, seq) =>
        api.submitPlay(
          {
            gameId: this.viewer.game,
            seat,
            cards,
            pass,
            declared: declared ? { type: declared.type, key: declared.key } : undefined,
            expectedSeq: seq,
            requestId: crypto.randomUUID(),
          },
          auth(this.viewer.token),
        ),
      () => {
        this.selected.clear();
        this.ambiguity = undefined;
        this.hintsSeq = -1n;
      },
      (r) => {
        const ambiguous = r.reason === "AMBIGUOUS_PLAY" && r.interpretations.length > 0;
        this.ambiguity = ambiguous ? { cards, options: r.interpretations } : undefined;
        if (ambiguous) this.message = r.words;
        return ambiguous;
      },
    );
  }

  private play = () => {
    if (this.selected.size === 0) return;
    void this.submit([...this.selected], false);
  };

  private pass = () => void this.submit([], true);

  private hint = async () => {
    const s = this.state;
    if (!s || this.spectator) return;
    const started = performance.now();
    if (this.hintsSeq !== s.seq) {
      try {
        const r = await api.getHints({ gameId: this.viewer.game }, auth(this.viewer.token));
        this.hints = r.plays;
        this.hintAt = -1;
        this.hintsSeq = s.seq;
      } catch (e) {
        this.say(rejection(e));
        this.render();
        return;
      }
    }
    if (this.hints.length === 0) {
      this.selected.clear();
      this.message = t("noPlay");
    } else {
      this.hintAt = (this.hintAt + 1) % this.hints.length;
      this.selected = new Set(this.hints[this.hintAt].cards);
      this.message = describe(this.hints[this.hintAt]);
    }
    this.render();
    measured(started, "hint");
  };

  /** The 托管 bot's suggested play for this seat (GetHints with `suggest`), selected. */
  private suggest = async () => {
    if (this.spectator) return;
    const started = performance.now();
    try {
      const r = await api.getHints({ gameId: this.viewer.game, suggest: true }, auth(this.viewer.token));
      const s = r.suggested;
      if (!s) {
        this.message = t("noSuggestion");
      } else if (s.pass || !s.play) {
        this.selected.clear();
        this.message = `${t("suggest")} (${botWords(s.bot)}): ${t("passed")}`;
      } else {
        this.selected = new Set(s.play.cards);
        this.message = `${t("suggest")} (${botWords(s.bot)}): ${describe(s.play)}`;
      }
    } catch (e) {
      this.say(rejection(e));
    }
    this.render();
    measured(started, "suggest");
  };

  private toggle(id: number): void {
    const started = performance.now();
    if (this.selected.has(id)) this.selected.delete(id);
    else this.selected.add(id);
    this.ambiguity = undefined;
    this.render();
    measured(started, "select");
  }

  protected onKey(ev: KeyboardEvent): void {
    if (typing(ev)) return;
    if (moveFocus(this.root, ev)) {
      return;
    } else if (ev.key === "p" || ev.key === "P") {
      this.play();
    } else if (ev.key === "x" || ev.key === "X") {
      this.pass();
    } else if (ev.key === "h" || ev.key === "H") {
      void this.hint();
    } else if (ev.key === "b" || ev.key === "B") {
      void this.suggest();
    } else if (ev.key === "Escape") {
      this.selected.clear();
      this.render();
    }
  }

  // --- rendering -----------------------------------------------------------------------------

  private seatPanel(s: SeatState, position: string): HTMLElement {
    const st = this.state!;
    const markers = h("span", { class: "markers" });
    if (st.turnSeat === s.seat && st.phase === Phase.PLAYING) {
      markers.append(h("span", { class: "marker turn" }, `▶ ${t("turn")}`));
      const clock = countdown(st.turnDeadline, "turn-clock", t("turnClock"), t("waitsPlay"));
      if (clock) markers.append(clock);
    }
    if (s.autoPlay) markers.append(h("span", { class: "marker auto" }, t("auto")));
    if (s.bot !== "") markers.append(h("span", { class: "marker bot", "data-bot": s.bot }, `${t("bot")} ${botWords(s.bot)}`));
    if (connected(s) === false && s.bot === "") {
      markers.append(h("span", { class: "marker offline" }, t("disconnected")));
      const reconnect = countdown(s.reconnectDeadline, "reconnect-clock", t("reconnectClock"), t("waitsReconnect"));
      if (reconnect) markers.append(reconnect);
    }
    const entry = this.trick.get(s.seat);
    const action = entry
      ? entry.pass
        ? h("span", { class: "action pass" }, t("passed"))
        : h("span", { class: "action" }, cardRow(entry.play?.cards ?? [], this.wild, true))
      : null;
    const me = st.yourSeat === s.seat;
    const rel = relation(s.seat, st.yourSeat, st.seats.length);
    const partner =
      st.partnerHand.length > 0 && st.yourSeat !== undefined && st.seats.length === 4 && s.seat === (st.yourSeat + 2) % 4
        ? h("div", { class: "partner-hand" }, h("small", {}, t("partnerHand")), cardRow(sortHand(st.partnerHand), this.wild, true))
        : null;
    return h(
      "div",
      {
        class: `seat ${position}${st.turnSeat === s.seat ? " to-act" : ""}${me ? " me" : ""}`,
        "data-relation": rel ?? "",
        "data-seat": String(s.seat),
        "data-player": String(s.player),
      },
      h("div", { class: "seat-name" }, s.name, me ? ` (${t("you")})` : "", relationMarker(rel)),
      h(
        "div",
        { class: "seat-info" },
        h("span", { class: "count", "data-count": String(s.cardCount) }, `${s.cardCount} ${t("cards")}`),
        s.place > 0 ? h("span", { class: "place" }, ordinal(s.place)) : null,
        h("span", { class: "team" }, teamWords(s.team)),
      ),
      markers,
      action,
      partner,
    );
  }

  private render(): void {
    const st = this.state;
    this.show(st && (() => this.view(st)));
  }

  private view(st: GetStateResponse): HTMLElement {
    const n = st.seats.length;
    const base = st.yourSeat ?? 0;
    const positions = n === 2 ? ["bottom", "top"] : ["bottom", "right", "top", "left"];
    const ring = h("div", { class: `ring seats-${n}` });
    for (const s of st.seats) ring.append(this.seatPanel(s, positions[(s.seat - base + n) % n]));

    const top = st.trick?.top;
    const center = h(
      "div",
      { class: "center" },
      h("div", { class: "deal-no" }, `${dealWords(st.dealNumber, st.deals)} · ${st.variant}`),
      top
        ? h(
            "div",
            { class: "trick-top", "data-seat": String(st.trick?.topSeat ?? "") },
            h("small", {}, `${t("top")} · ${t("by")} ${this.nameOfSeat(st.trick?.topSeat ?? 0)} · ${describe(top)}`),
            cardRow(top.cards, this.wild),
          )
        : h("div", { class: "trick-top empty" }, t("trick")),
      st.shownCard !== undefined
        ? h("div", { class: "shown" }, h("small", {}, t("shownCard")), cardRow([st.shownCard], this.wild, true))
        : null,
    );
    ring.append(center);

    const parts: (Node | null)[] = [];
    parts.push(this.header(st));
    parts.push(ring);
    if (!this.spectator) parts.push(this.handArea(st));
    parts.push(this.messageLine());
    if (this.ambiguity) parts.push(this.chooser(this.ambiguity));
    parts.push(h("ol", { class: "feed", id: "feed" }, ...this.feed.lines.map((f) => h("li", {}, f))));
    if (st.phase === Phase.FINISHED) {
      parts.push(h("p", { class: "over", id: "match-over" }, t("matchOver")), againButton(recallGame(this.viewer.game)));
    }
    parts.push(renderResults(st.scores, this.namesByPlayer()));
    const view = h(
      "div",
      {
        id: "table",
        class: this.spectator ? "spectator" : "player",
        "data-seq": String(st.seq),
        "data-phase": st.phase === Phase.FINISHED ? "finished" : "playing",
        "data-my-turn": String(this.myTurn()),
      },
      ...parts,
    );
    return view;
  }

  private header(st: GetStateResponse): HTMLElement {
    const created = recallGame(this.viewer.game);
    const links = shareLinks(this.viewer, created, "shuangkou");
    if (st.phase === Phase.FINISHED) {
      links.append(
        h("a", { id: "replay-link", href: absolute({ view: "replay", game: this.viewer.game, token: created?.spectatorToken ?? this.viewer.token, player: this.viewer.player }) }, t("replay")),
      );
    }
    return h("div", { class: "table-header" }, links, this.leaveControls(st.phase !== Phase.FINISHED));
  }

  private handArea(st: GetStateResponse): HTMLElement {
    const hand = h("div", { class: "hand", id: "hand", role: "group", "aria-label": "hand" });
    for (const id of sortHand(st.hand)) {
      const el = cardElement(id, this.wild, { button: true });
      if (this.selected.has(id)) el.classList.add("selected");
      el.setAttribute("aria-pressed", String(this.selected.has(id)));
      el.addEventListener("click", () => this.toggle(id));
      hand.append(el);
    }
    const mine = this.myTurn();
    const btn = button;
    const controls = h(
      "div",
      { class: "controls" },
      h("span", { class: "turn-note" }, mine ? t("yourTurn") : st.turnSeat !== undefined ? `${t("waiting")} ${named(this.nameOfSeat(st.turnSeat), relation(st.turnSeat, st.yourSeat, st.seats.length))}` : ""),
      btn("play", `${t("play")} (P)`, this.play, mine && this.selected.size > 0),
      btn("pass", `${t("pass")} (X)`, this.pass, mine),
      btn("hint", `${t("hint")} (H)`, () => void this.hint(), mine),
      btn("suggest", `${t("suggest")} (B)`, () => void this.suggest(), mine),
      btn("clear", t("clear"), () => {
        this.selected.clear();
        this.render();
      }, this.selected.size > 0),
    );
    return h("div", { class: "hand-area" }, hand, controls);
  }

  private chooser(a: { cards: number[]; options: Interpretation[] }): HTMLElement {
    const box = h("div", { class: "chooser", id: "interpretations", role: "dialog" }, h("p", {}, t("interpretation")));
    for (const o of a.options) {
      const b = h("button", { type: "button", "data-type": o.typeName, "data-key": o.key }, `${typeWords(o.typeName)} ${o.key}`);
      b.addEventListener("click", () => void this.submit(a.cards, false, o));
      box.append(b);
    }
    return box;
  }
}
