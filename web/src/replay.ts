// A finished game's replay, stepped action by action: the log of GetReplay (who did what, with
// which cards), and — with the spectator token of the link — the events of each action from
// WatchGame (tricks won, players out, deal results) and the seats' names and card counts.

import type { DealResult, GameEvent, GetReplayResponse, Play } from "./gen/shuangkou/v1/shuangkou_pb";
import { Phase } from "./gen/shuangkou/v1/shuangkou_pb";
import { api, auth, rejection } from "./api";
import { cardRow, wildOf, type Wild } from "./cards";
import { h, measured } from "./dom";
import { dealWords, kindWords, ordinal, outcomeWords, t, typeWords } from "./i18n";
import { points } from "./results";
import { named, relation, relationMarker } from "./seats";

/** The stepping buttons' icons as inline SVG (symbol glyphs render as boxes without a font). */
const ICONS: Record<string, string> = {
  first: "M3 3h2v10H3zM13 3v10L6 8z",
  prev: "M12 3v10L5 8z",
  next: "M4 3v10l7-5z",
  last: "M11 3h2v10h-2zM3 3v10l7-5z",
};

function icon(name: string): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", ICONS[name]);
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

interface Step {
  seat?: number;
  play?: Play;
  pass: boolean;
  events: GameEvent[];
}

