// The 升級 (Shengji, one deck) table, for a seat or a spectator: the level and trump, the seats
// (cards held, dealer, declaration, bots, whose turn), the trick and the last one, the points
// taken, the bottom (to the dealer while buried; turned over when nobody declared), the hand in
// trump order, and the seat's actions from GetHints: deal, declare a level card (亮主) while
// dealing, bury six cards as the dealer (扣底), play one of the legal cards. GetState is the
// truth; WatchGame says when to read it again.

import type { DealResult, GameEvent, GameState, GetHintsResponse } from "./gen/shengji/v1/shengji_pb";
import { Phase, Side } from "./gen/shengji/v1/shengji_pb";
import { auth, rejection, shengjiApi as api } from "./api";
import { cardElement } from "./cards";
import { button, countdown, h, measured, moveFocus, recallGame, shareLinks, typing } from "./dom";
import { dealWords, t, teamWords, type LabelKey } from "./i18n";
import { Feed, LiveTable, coalesced } from "./live";
import { againButton } from "./lobby";
import { named, relation, relationMarker } from "./seats";
import { cardPoints, sortByTrump, suitIndex } from "./trump";

const SUIT_SIGNS = ["♠", "♥", "♣", "♦"];
const PHASES: Record<number, LabelKey> = {
  [Phase.DEALING]: "dealing",
  [Phase.EXCHANGE]: "exchange",
  [Phase.PLAYING]: "playing",
  [Phase.FINISHED]: "finished",
};
const LEVEL_NAMES: Record<number, string> = { 11: "J", 12: "Q", 13: "K", 14: "A" };

function levelName(level: number): string {
  return LEVEL_NAMES[level] ?? String(level);
}

function trumpName(trump: number): string {
  const s = suitIndex(trump);
  return s === undefined ? t("noTrump") : SUIT_SIGNS[s];
}

function row(ids: readonly number[], small = true): HTMLElement {
  const r = h("span", { class: "cards" });
  for (const id of ids) r.append(cardElement(id, "none", { small }));
  return r;
}

export class ShengjiTable extends LiveTable<GameEvent> {
  private state?: GameState;
  private hints?: GetHintsResponse;
  private selected = new Set<number>();
  private readonly feed = new Feed();

  protected events(from: bigint, signal: AbortSignal): AsyncIterable<GameEvent> {
    return api.watchGame({ gameId: this.viewer.game, fromSeq: from }, auth(this.viewer.token, signal));
  }

  protected over(): boolean {
    return this.state?.phase === Phase.FINISHED;
  }

  private name(seat: number): string {
    return this.state?.players[seat] || `#${seat}`;
  }

  /** A seat's name with its relation to the viewer's seat. */
  private who(seat: number): string {
    return named(this.name(seat), relation(seat, this.state?.yourSeat, 4));
  }

  protected async leaveCost(): Promise<string[]> {
    return [t("leaveShengji")];
  }

  protected async leaveNow(): Promise<string[]> {
    const r = await api.leaveGame({ gameId: this.viewer.game }, auth(this.viewer.token));
    return r.finished ? [t("leftTable"), t("matchOver")] : [t("leftTable")];
  }

  protected redraw(): void {
    this.render();
  }

  /** What the seat to act is waited for, by phase. */
  private waitsFor(st: GameState): string {
    if (st.phase === Phase.DEALING) return st.stockCount > 6 ? t("waitsDeal") : t("waitsClose");
    if (st.phase === Phase.EXCHANGE) return t("waitsBury");
    return t("waitsPlay");
  }

  /** GetState, and the seat's hints at the same seq (coalesced: see `live.ts`). */
  protected readonly refresh = coalesced(async () => {
    try {
      const s = (await api.getState({ gameId: this.viewer.game }, auth(this.viewer.token))).state;
      if (s && (!this.state || s.seq >= this.state.seq)) {
        if (this.state && (s.phase !== this.state.phase || s.dealNumber !== this.state.dealNumber)) {
          this.selected.clear();
        }
        this.state = s;
      }
      if (!this.spectator && this.state) {
        this.hints = await api.getHints({ gameId: this.viewer.game }, auth(this.viewer.token));
      }
    } catch (e) {
      this.say(rejection(e));
    }
    this.render();
  });

