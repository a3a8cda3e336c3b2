// Who sits where, seen from the viewer's seat: the partner (對家, across), the right opponent
// (下家, who plays after the viewer) and the left one (上家, who plays before); in a two-player
// variant the other seat is the opponent. The table draws the seats in that order (the viewer
// at the bottom, the next seat on the right), and every list of names (results, replay, chart)
// carries the same words, so two seats never read alike at any width.

import { h } from "./dom";
import { t } from "./i18n";

export type Relation = "you" | "partner" | "right" | "left" | "opponent";

/** The relation of `seat` to `mine` at a table of `n` seats (none without a seat of one's own). */
export function relation(seat: number, mine: number | undefined, n: number): Relation | undefined {
  if (mine === undefined) return undefined;
  const off = (seat - mine + n) % n;
  if (off === 0) return "you";
  if (n === 2) return "opponent";
  return off === 1 ? "right" : off === 2 ? "partner" : off === 3 ? "left" : "opponent";
}

export function relationWords(r: Relation): string {
  switch (r) {
    case "you":
      return t("you");
    case "partner":
      return t("partner");
    case "right":
      return t("rightOpp");
    case "left":
      return t("leftOpp");
    case "opponent":
      return t("opponent");
  }
}

/** A name with its relation in words: "平凡型 #1 (right opponent)". */
export function named(name: string, r: Relation | undefined): string {
  return r ? `${name} (${relationWords(r)})` : name;
}

/** The relation as a marker on a seat panel (`data-relation` for the tests). */
export function relationMarker(r: Relation | undefined): HTMLElement | null {
  if (!r || r === "you") return null;
  return h("span", { class: `marker relation rel-${r}`, "data-relation": r }, relationWords(r));
}
