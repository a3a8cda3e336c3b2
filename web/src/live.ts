// What both tables (Shuangkou and 升級) do to stay live: follow a game's WatchGame stream from the
// last seq seen (reconnecting after a drop until the match is over), and read GetState again
// without piling reads up (a call while a read is in flight shares it and marks it dirty).

import { cancelled, rejection, type Rejection } from "./api";
import { h, measured, tick } from "./dom";
import { t } from "./i18n";

/**
 * Follows `open(from)` until `signal` aborts or the match is over; every event goes to `onEvent`
 * (which usually asks for a fresh state). A dropped stream is reopened after a second from the
 * last seq seen.
 */
export async function follow<E extends { seq: bigint }>(
  open: (from: bigint, signal: AbortSignal) => AsyncIterable<E>,
  onEvent: (ev: E) => void,
  over: () => boolean,
  signal: AbortSignal,
): Promise<void> {
  let from = 0n;
  while (!signal.aborted) {
    try {
      for await (const ev of open(from, signal)) {
        if (ev.seq > from) from = ev.seq;
        onEvent(ev);
      }
    } catch (e) {
      if (signal.aborted || cancelled(e)) return;
    }
    if (over()) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Wraps a read-and-render step: the returned function runs it, and a call while it runs makes it
 * run once more, so the promise resolves only once a read at least as new as the call has been
 * rendered (what the latency measurements wait for).
 */
export function coalesced(step: () => Promise<void>): () => Promise<void> {
  let loop: Promise<void> | undefined;
  let dirty = false;
  return () => {
    if (loop) {
      dirty = true;
      return loop;
    }
    loop = (async () => {
      try {
        do {
          dirty = false;
          await step();
        } while (dirty);
      } finally {
        loop = undefined;
      }
    })();
    return loop;
  };
}

/** One record of the table's event feed: the last eight lines. */
export class Feed {
  readonly lines: string[] = [];
  say(s: string): void {
    this.lines.push(s);
    if (this.lines.length > 8) this.lines.shift();
  }
}

/** Who looks at a table: a game, a token, and the seat it plays (none for a spectator). */
export interface Viewer {
  game: string;
  token: string;
  /** The seat (Shuangkou: the player index) of the seat token; absent for a spectator. */
  player?: number;
}

/**
 * A table page's life: it shows "loading", reads the state, follows the watch stream and
 * listens to the keyboard until `stop`.
 */
export abstract class LiveTable<E extends { seq: bigint }> {
  protected readonly abort = new AbortController();
  /** The line under the table: the last rejection in words, or a hint. */
  protected message = "";
  /** The server's own text of the last rejection, shown only in the message's details toggle. */
  protected details = "";
  /** The Leave button's dialog: asking (with the cost) or done (with the result). */
  protected leaving?: { step: "ask" | "done"; lines: string[] };
  private busy = false;
  private readonly keys = (ev: KeyboardEvent) => this.onKey(ev);
  private ticker?: ReturnType<typeof setInterval>;

  constructor(
    protected readonly root: HTMLElement,
    protected readonly viewer: Viewer,
  ) {}

  get spectator(): boolean {
    return this.viewer.player === undefined;
  }

  /** Reads the state and renders it. */
  protected abstract readonly refresh: () => Promise<void>;
  /** The seq of the state shown, if any. */
  protected abstract seq(): bigint | undefined;
  /** The game's WatchGame stream from `from` on. */
  protected abstract events(from: bigint, signal: AbortSignal): AsyncIterable<E>;
  /** What an event changes besides the state (the trick shown, the feed). */
  protected abstract onEvent(ev: E): void;
  /** True once the match is over (the stream is then not reopened). */
  protected abstract over(): boolean;
  protected abstract onKey(ev: KeyboardEvent): void;

  private watch(): Promise<void> {
    const next = (ev: E) => {
      this.onEvent(ev);
      void this.refresh();
    };
    return follow((from, signal) => this.events(from, signal), next, () => this.over(), this.abort.signal);
  }

  /**
   * Sends one action of the viewer's seat at the seq shown (one at a time), then reads the state
   * again and records the latency as `what`. On success `done` runs; a rejection is said in
   * words unless `rejected` takes it (returns true).
   */
  protected async send(
    what: string,
    call: (seat: number, seq: bigint) => Promise<unknown>,
    done: () => void,
    rejected?: (r: Rejection) => boolean,
  ): Promise<void> {
    const seq = this.seq();
    if (seq === undefined || this.viewer.player === undefined || this.busy) return;
    const started = performance.now();
    this.busy = true;
    try {
      await call(this.viewer.player, seq);
      done();
      this.message = "";
      this.details = "";
    } catch (e) {
      const r = rejection(e);
      if (!rejected?.(r)) this.say(r);
    } finally {
      this.busy = false;
    }
    await this.refresh();
    measured(started, what);
  }

  /** A rejection: its words on the message line, the server's text behind "Details". */
  protected say(r: Rejection): void {
    this.message = r.words;
    this.details = r.message.startsWith(`${r.reason}:`) ? r.message : `${r.reason}: ${r.message}`;
  }

  /** The message line, with the last rejection's details in a toggle (closed). */
  protected messageLine(): HTMLElement {
    return h(
      "div",
      { class: "message-line" },
      h("p", { class: "message", id: "message", role: "status" }, this.message),
      this.details && this.message
        ? h("details", { class: "raw", id: "message-details" }, h("summary", {}, t("details")), h("code", {}, this.details))
        : null,
    );
  }

  /** What leaving costs now, in lines of words (empty: nothing). */
  protected abstract leaveCost(): Promise<string[]>;
  /** Leaves; the result in lines of words. */
  protected abstract leaveNow(): Promise<string[]>;
  /** Shows the page again (after the leave dialog changed). */
  protected abstract redraw(): void;

  /** The Leave button (a live table, a seat of one's own) and its dialog. */
  protected leaveControls(live: boolean): HTMLElement | null {
    if (this.spectator) return null;
    const box = h("div", { class: "leave", id: "leave-box" });
    if (live && !this.leaving) {
      const b = h("button", { type: "button", id: "leave", class: "leave-button" }, t("leave"));
      b.addEventListener("click", () => void this.askLeave());
      box.append(b);
    }
    const l = this.leaving;
    if (l?.step === "ask") {
      const go = h("button", { type: "button", id: "leave-confirm", class: "danger" }, t("leaveConfirm"));
      go.addEventListener("click", () => void this.confirmLeave());
      const stay = h("button", { type: "button", id: "leave-cancel" }, t("leaveStay"));
      stay.addEventListener("click", () => {
        this.leaving = undefined;
        this.redraw();
      });
      box.append(
        h("div", { class: "dialog", id: "leave-dialog", role: "dialog" }, h("p", {}, h("b", {}, t("leaveAsk"))), ...l.lines.map((x) => h("p", { class: "cost" }, x)), h("div", { class: "controls" }, go, stay)),
      );
    } else if (l?.step === "done") {
      box.append(h("div", { class: "dialog done", id: "leave-result", role: "status" }, ...l.lines.map((x) => h("p", {}, x))));
    }
    return box;
  }

  private async askLeave(): Promise<void> {
    const started = performance.now();
    try {
      this.leaving = { step: "ask", lines: await this.leaveCost() };
    } catch (e) {
      this.say(rejection(e));
    }
    this.redraw();
    measured(started, "leave-ask");
  }

  private async confirmLeave(): Promise<void> {
    try {
      this.leaving = { step: "done", lines: await this.leaveNow() };
    } catch (e) {
      this.leaving = undefined;
      this.say(rejection(e));
    }
    await this.refresh();
  }

  /**
   * Puts the table `build` makes on the page (before any state: the loading line or the error),
   * keeping the focus on the same card of the hand.
   */
  protected show(build: (() => HTMLElement) | undefined): void {
    if (!build) {
      this.root.replaceChildren(h("p", { class: "error", role: "alert" }, this.message || t("loading")));
      return;
    }
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.card;
    this.root.replaceChildren(build());
    if (focused) this.root.querySelector<HTMLElement>(`.hand [data-card="${focused}"]`)?.focus();
  }

  async start(): Promise<void> {
    this.root.replaceChildren(h("p", { class: "loading" }, t("loading")));
    await this.refresh();
    void this.watch();
    document.addEventListener("keydown", this.keys);
    // Countdowns (`dom.countdown`) tick in place: no re-render, so focus and selection stay.
    this.ticker = setInterval(() => this.root.querySelectorAll<HTMLElement>("[data-deadline]").forEach(tick), 1000);
  }

  stop(): void {
    this.abort.abort();
    clearInterval(this.ticker);
    document.removeEventListener("keydown", this.keys);
  }
}