  protected onEvent(ev: GameEvent): void {
    const e = ev.kind;
    const say = (s: string) => this.feed.say(s);
    switch (e.case) {
      case "dealStarted":
        say(`${dealWords(e.value.dealNumber)} · ${t("level")} ${levelName(e.value.level)}`);
        break;
      case "declared":
        say(`${this.who(e.value.seat)} ${t("declared")} ${trumpName(e.value.trump)}`);
        break;
      case "bottomTurned":
        say(`${t("turned")}: ${t("trump")} ${trumpName(e.value.trump)}`);
        break;
      case "buried":
        say(`${this.name(e.value.seat)} ${t("buried")}`);
        break;
      case "trickWon":
        say(`${this.who(e.value.winner)} ${t("trickWon")} (+${e.value.points})`);
        break;
      case "dealEnded":
        say(`${dealWords(e.value.dealNumber)}: ${t("opponentsPoints")} ${e.value.opponentsPoints}`);
        break;
      case "matchEnded":
        say(`${t("matchOver")} ${t("winner")}: ${teamWords(e.value.winner)}`);
        break;
      case "seatLeft":
        say(`${this.name(e.value.seat)} ${t("escaped")}`);
        break;
      default:
        break;
    }
  }

  // --- actions -------------------------------------------------------------------------------

  protected seq(): bigint | undefined {
    return this.state?.seq;
  }

  private act(what: string, action: Parameters<typeof api.submitAction>[0]["action"]): Promise<void> {
    return this.send(
      what,
      (seat, seq) =>
        api.submitAction(
          { gameId: this.viewer.game, seat, expectedSeq: seq, requestId: crypto.randomUUID(), action },
          auth(this.viewer.token),
        ),
      () => this.selected.clear(),
    );
  }

  private dealOne = () => {
    if (this.hints?.canDeal) void this.act("deal", { case: "deal", value: { count: 1 } });
  };

  /** The rest of the deal: the 48 cards less those dealt, and the step that closes the deal. */
  private dealAll = () => {
    const left = Math.max(1, (this.state?.stockCount ?? 6) - 5);
    if (this.hints?.canDeal) void this.act("deal", { case: "deal", value: { count: left } });
  };

  private declare = (card: number) => void this.act("declare", { case: "declare", value: { card } });

  private bury = () => {
    if (this.hints?.mustBury && this.selected.size === 6) {
      void this.act("bury", { case: "bury", value: { cards: [...this.selected] } });
    }
  };

  private play = () => {
    const [card] = [...this.selected];
    if (this.canPlay() && card !== undefined) void this.act("play", { case: "play", value: { card } });
  };

  private canPlay(): boolean {
    return !!this.hints?.yourTurn && this.hints.phase === Phase.PLAYING;
  }

  /** May the card be chosen now: a legal card to play, or any card (but points when the table
   * forbids burying them) for the dealer's bury. */
  private choosable(id: number): boolean {
    const hi = this.hints;
    if (!hi?.yourTurn) return false;
    if (hi.mustBury) return hi.buryPointsAllowed || cardPoints(id) === 0;
    return hi.phase === Phase.PLAYING && hi.legalCards.includes(id);
  }

  private toggle(id: number): void {
    const started = performance.now();
    if (this.hints?.mustBury) {
      if (this.selected.has(id)) this.selected.delete(id);
      else if (this.selected.size < 6) this.selected.add(id);
    } else {
      this.selected = this.selected.has(id) ? new Set() : new Set([id]);
    }
    this.render();
    measured(started, "select");
  }

  protected onKey(ev: KeyboardEvent): void {
    if (typing(ev) || moveFocus(this.root, ev)) return;
    const k = ev.key.toLowerCase();
    if (k === "d") this.dealOne();
    else if (k === "a") this.dealAll();
    else if (k === "p") this.play();
    else if (k === "b") this.bury();
    else if (k === "escape") {
      this.selected.clear();
      this.render();
    }
  }

  // --- rendering -----------------------------------------------------------------------------

