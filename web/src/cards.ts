// Cards as the API numbers them (proto/shuangkou/v1/shuangkou.proto): id 0..=107, deck = id / 54,
// r = id % 54; r < 52 is suited (suit = r / 13: spades, hearts, clubs, diamonds; rank = r % 13,
// 0 = "3" … 12 = "2"); r = 52 the small joker, r = 53 the big joker. Drawn as CSS faces.

const RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"];
const SUITS = ["♠", "♥", "♣", "♦"];

export type Wild = "none" | "big" | "all";

export interface CardFace {
  id: number;
  /** 0..12 for 3..2, 13 small joker, 14 big joker: the hand's sort order. */
  order: number;
  rank: string;
  suit: string;
  red: boolean;
  joker: "" | "small" | "big";
}

export function face(id: number): CardFace {
  const r = id % 54;
  if (r === 52) return { id, order: 13, rank: "JOKER", suit: "", red: false, joker: "small" };
  if (r === 53) return { id, order: 14, rank: "JOKER", suit: "", red: true, joker: "big" };
  const suit = Math.floor(r / 13);
  return {
    id,
    order: r % 13,
    rank: RANKS[r % 13],
    suit: SUITS[suit],
    red: suit === 1 || suit === 3,
    joker: "",
  };
}

/** By rank (3 … A, 2), jokers last (small, then big); suits and decks break ties. */
export function sortHand(ids: readonly number[]): number[] {
  return [...ids].sort((a, b) => {
    const fa = face(a);
    const fb = face(b);
    return fa.order - fb.order || (a % 54) - (b % 54) || a - b;
  });
}

export function isWild(id: number, wild: Wild): boolean {
  const f = face(id);
  return (wild === "all" && f.joker !== "") || (wild === "big" && f.joker === "big");
}

/**
 * One card's face. `data-card` carries the id only where the viewer may see the card (its own
 * hand, the partner's shown hand, plays on the table): a spectator's page holds no hidden card.
 */
export function cardElement(
  id: number,
  wild: Wild,
  opts: { button?: boolean; small?: boolean } = {},
): HTMLElement {
  const f = face(id);
  const el = document.createElement(opts.button ? "button" : "span");
  el.className = "card " + (f.red ? "red" : "black");
  if (opts.small) el.classList.add("small");
  el.dataset.card = String(id);
  if (f.joker) {
    el.classList.add("joker", f.joker === "big" ? "big-joker" : "small-joker");
    el.innerHTML =
      `<span class="corner">${f.joker === "big" ? "大" : "小"}</span>` +
      `<span class="pip">${f.joker === "big" ? "★" : "☆"}</span>` +
      `<span class="jtext">JOKER</span>`;
    el.setAttribute("aria-label", f.joker === "big" ? "big joker 大王" : "small joker 小王");
  } else {
    el.innerHTML =
      `<span class="corner">${f.rank}<br>${f.suit}</span><span class="pip">${f.suit}</span>`;
    el.setAttribute("aria-label", `${f.rank}${f.suit}`);
  }
  if (isWild(id, wild)) {
    el.classList.add("wild");
    const badge = document.createElement("span");
    badge.className = "wild-badge";
    badge.textContent = "財";
    badge.title = "wild 財神";
    el.appendChild(badge);
  }
  return el;
}

/** A row of faces (a play, a partner's hand), in hand order. */
export function cardRow(ids: readonly number[], wild: Wild, small = false): HTMLElement {
  const row = document.createElement("span");
  row.className = "cards";
  for (const id of sortHand(ids)) row.appendChild(cardElement(id, wild, { small }));
  return row;
}

/**
 * Which jokers a variant treats as wild (財神). The API does not list it, so the table follows
 * the variant's `wild_jokers` option where it has one and the shipped variants' fixed rule
 * otherwise; an unknown variant shows no wild marks.
 */
export function wildOf(variant: string, options: Record<string, string>): Wild {
  const chosen = options["wild_jokers"];
  if (chosen === "big" || chosen === "all" || chosen === "none") return chosen;
  const fixed: Record<string, Wild> = {
    classic: "none",
    jj: "big",
    baibian: "big",
    huopin: "big",
    qianbian: "all",
    erren: "all",
  };
  return fixed[variant] ?? "none";
}
