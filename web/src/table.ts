// The table, for a seat (its hand, play, pass, hint, interpretations) or a spectator: seats with
// names, card counts, places, turn and markers, the trick and who played it, the partner's hand
// under 雙明, the shown card, the results. GetState is the truth; WatchGame says when to read it
// again and who did what in the trick.

import type { GameEvent, GetStateResponse, Play, SeatState } from "./gen/shuangkou/v1/shuangkou_pb";
import { Phase } from "./gen/shuangkou/v1/shuangkou_pb";
import { api, auth, cancelled, rejection, type Interpretation } from "./api";
import { cardElement, cardRow, sortHand, wildOf, type Wild } from "./cards";
import { absolute, h, measured, recallGame } from "./dom";
import { ordinal, outcomeWords, t, typeWords } from "./i18n";
import { renderResults } from "./results";

export interface Viewer {
  game: string;
  token: string;
  /** The player index of the seat token; absent for a spectator. */
  player?: number;
}

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

export class Table {
  private state?: GetStateResponse;
  private wild: Wild = "none";
  private selected = new Set<number>();
  private hints: Play[] = [];
  private hintAt = -1;
  private hintsSeq = -1n;
  private trick = new Map<number, TrickEntry>();
  private trickDone = false;
  private feed: string[] = [];
  private message = "";
  private ambiguity?: { cards: number[]; options: Interpretation[] };
  private readonly abort = new AbortController();
  private loop?: Promise<void>;
  private dirty = false;
  private busy = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly viewer: Viewer,
  ) {}

  get spectator(): boolean {
    return this.viewer.player === undefined;
  }

  async start(): Promise<void> {
    this.root.replaceChildren(h("p", { class: "loading" }, t("loading")));
    this.wild = "none";
    await this.refresh();
    void this.watch();
    document.addEventListener("keydown", this.onKey);
  }

  stop(): void {
    this.abort.abort();
    document.removeEventListener("keydown", this.onKey);
  }

  private nameOfSeat(seat: number): string {
    return this.state?.seats.find((s) => s.seat === seat)?.name ?? `#${seat}`;
  }

  private namesByPlayer(): string[] {
    const names: string[] = [];
    for (const s of this.state?.seats ?? []) names[s.player] = s.name;
    return names;
  }

  /**
   * Reads GetState and renders; a call while a read is in flight marks it dirty and shares the
   * loop, so the returned promise resolves only once a state at least as new as the call has
   * been rendered (what the latency measurements wait for).
   */
  private refresh(): Promise<void> {
    if (this.loop) {
      this.dirty = true;
      return this.loop;
    }
    this.loop = (async () => {
      try {
        do {
          this.dirty = false;
          try {
            const s = await api.getState({ gameId: this.viewer.game }, auth(this.viewer.token));
            if (!this.state || s.seq >= this.state.seq) this.state = s;
            const created = recallGame(this.viewer.game);
            this.wild = wildOf(s.variant, created?.options ?? {});
          } catch (e) {
            this.message = rejection(e).words;
          }
          this.render();
        } while (this.dirty);
      } finally {
        this.loop = undefined;
      }
    })();
    return this.loop;
  }

  private async watch(): Promise<void> {
    let from = 0n;
    while (!this.abort.signal.aborted) {
      try {
        const stream = api.watchGame(
          { gameId: this.viewer.game, fromSeq: from },
          auth(this.viewer.token, this.abort.signal),
        );
        for await (const ev of stream) {
          if (ev.seq > from) from = ev.seq;
          this.onEvent(ev);
          void this.refresh();
        }
      } catch (e) {
        if (this.abort.signal.aborted || cancelled(e)) return;
      }
      if (this.state?.phase === Phase.FINISHED) return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  private onEvent(ev: GameEvent): void {
    const e = ev.event;
    const say = (s: string) => {
      this.feed.push(s);
      if (this.feed.length > 8) this.feed.shift();
    };
    switch (e.case) {
      case "dealStarted":
        this.trick.clear();
        this.trickDone = false;
        say(`${t("deal")} ${e.value.dealNumber}`);
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
        say(`${t("deal")} ${e.value.dealNumber}: ${outcomeWords(e.value.outcome)}`);
        break;
      case "escaped":
        say(`${this.nameOfSeat(e.value.seat)} ${t("escaped")} (${e.value.reason})`);
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

  private async submit(cards: number[], pass: boolean, declared?: Interpretation): Promise<void> {
    const s = this.state;
    if (!s || this.viewer.player === undefined || this.busy) return;
    const started = performance.now();
    this.busy = true;
    try {
      await api.submitPlay(
        {
          gameId: this.viewer.game,
          seat: this.viewer.player,
          cards,
          pass,
          declared: declared ? { type: declared.type, key: declared.key } : undefined,
          expectedSeq: s.seq,
          requestId: crypto.randomUUID(),
        },
        auth(this.viewer.token),
      );
      this.selected.clear();
      this.ambiguity = undefined;
      this.message = "";
      this.hintsSeq = -1n;
    } catch (e) {
      const r = rejection(e);
      if (r.reason === "AMBIGUOUS_PLAY" && r.interpretations.length > 0) {
        this.ambiguity = { cards, options: r.interpretations };
        this.message = r.words;
      } else {
        this.ambiguity = undefined;
        this.message = `${r.words} (${r.message})`;
      }
    } finally {
      this.busy = false;
    }
    await this.refresh();
    measured(started, pass ? "pass" : "play");
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
        this.message = rejection(e).words;
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
        this.message = `${t("suggest")} (${s.bot}): ${t("passed")}`;
      } else {
        this.selected = new Set(s.play.cards);
        this.message = `${t("suggest")} (${s.bot}): ${describe(s.play)}`;
      }
    } catch (e) {
      this.message = rejection(e).words;
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

  private onKey = (ev: KeyboardEvent) => {
    const target = ev.target as HTMLElement | null;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    if (ev.key === "ArrowLeft" || ev.key === "ArrowRight") {
      const cards = [...this.root.querySelectorAll<HTMLElement>(".hand .card")];
      if (cards.length === 0) return;
      const at = cards.indexOf(document.activeElement as HTMLElement);
      const next = ev.key === "ArrowLeft" ? Math.max(0, at - 1) : Math.min(cards.length - 1, at + 1);
      cards[at < 0 ? 0 : next].focus();
      ev.preventDefault();
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
  };

  // --- rendering -----------------------------------------------------------------------------

  private seatPanel(s: SeatState, position: string): HTMLElement {
    const st = this.state!;
    const markers = h("span", { class: "markers" });
    if (st.turnSeat === s.seat && st.phase === Phase.PLAYING) {
      markers.append(h("span", { class: "marker turn" }, `▶ ${t("turn")}`));
    }
    if (s.autoPlay) markers.append(h("span", { class: "marker auto" }, t("auto")));
    if (s.bot !== "") markers.append(h("span", { class: "marker bot" }, `${t("bot")} ${s.bot}`));
    if (connected(s) === false && s.bot === "") {
      markers.append(h("span", { class: "marker offline" }, t("disconnected")));
    }
    const entry = this.trick.get(s.seat);
    const action = entry
      ? entry.pass
        ? h("span", { class: "action pass" }, t("passed"))
        : h("span", { class: "action" }, cardRow(entry.play?.cards ?? [], this.wild, true))
      : null;
    const me = st.yourSeat === s.seat;
    const partner =
      st.partnerHand.length > 0 && st.yourSeat !== undefined && st.seats.length === 4 && s.seat === (st.yourSeat + 2) % 4
        ? h("div", { class: "partner-hand" }, h("small", {}, t("partnerHand")), cardRow(sortHand(st.partnerHand), this.wild, true))
        : null;
    return h(
      "div",
      {
        class: `seat ${position}${st.turnSeat === s.seat ? " to-act" : ""}${me ? " me" : ""}`,
        "data-seat": String(s.seat),
        "data-player": String(s.player),
      },
      h("div", { class: "seat-name" }, s.name, me ? ` (${t("you")})` : ""),
      h(
        "div",
        { class: "seat-info" },
        h("span", { class: "count", "data-count": String(s.cardCount) }, `${s.cardCount} ${t("cards")}`),
        s.place > 0 ? h("span", { class: "place" }, ordinal(s.place)) : null,
        h("span", { class: "team" }, `${t("team")} ${s.team + 1}`),
      ),
      markers,
      action,
      partner,
    );
  }

  private render(): void {
    const st = this.state;
    if (!st) {
      this.root.replaceChildren(h("p", { class: "error", role: "alert" }, this.message || t("loading")));
      return;
    }
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.card;
    const n = st.seats.length;
    const base = st.yourSeat ?? 0;
    const positions = n === 2 ? ["bottom", "top"] : ["bottom", "right", "top", "left"];
    const ring = h("div", { class: `ring seats-${n}` });
    for (const s of st.seats) ring.append(this.seatPanel(s, positions[(s.seat - base + n) % n]));

    const top = st.trick?.top;
    const center = h(
      "div",
      { class: "center" },
      h("div", { class: "deal-no" }, `${t("deal")} ${st.dealNumber} ${t("of")} ${st.deals} · ${st.variant}`),
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
    parts.push(h("p", { class: "message", id: "message", role: "status" }, this.message));
    if (this.ambiguity) parts.push(this.chooser(this.ambiguity));
    parts.push(h("ol", { class: "feed", id: "feed" }, ...this.feed.map((f) => h("li", {}, f))));
    if (st.phase === Phase.FINISHED) {
      parts.push(h("p", { class: "over", id: "match-over" }, t("matchOver")));
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
    this.root.replaceChildren(view);
    if (focused) this.root.querySelector<HTMLElement>(`.hand [data-card="${focused}"]`)?.focus();
  }

  private header(st: GetStateResponse): HTMLElement {
    const created = recallGame(this.viewer.game);
    const links = h("div", { class: "links" });
    if (this.spectator) links.append(h("span", { class: "badge" }, t("spectating")));
    if (created) {
      links.append(
        h("a", { id: "spectator-link", href: absolute({ view: "watch", game: this.viewer.game, token: created.spectatorToken }), target: "_blank" }, t("spectatorLink")),
      );
      created.seatTokens.forEach((tok, p) => {
        if (p !== this.viewer.player && tok !== "") {
          links.append(h("a", { href: absolute({ view: "play", game: this.viewer.game, token: tok, player: p }), target: "_blank" }, `${t("seat")} ${p}`));
        }
      });
    }
    if (st.phase === Phase.FINISHED) {
      links.append(
        h("a", { id: "replay-link", href: absolute({ view: "replay", game: this.viewer.game, token: created?.spectatorToken ?? this.viewer.token }) }, t("replay")),
      );
    }
    return h("div", { class: "table-header" }, links);
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
    const btn = (id: string, label: string, on: () => void, enabled: boolean) => {
      const b = h("button", { id, type: "button" }, label);
      b.disabled = !enabled;
      b.addEventListener("click", on);
      return b;
    };
    const controls = h(
      "div",
      { class: "controls" },
      h("span", { class: "turn-note" }, mine ? t("yourTurn") : st.turnSeat !== undefined ? `${t("waiting")} ${this.nameOfSeat(st.turnSeat)}` : ""),
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