  private seatPanel(st: GameState, seat: number, position: string): HTMLElement {
    const markers = h("span", { class: "markers" });
    if (st.turn === seat && st.phase !== Phase.FINISHED) {
      markers.append(h("span", { class: "marker turn" }, `▶ ${t("turn")}`));
    }
    if (st.toAct === seat && st.phase !== Phase.FINISHED) {
      const clock = countdown(st.turnDeadline, "turn-clock", t("turnClock"), this.waitsFor(st));
      if (clock) markers.append(clock);
    }
    if (st.dealer === seat) markers.append(h("span", { class: "marker dealer" }, t("dealer")));
    const bot = st.botSeats.includes(seat);
    if (bot) markers.append(h("span", { class: "marker bot" }, t("ruleBot")));
    const presence = st.presence.find((p) => p.seat === seat);
    if (presence && !presence.connected && !bot) {
      markers.append(h("span", { class: "marker offline" }, t("disconnected")));
      const reconnect = countdown(presence.reconnectDeadline, "reconnect-clock", t("reconnectClock"), t("waitsReconnect"));
      if (reconnect) markers.append(reconnect);
    }
    if (st.declaration?.seat === seat) {
      markers.append(h("span", { class: "marker declared" }, t("declared")), row([st.declaration.card]));
    }
    const played = st.trick.find((c) => c.seat === seat);
    const count = st.handCounts[seat] ?? 0;
    const rel = relation(seat, st.yourSeat, 4);
    return h(
      "div",
      {
        class: `seat ${position}${st.turn === seat ? " to-act" : ""}${st.yourSeat === seat ? " me" : ""}`,
        "data-seat": String(seat),
        "data-relation": rel ?? "",
      },
      h("div", { class: "seat-name" }, this.name(seat), st.yourSeat === seat ? ` (${t("you")})` : "", relationMarker(rel)),
      h(
        "div",
        { class: "seat-info" },
        h("span", { class: "count", "data-count": String(count) }, `${count} ${t("cards")}`),
        h("span", { class: "team" }, teamWords(seat % 2)),
      ),
      markers,
      played ? h("span", { class: "action", "data-played": String(played.card) }, row([played.card], false)) : null,
    );
  }

  private info(st: GameState): HTMLElement {
    const levels = st.levels;
    const item = (cls: string, label: string, value: string) =>
      h("span", { class: cls }, h("small", {}, label), " ", h("b", {}, value));
    return h(
      "div",
      {
        class: "sj-info",
        id: "sj-info",
        "data-level": String(st.level),
        "data-trump": String(st.trump),
        "data-dealer": String(st.dealer ?? ""),
      },
      item("deal-no", "", dealWords(st.dealNumber)),
      item("phase", "", t(PHASES[st.phase] ?? "loading")),
      item("level", t("level"), levelName(st.level)),
      item("trump", t("trump"), trumpName(st.trump)),
      item("dealer", t("dealer"), st.dealer === undefined ? "—" : this.who(st.dealer)),
      item("levels", t("levels"), `${teamWords(0)} ${levelName(levels?.team0 ?? 2)} · ${teamWords(1)} ${levelName(levels?.team1 ?? 2)}`),
      item("points", t("pointsTaken"), `${teamWords(0)} ${st.points[0] ?? 0} · ${teamWords(1)} ${st.points[1] ?? 0}`),
    );
  }

  private center(st: GameState): HTMLElement {
    const parts: (Node | null)[] = [];
    if (st.phase === Phase.DEALING) parts.push(h("div", { class: "stock" }, `${st.stockCount} ${t("stock")}`));
    parts.push(
      st.trick.length > 0
        ? h("div", { class: "trick", id: "trick" }, h("small", {}, t("trick")), row(st.trick.map((c) => c.card), false))
        : h("div", { class: "trick empty", id: "trick" }, t("trick")),
    );
    if (st.lastTrick.length > 0) {
      parts.push(h("div", { class: "last-trick" }, h("small", {}, t("lastTrick")), row(st.lastTrick.map((c) => c.card))));
    }
    if (st.turned.length > 0) {
      parts.push(h("div", { class: "turned", id: "turned" }, h("small", {}, t("turned")), row(st.turned)));
    }
    if (st.bottom.length > 0) {
      parts.push(h("div", { class: "bottom", id: "bottom" }, h("small", {}, t("bottom")), row(st.bottom)));
    }
    return h("div", { class: "center" }, ...parts);
  }

