// Small DOM helpers and the page's routes (all in the URL fragment, so tokens never reach a
// server log).

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

export type Route =
  | { view: "lobby" }
  | { view: "play"; game: string; token: string; player: number }
  | { view: "watch"; game: string; token: string }
  | { view: "replay"; game: string; token: string };

export function currentRoute(): Route {
  const q = new URLSearchParams(location.hash.replace(/^#\/?/, "").replace(/^[a-z]+\?/, ""));
  const view = location.hash.replace(/^#\/?/, "").split("?")[0];
  const game = q.get("g") ?? "";
  const token = q.get("t") ?? "";
  if (view === "play" && game && token) {
    return { view, game, token, player: Number(q.get("p") ?? "0") };
  }
  if (view === "watch" && game && token) return { view, game, token };
  if (view === "replay" && game) return { view, game, token };
  return { view: "lobby" };
}

export function routeHref(r: Route): string {
  switch (r.view) {
    case "lobby":
      return "#";
    case "play":
      return `#play?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}&p=${r.player}`;
    case "watch":
      return `#watch?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}`;
    case "replay":
      return `#replay?g=${encodeURIComponent(r.game)}&t=${encodeURIComponent(r.token)}`;
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
