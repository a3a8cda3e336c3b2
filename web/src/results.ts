// Each deal's result (outcome, places, every score line with its label and detail), the match
// totals, and a small chart of each player's running total over the deals.

import type { DealResult, Scores } from "./gen/shuangkou/v1/shuangkou_pb";
import { h } from "./dom";
import { dealWords, ordinal, outcomeWords, t } from "./i18n";

/** Points as the API gives them (doubles), without float noise. */
export function points(x: number): string {
  const r = Math.round(x * 100) / 100;
  return (r > 0 ? "+" : "") + String(r);
}

function dealPanel(d: DealResult, names: string[]): HTMLElement {
  const playerAt = (seat: number) => d.players[seat] ?? seat;
  const nameAt = (seat: number) => names[playerAt(seat)] ?? `P${playerAt(seat)}`;
  const lines = h("table", { class: "lines" });
  lines.append(h("tr", {}, h("th", {}, t("seat")), h("th", {}, t("lineLabel")), h("th", {}, t("score")), h("th", {}, "")));
  for (const l of d.lines) {
    lines.append(
      h(
        "tr",
        { "data-seat": String(l.seat), "data-label": l.label, "data-amount": String(l.amount) },
        h("td", {}, nameAt(l.seat)),
        h("td", { class: "label" }, l.label),
        h("td", { class: "amount" }, points(l.amount)),
        h("td", { class: "detail" }, l.detail),
      ),
    );
  }
  const scores = h("ul", { class: "deal-scores" });
  d.scores.forEach((s, seat) =>
    scores.append(
      h("li", { "data-player": String(playerAt(seat)), "data-score": String(s) }, `${nameAt(seat)}: ${points(s)}`),
    ),
  );
  const places = d.places.map((seat, i) => `${ordinal(i + 1)} ${nameAt(seat)}`).join(" · ");
  return h(
    "section",
    { class: "deal-result", "data-deal": String(d.dealNumber), "data-outcome": String(d.outcome) },
    h("h4", {}, `${dealWords(d.dealNumber)}: `, h("span", { class: "outcome" }, outcomeWords(d.outcome))),
    h("p", { class: "places" }, places),
    scores,
    h("details", { open: "" }, h("summary", {}, t("lines")), lines),
  );
}

const COLORS = ["#d33", "#36c", "#2a2", "#c80"];

/** Running totals per player, deal by deal, as an SVG polyline chart. */
function chart(deals: DealResult[], players: number, names: string[]): SVGSVGElement {
  const runs: number[][] = Array.from({ length: players }, () => [0]);
  for (const d of deals) {
    for (let p = 0; p < players; p++) {
      const seat = d.players.indexOf(p);
      const last = runs[p][runs[p].length - 1];
      runs[p].push(last + (seat >= 0 ? (d.scores[seat] ?? 0) : 0));
    }
  }
  const all = runs.flat();
  const lo = Math.min(0, ...all);
  const hi = Math.max(1, ...all);
  const W = 240;
  const H = 100;
  const x = (i: number) => 10 + (i * (W - 20)) / Math.max(1, deals.length);
  const y = (v: number) => H - 10 - ((v - lo) * (H - 20)) / (hi - lo || 1);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", t("chart"));
  const axis = document.createElementNS(ns, "line");
  axis.setAttribute("x1", "10");
  axis.setAttribute("x2", String(W - 10));
  axis.setAttribute("y1", String(y(0)));
  axis.setAttribute("y2", String(y(0)));
  axis.setAttribute("stroke", "#999");
  svg.append(axis);
  runs.forEach((run, p) => {
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", run.map((v, i) => `${x(i)},${y(v)}`).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", COLORS[p % COLORS.length]);
    line.setAttribute("stroke-width", "2");
    const title = document.createElementNS(ns, "title");
    title.textContent = `${names[p] ?? `P${p}`}: ${run.map(points).join(" → ")}`;
    line.append(title);
    svg.append(line);
  });
  return svg;
}

export function renderResults(scores: Scores | undefined, names: string[]): HTMLElement {
  const box = h("section", { id: "results", class: "results" });
  if (!scores || scores.deals.length === 0) return box;
  box.append(h("h3", {}, t("results")));
  for (const d of [...scores.deals].reverse()) box.append(dealPanel(d, names));
  const totals = h("ul", { class: "totals" });
  scores.total.forEach((s, p) =>
    totals.append(
      h(
        "li",
        { "data-player": String(p), "data-total": String(s) },
        h("span", { class: "swatch", style: `background:${COLORS[p % COLORS.length]}` }),
        `${names[p] ?? `P${p}`}: ${points(s)}`,
      ),
    ),
  );
  box.append(
    h("h4", {}, t("totals")),
    totals,
    h("figure", {}, chart(scores.deals, scores.total.length, names), h("figcaption", {}, t("chart"))),
  );
  return box;
}