  private handArea(st: GameState): HTMLElement {
    const hi = this.hints;
    const trump = suitIndex(st.trump);
    const hand = h("div", { class: "hand", id: "hand", role: "group", "aria-label": "hand" });
    for (const id of sortByTrump(st.hand, st.level, trump)) {
      const el = cardElement(id, "none", { button: true }) as HTMLButtonElement;
      const on = this.selected.has(id);
      if (on) el.classList.add("selected");
      el.setAttribute("aria-pressed", String(on));
      el.disabled = !this.choosable(id);
      el.addEventListener("click", () => this.toggle(id));
      hand.append(el);
    }
    const controls = h("div", { class: "controls" });
    const note = hi?.yourTurn ? (hi.mustBury ? t("buryChoose") : t("yourTurn")) : st.turn !== undefined ? `${t("waiting")} ${this.who(st.turn)}` : "";
    controls.append(h("span", { class: "turn-note" }, note));
    if (st.phase === Phase.DEALING) {
      const closing = st.stockCount <= 6;
      controls.append(button("deal-one", `${closing ? t("closeDeal") : t("dealOne")} (D)`, this.dealOne, !!hi?.canDeal));
      if (!closing) controls.append(button("deal-all", `${t("dealAll")} (A)`, this.dealAll, !!hi?.canDeal));
      const declare = h("span", { class: "declare", id: "declare" });
      for (const card of hi?.declarable ?? []) {
        const b = button(`declare-${card}`, `${t("declare")} `, () => this.declare(card), true);
        b.dataset.card = String(card);
        b.append(row([card]));
        declare.append(b);
      }
      controls.append(declare);
    }
    if (hi?.mustBury) controls.append(button("bury", `${t("bury")} (B) ${this.selected.size}/6`, this.bury, this.selected.size === 6));
    if (st.phase === Phase.PLAYING) controls.append(button("play", `${t("play")} (P)`, this.play, this.canPlay() && this.selected.size === 1));
    return h("div", { class: "hand-area" }, hand, controls);
  }

  private render(): void {
    const st = this.state;
    this.show(st && (() => this.view(st)));
  }

  private view(st: GameState): HTMLElement {
    const base = st.yourSeat ?? 0;
    const positions = ["bottom", "right", "top", "left"];
    const ring = h("div", { class: "ring seats-4" });
    for (let seat = 0; seat < 4; seat++) ring.append(this.seatPanel(st, seat, positions[(seat - base + 4) % 4]));
    ring.append(this.center(st));
    const created = recallGame(this.viewer.game);
    const phase = PHASES[st.phase] ?? "loading";
    const view = h(
      "div",
      {
        id: "table",
        class: `shengji ${this.spectator ? "spectator" : "player"}`,
        "data-seq": String(st.seq),
        "data-phase": phase,
        "data-my-turn": String(!!this.hints?.yourTurn && this.hints.seq === st.seq),
        "data-results": String(st.results.length),
      },
      h("div", { class: "table-header" }, shareLinks(this.viewer, created, "shengji"), this.leaveControls(st.phase !== Phase.FINISHED)),
      this.info(st),
      ring,
      this.spectator ? null : this.handArea(st),
      this.messageLine(),
      h("ol", { class: "feed", id: "feed" }, ...this.feed.lines.map((f) => h("li", {}, f))),
      st.phase === Phase.FINISHED
        ? h("p", { class: "over", id: "match-over" }, `${t("matchOver")} ${st.winner === undefined ? "" : `${t("winner")}: ${teamWords(st.winner)}`}`)
        : null,
      st.phase === Phase.FINISHED ? againButton(created) : null,
      this.results(st.results),
    );
    return view;
  }

  private results(list: DealResult[]): HTMLElement {
    const box = h("section", { class: "results", id: "results" }, h("h3", {}, t("results")));
    for (const d of [...list].reverse()) {
      const side = d.upgradeSide === Side.DEALER ? t("dealerSide") : d.upgradeSide === Side.OPPONENTS ? t("opponentsSide") : "—";
      const after = d.levelsAfter;
      box.append(
        h(
          "section",
          {
            class: "deal-result",
            "data-deal": String(d.dealNumber),
            "data-opponents-points": String(d.opponentsPoints),
            "data-upgrade-side": String(d.upgradeSide),
            "data-upgrade-levels": String(d.upgradeLevels),
            "data-levels-after": `${after?.team0 ?? ""},${after?.team1 ?? ""}`,
          },
          h("h4", {}, `${dealWords(d.dealNumber)} · ${t("dealer")} ${this.who(d.dealer)} · ${t("level")} ${levelName(d.level)} · ${t("trump")} ${trumpName(d.trump)}`),
          h(
            "p",
            {},
            `${t("opponentsPoints")}: ${d.opponentsPoints} (${teamWords(0)} ${d.trickPoints[0] ?? 0} · ${teamWords(1)} ${d.trickPoints[1] ?? 0}` +
              (d.multiplier > 0 ? ` · ${t("kouDi")}${d.multiplier} +${d.bottomBonus}` : "") +
              `) · ${t("upgrade")}: ${side} +${d.upgradeLevels}`,
          ),
          h("p", {}, `${t("levels")}: ${teamWords(0)} ${levelName(after?.team0 ?? 2)} · ${teamWords(1)} ${levelName(after?.team1 ?? 2)}`),
          h("div", { class: "buried" }, h("small", {}, `${t("bottom")} (${d.buriedPoints})`), row(d.buried)),
        ),
      );
    }
    return box;
  }
}