export class Replay {
  private replay?: GetReplayResponse;
  private events: GameEvent[] = [];
  private names: string[] = [];
  private wild: Wild = "none";
  private at = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly game: string,
    private readonly token: string,
    /** The player whose link opened the replay (relations are shown from its seat). */
    private readonly player?: number,
  ) {}

  async start(): Promise<void> {
    this.root.replaceChildren(h("p", { class: "loading" }, t("loading")));
    try {
      this.replay = await this.loadReplay();
      this.wild = wildOf(this.replay.variant, this.replay.options);
      if (this.token) await this.loadEvents();
    } catch (e) {
      this.root.replaceChildren(h("p", { class: "error", role: "alert" }, rejection(e).words));
      return;
    }
    document.addEventListener("keydown", this.onKey);
    this.render();
  }

  /** Every page of GetReplay (the first page's header and `dealt`, every page's actions). */
  private async loadReplay(): Promise<GetReplayResponse> {
    const first = await api.getReplay({ gameId: this.game }, { timeoutMs: 20_000 });
    let token = first.nextPageToken;
    for (let pages = 0; token !== "" && pages < 10_000; pages++) {
      const next = await api.getReplay({ gameId: this.game, pageToken: token }, { timeoutMs: 20_000 });
      first.actions.push(...next.actions);
      token = next.nextPageToken;
    }
    return first;
  }

  /**
   * Every seat's hand after action `at`: the hands its deal started with (GetReplay's `dealt`,
   * re-executed by the server from the revealed seed and the log) less the cards each seat
   * played since. With the deal's seat map (player at each seat).
   */
  private handsAt(at: number): { hands: number[][]; players: number[] } | undefined {
    const r = this.replay!;
    const deal = [...r.dealt].reverse().find((d) => Number(d.fromSeq) <= at);
    if (!deal) return undefined;
    const hands = deal.hands.map((h) => new Set(h.cards));
    for (const a of r.actions) {
      const seq = Number(a.seq);
      if (seq <= Number(deal.fromSeq) || seq > at) continue;
      const seat = deal.players.indexOf(a.player);
      for (const c of a.cards) hands[seat]?.delete(c);
    }
    return { hands: hands.map((h) => [...h].sort((x, y) => x - y)), players: deal.players };
  }

  stop(): void {
    document.removeEventListener("keydown", this.onKey);
  }

  /** Every event up to the last action, then the stream is closed. */
  private async loadEvents(): Promise<void> {
    const state = await api.getState({ gameId: this.game }, { ...auth(this.token), timeoutMs: 20_000 });
    for (const s of state.seats) this.names[s.player] = s.name;
    if (state.phase !== Phase.FINISHED) return;
    const last = this.replay?.actions.at(-1)?.seq ?? 0n;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 10_000);
    try {
      for await (const ev of api.watchGame({ gameId: this.game, fromSeq: 0n }, auth(this.token, abort.signal))) {
        this.events.push(ev);
        if (ev.seq >= last && (ev.event.case === "matchEnded" || ev.seq > last)) break;
      }
    } catch {
      // A closed or timed-out stream leaves the events read so far; the log still steps.
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
  }

  private get steps(): number {
    return this.replay?.actions.length ?? 0;
  }

  private go(k: number): void {
    const started = performance.now();
    this.at = Math.max(0, Math.min(this.steps, k));
    const scrubbing = document.activeElement?.id === "replay-scrubber";
    this.render();
    if (scrubbing) document.getElementById("replay-scrubber")?.focus();
    measured(started, "replay-step");
  }

  private onKey = (ev: KeyboardEvent) => {
    if (ev.key === "ArrowRight") this.go(this.at + 1);
    else if (ev.key === "ArrowLeft") this.go(this.at - 1);
    else if (ev.key === "Home") this.go(0);
    else if (ev.key === "End") this.go(this.steps);
  };

  /** The seat the viewer's player had in the deal shown (seat map of its DealStarted). */
  private seatPlayers: number[] = [];

  private playerName(p: number): string {
    const name = this.names[p] ?? `P${p}`;
    const n = this.seatPlayers.length;
    if (n === 0 || this.player === undefined) return name;
    const mine = this.seatPlayers.indexOf(this.player);
    return named(name, relation(this.seatPlayers.indexOf(p), mine < 0 ? undefined : mine, n));
  }

  private render(): void {
    const r = this.replay!;
    const upto = BigInt(this.at);
    const seen = this.events.filter((e) => e.seq <= upto);
    // The table after action `at`: the current trick's actions, card counts, the deal results.
    let seatPlayers: number[] = [];
    let trick = new Map<number, Step>();
    let trickDone = false;
    const counts = new Map<number, number>();
    const results: DealResult[] = [];
    const places = new Map<number, number>();
    for (const ev of seen) {
      const e = ev.event;
      if (e.case === "dealStarted") {
        seatPlayers = e.value.players;
        this.seatPlayers = seatPlayers;
        trick = new Map();
        counts.clear();
        places.clear();
      } else if (e.case === "played" || e.case === "passed") {
        if (trickDone) {
          trick = new Map();
          trickDone = false;
        }
        if (e.case === "played") {
          trick.set(e.value.seat, { seat: e.value.seat, play: e.value.play, pass: false, events: [] });
          counts.set(e.value.seat, e.value.cardsLeft);
        } else {
          trick.set(e.value.seat, { seat: e.value.seat, pass: true, events: [] });
        }
      } else if (e.case === "trickWon") {
        trickDone = true;
      } else if (e.case === "playerOut") {
        places.set(e.value.seat, e.value.place);
      } else if (e.case === "dealEnded") {
        results.push(e.value);
      }
    }
    const action = this.at > 0 ? r.actions[this.at - 1] : undefined;
    const current = action
      ? h(
          "div",
          { class: "replay-action", "data-seq": String(action.seq), "data-kind": action.kind },
          h("strong", {}, `${t("step")} ${this.at}: ${this.playerName(action.player)} — ${kindWords(action.kind)}`),
          action.cards.length ? cardRow(action.cards, this.wild) : null,
        )
      : h("div", { class: "replay-action" }, t("first"));
    const seats = h("div", { class: "replay-seats" });
    const held = this.handsAt(this.at);
    if (held) {
      seatPlayers = held.players;
      this.seatPlayers = seatPlayers;
    }
    const mine = this.player === undefined ? -1 : seatPlayers.indexOf(this.player);
    seatPlayers.forEach((p, seat) => {
      const hand = held?.hands[seat] ?? [];
      const entry = trick.get(seat);
      seats.append(
        h(
          "div",
          { class: "seat", "data-seat": String(seat) },
          h("div", { class: "seat-name" }, this.names[p] ?? `P${p}`, relationMarker(relation(seat, mine < 0 ? undefined : mine, seatPlayers.length))),
          h("div", { class: "seat-info" }, counts.has(seat) ? `${counts.get(seat)} ${t("cards")}` : "", places.has(seat) ? ` ${ordinal(places.get(seat)!)}` : ""),
          h(
            "div",
            { class: "replay-hand", "data-seat": String(seat), "data-player": String(p), "data-cards": hand.join(",") },
            h("small", {}, `${t("hands")} · ${hand.length} ${t("cards")}`),
            cardRow(hand, this.wild, true),
          ),
          entry ? (entry.pass ? h("span", { class: "action pass" }, t("passed")) : h("span", { class: "action" }, cardRow(entry.play?.cards ?? [], this.wild, true), ` ${typeWords(entry.play?.typeName ?? "")}`)) : null,
        ),
      );
    });
    const btn = (id: string, label: string, to: number, enabled: boolean) => {
      const b = h("button", { id, type: "button", title: label, "aria-label": label });
      b.append(icon(id.replace("replay-", "")), h("span", { class: "label" }, label));
      b.disabled = !enabled;
      b.addEventListener("click", () => this.go(to));
      return b;
    };
    const nav = h(
      "div",
      { class: "controls" },
      btn("replay-first", t("first"), 0, this.at > 0),
      btn("replay-prev", t("prev"), this.at - 1, this.at > 0),
      h("span", { id: "replay-pos" }, `${this.at} / ${this.steps}`),
      btn("replay-next", t("next"), this.at + 1, this.at < this.steps),
      btn("replay-last", t("last"), this.steps, this.at < this.steps),
    );
    // The scrubber: any step at once.
    const scrub = h("input", { id: "replay-scrubber", type: "range", min: "0", max: String(this.steps), step: "1", value: String(this.at), "aria-label": t("scrubber") });
    scrub.addEventListener("input", () => this.go(Number(scrub.value)));
    nav.append(h("label", { class: "scrubber" }, h("span", {}, t("scrubber")), scrub));
    const res = h("div", { class: "results" });
    for (const d of results) {
      res.append(
        h(
          "p",
          { class: "deal-result", "data-deal": String(d.dealNumber) },
          `${dealWords(d.dealNumber)}: ${outcomeWords(d.outcome)} — `,
          d.scores.map((s, seat) => `${this.playerName(d.players[seat] ?? seat)} ${points(s)}`).join(", "),
        ),
      );
    }
    if (this.at === this.steps && r.finalScores.length) {
      res.append(
        h("p", { class: "final", id: "replay-final" }, `${t("totals")}: `, r.finalScores.map((s, p) => `${this.playerName(p)} ${points(s)}`).join(", ")),
      );
    }
    this.root.replaceChildren(
      h(
        "div",
        { id: "replay", "data-step": String(this.at), "data-steps": String(this.steps) },
        h("h2", {}, `${t("replay")} · ${r.variant}`),
        h("p", { class: "seed" }, h("small", {}, `${t("seed")} ${r.seed.slice(0, 16)}… · ${t("engine")} ${r.engineVersion}`)),
        nav,
        current,
        seats,
        res,
      ),
    );
  }
}
