// Small DOM helpers and the page's routes (all in the URL fragment, so tokens never reach a
// server log).

import { t } from "./i18n";

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else el.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

/** Which game family a table plays: Shuangkou (shuangkou.v1) or 升級 (shengji.v1). */
export type Family = "shuangkou" | "shengji";

export type Route =
  | { view: "lobby" }
  | { view: "play"; game: string; token: string; player: number; family: Family }
  | { view: "watch"; game: string; token: string; family: Family }
  | { view: "replay"; game: string; token: string; player?: number };

export function currentRoute(): Route {
  const q = new URLSearchParams(location.hash.replace(/^#\/?/, "").replace(/^[a-z]+\?/, ""));
  const view = location.hash.replace(/^#\/?/, "").split("?")[0];
  const game = q.get("g") ?? "";
  const token = q.get("t") ?? "";
  const family: Family = q.get("k") === "shengji" ? "shengji" : "shuangkou";
  if (view === "play" && game && token) {
    return { view, game, token, player: Number(q.get("p") ?? "0"), family };
  }
  if (view === "watch" && game && token) return { view, game, token, family };
  if (view === "replay" && game) {
    const p = q.get("p");
    return { view, game, token, player: p === null ? undefined : Number(p) };
  }
  return { view: "lobby" };
}

export function routeHref(r: Route): string {
  const k = r.view !== "lobby" && r.view !== "replay" && r.family === "shengji" ? "&k=shengji" : "";
  switch (r.view) {
    case "lobby":
      return "#";
    case "play":
      return `#play?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}&p=${r.player}${k}`;
    case "watch":
      return `#watch?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}${k}`;
    case "replay":
      return `#replay?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}${r.player === undefined ? "" : `&p=${r.player}`}`;
  }
}

/** An absolute link to a route of this page (to copy and share). */
export function absolute(r: Route): string {
  return location.origin + location.pathname + routeHref(r);
}

/** What the creator of a game keeps in this tab: the tokens for the share links. */
export interface Created {
  seatTokens: string[];
  spectatorToken: string;
  names: string[];
  options: Record<string, string>;
  /** What a new match with the same seats needs (absent in tabs of older pages). */
  again?: Again;
}

/** A game's creation as the lobby sent it: the same seats, options and bots once more. */
export interface Again {
  family: Family;
  variant: string;
  players: string[];
  options: Record<string, string>;
  /** Shuangkou: player index → bot; 升級: the bot seats (value "rule"). */
  bots: Record<number, string>;
  botDelayMs: number;
}

export function rememberGame(game: string, c: Created): void {
  sessionStorage.setItem(`game:${game}`, JSON.stringify(c));
}

export function recallGame(game: string): Created | undefined {
  const s = sessionStorage.getItem(`game:${game}`);
  return s ? (JSON.parse(s) as Created) : undefined;
}

/** Interaction latency: from an input to the re-rendered page, kept for the browser test. */
export function measured(start: number, what: string): void {
  const ms = performance.now() - start;
  const w = window as unknown as { __latencies?: { what: string; ms: number }[] };
  (w.__latencies ??= []).push({ what, ms });
}

/** True when a key goes to a form field (the tables' shortcuts leave it alone). */
export function typing(ev: KeyboardEvent): boolean {
  const target = ev.target as HTMLElement | null;
  return !!target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName);
}

/** ← and → move the focus along the hand's cards; true when the key was one of them. */
export function moveFocus(root: HTMLElement, ev: KeyboardEvent): boolean {
  if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return false;
  const cards = [...root.querySelectorAll<HTMLElement>(".hand .card")];
  if (cards.length === 0) return true;
  const at = cards.indexOf(document.activeElement as HTMLElement);
  const next = ev.key === "ArrowLeft" ? Math.max(0, at - 1) : Math.min(cards.length - 1, at + 1);
  cards[at < 0 ? 0 : next].focus();
  ev.preventDefault();
  return true;
}

/** A control button, disabled unless `enabled`. */
export function button(id: string, label: string, on: () => void, enabled: boolean): HTMLButtonElement {
  const b = h("button", { id, type: "button" }, label);
  b.disabled = !enabled;
  b.addEventListener("click", on);
  return b;
}

/**
 * The links a table offers its creator's tab: the spectator's and the other people's seats (a
 * bot seat has no token). `viewer.player` is the seat this page plays, if any.
 */
export function shareLinks(
  viewer: { game: string; player?: number },
  created: Created | undefined,
  family: Family,
): HTMLElement {
  const links = h("div", { class: "links" });
  if (viewer.player === undefined) links.append(h("span", { class: "badge" }, t("spectating")));
  if (!created) return links;
  const watch = absolute({ view: "watch", game: viewer.game, token: created.spectatorToken, family });
  links.append(h("a", { id: "spectator-link", href: watch, target: "_blank" }, t("spectatorLink")));
  created.seatTokens.forEach((tok, p) => {
    if (p !== viewer.player && tok !== "") {
      const seat = absolute({ view: "play", game: viewer.game, token: tok, player: p, family });
      links.append(h("a", { href: seat, target: "_blank" }, `${t("seat")} ${p}`));
    }
  });
  return links;
}

/** Writes a countdown's seconds left (rounded up, never below 0) from its `data-deadline`. */
export function tick(el: HTMLElement): void {
  const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - Date.now()) / 1000));
  el.textContent = `${el.dataset.label ?? ""} ${left} s`.trim();
}

/**
 * A countdown to `deadline` (Unix ms from the server; 0: none) that the live table ticks every
 * second (`LiveTable.start`): the turn deadline of the seat to act, a disconnected seat's
 * reconnect window.
 */
export function countdown(deadline: bigint, cls: string, title: string, waitsFor: string): HTMLElement | null {
  if (deadline <= 0n) return null;
  // What the clock waits for is written on it ("to play 27 s"), not only in its tooltip.
  const el = h("span", { class: `marker countdown ${cls}`, title, "data-deadline": deadline.toString(), "data-label": waitsFor });
  tick(el);
  return el;
}
