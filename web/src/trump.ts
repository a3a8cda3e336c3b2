// 升級's card order (SHENGJI.md A1) for showing a hand: the side suits (副牌) first, each from 2 up
// to A without the level, then the trumps (主牌) from the weakest up: the trump suit without the
// level, the three other level cards (副級牌, equal, in suit order), the trump suit's level card
// (主級牌), the small and the big joker. Before trump is known only the jokers and the level
// cards are trumps. Card ids as shengji.v1 gives them (0..=53, suit = id / 13, rank = id % 13 with
// 0 → 3 … 12 → 2; 52 and 53 the jokers).

/** The face number of a suited card: 2..=14 (11 = J … 14 = A). */
export function faceNumber(id: number): number {
  const r = id % 13;
  return r === 12 ? 2 : r + 3;
}

/** The suit index 0..=3 (spades, hearts, clubs, diamonds) of shengji.v1's Suit enum (1..=4). */
export function suitIndex(trump: number): number | undefined {
  return trump >= 1 && trump <= 4 ? trump - 1 : undefined;
}

/** True when the card is a trump under `level` and trump suit `trump` (an index, or none yet). */
export function isTrump(id: number, level: number, trump: number | undefined): boolean {
  return id >= 52 || faceNumber(id) === level || Math.floor(id / 13) === trump;
}

/** A sort key: larger is later in the hand (and, among trumps, stronger). */
function key(id: number, level: number, trump: number | undefined): number {
  if (id === 53) return 1003;
  if (id === 52) return 1002;
  const suit = Math.floor(id / 13);
  const n = faceNumber(id);
  if (n === level) return suit === trump ? 1001 : 900 + suit;
  if (suit === trump) return 800 + n;
  // Side suits in suit order, skipping the trump suit's place.
  return suit * 20 + n;
}

/** The hand in 升級 order under the deal's level and trump. */
export function sortByTrump(ids: readonly number[], level: number, trump: number | undefined): number[] {
  return [...ids].sort((a, b) => key(a, level, trump) - key(b, level, trump) || a - b);
}

/** Card points: 5 → 5, ten and K → 10. */
export function cardPoints(id: number): number {
  if (id >= 52) return 0;
  const n = faceNumber(id);
  return n === 5 ? 5 : n === 10 || n === 13 ? 10 : 0;
}
