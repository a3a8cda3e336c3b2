// The lobby: the game (Shuangkou or 升級); for Shuangkou the variants (ListVariants) with their
// option schema as form fields and the bots for the other seats; for 升級 which seats the server's
// rule bot plays; then CreateGame of the game's service.

import type { Variant, VariantOption } from "./gen/shuangkou/v1/shuangkou_pb";
import { api, rejection, shengjiApi } from "./api";
import { h, rememberGame, routeHref, type Again, type Created } from "./dom";
import { botWords, t } from "./i18n";

/** The bot policies and styles of the bot service (docs/BOTS.md). */
export const BOT_POLICIES = [
  "heuristic",
  "basic",
  "greedy",
  "search",
  "pingfan",
  "sasa",
  "chuantong",
  "zhuanmen",
  "laoshou",
  "douqi",
];

const HUMAN = "";

/** The bots the lobby offers by default, seat by seat: three different styles of seed 000. */
const DEFAULT_BOTS = ["pingfan", "sasa", "douqi"];

/** The match length: the variant's option, the lobby's one deal-count control. */
const DEALS_OPTION = "deals_per_match";

function optionField(o: VariantOption): HTMLElement {
  let input: HTMLInputElement | HTMLSelectElement;
  if (o.type === "choice" && o.choices.length > 0) {
    // A choice option: its allowed values (ListVariants' schema) as a list to pick from.
    const select = h("select", { name: o.name });
    for (const c of o.choices) select.append(h("option", { value: c }, c));
    select.value = o.defaultValue;
    input = select;
  } else if (o.type === "bool") {
    input = h("input", { type: "checkbox", name: o.name });
    input.checked = o.defaultValue === "true";
  } else {
    const numeric = o.type === "int" || o.type === "float";
    input = h("input", { type: numeric ? "number" : "text", name: o.name, value: o.defaultValue });
    if (numeric) {
      input.step = o.type === "int" ? "1" : "any";
      if (o.min !== "") input.min = o.min;
      if (o.max !== "") input.max = o.max;
    }
  }
  input.dataset.default = o.defaultValue;
  input.dataset.type = o.type;
  if (o.name === DEALS_OPTION) input.id = "deals";
  return h(
    "label",
    { class: "option", title: o.description },
    h("span", { class: "option-name" }, o.name === DEALS_OPTION ? `${t("deals")} (${o.name})` : o.name),
    input,
    h("small", {}, o.description),
  );
}

/** The options that differ from their defaults, as CreateGame takes them. */
function chosenOptions(form: HTMLElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const input of form.querySelectorAll<HTMLInputElement | HTMLSelectElement>(
    "fieldset.options input, fieldset.options select",
  )) {
    const value =
      input instanceof HTMLInputElement && input.type === "checkbox"
        ? String(input.checked)
        : input.value.trim();
    if (value !== input.dataset.default) out[input.name] = value;
  }
  return out;
}

export async function renderLobby(root: HTMLElement): Promise<void> {
  root.replaceChildren(h("p", { class: "loading" }, t("loading")));
  let variants: Variant[];
  try {
    variants = (await api.listVariants({})).variants;
  } catch (e) {
    root.replaceChildren(h("p", { class: "error", role: "alert" }, rejection(e).words));
    return;
  }
  const select = h("select", { id: "variant", name: "variant" });
  for (const v of variants) {
    select.append(h("option", { value: v.id }, `${v.name} (${v.id}, ${v.players} ${t("players")})`));
  }
  if (variants.some((v) => v.id === "classic")) select.value = "classic";
  const details = h("div", { id: "variant-details" });
  const name = h("input", { id: "name", name: "name", value: localStorage.getItem("name") ?? "" });
  name.placeholder = t("you");
  const delay = h("input", { id: "bot-delay", type: "number", min: "0", max: "10000", step: "100", value: "600" });
  const game = h("select", { id: "game", name: "game" });
  for (const f of ["shuangkou", "shengji"] as const) game.append(h("option", { value: f }, t(f)));
  const shengjiSeats = h("fieldset", { class: "shengji-bots", hidden: "" }, h("legend", {}, t("bots")));
  for (let seat = 1; seat < 4; seat++) {
    const s = h("select", { name: `sj-bot${seat}`, "data-seat": String(seat) });
    s.append(h("option", { value: "rule" }, t("ruleBot")), h("option", { value: HUMAN }, t("human")));
    shengjiSeats.append(h("label", {}, h("span", {}, `${t("seat")} ${seat}`), s));
  }
  const shuangkouOnly = h("div", { class: "shuangkou-only" });
  const error = h("p", { class: "error", role: "alert", id: "lobby-error" });
  const start = h("button", { id: "start", type: "submit", class: "primary" }, t("start"));
  const form = h(
    "form",
    { id: "lobby" },
    h("h2", {}, t("lobby")),
    h("label", {}, h("span", {}, t("game")), game),
    h("label", {}, h("span", {}, t("yourName")), name),
    shuangkouOnly,
    shengjiSeats,
    start,
    error,
  );
  shuangkouOnly.append(
    h("label", {}, h("span", {}, t("variant")), select),
    details,
    h("fieldset", { class: "bots" }),
    h("label", {}, h("span", {}, t("botDelay")), delay),
  );
  game.addEventListener("change", () => {
    shuangkouOnly.hidden = game.value === "shengji";
    shengjiSeats.hidden = game.value !== "shengji";
  });

  const show = () => {
    const v = variants.find((x) => x.id === select.value);
    if (!v) return;
    const opts = h("fieldset", { class: "options" }, h("legend", {}, t("options")));
    for (const o of v.options) opts.append(optionField(o));
    details.replaceChildren(h("p", { class: "description" }, v.description), opts);
    const bots = form.querySelector("fieldset.bots")!;
    bots.replaceChildren(h("legend", {}, t("bots")));
    for (let p = 1; p < v.players; p++) {
      const s = h("select", { name: `bot${p}`, "data-player": String(p) });
      for (const b of BOT_POLICIES) s.append(h("option", { value: b }, botWords(b)));
      s.append(h("option", { value: HUMAN }, t("human")));
      s.value = DEFAULT_BOTS[(p - 1) % DEFAULT_BOTS.length];
      bots.append(h("label", {}, h("span", {}, `${t("seat")} ${p}`), s));
    }
  };
  select.addEventListener("change", show);
  show();

  /** Creates the game on its service; returns the seat tokens and the names by seat. */
  const create = async (me: string) => {
    if (game.value === "shengji") {
      const players = [me];
      const botSeats: number[] = [];
      for (const s of shengjiSeats.querySelectorAll<HTMLSelectElement>("select")) {
        const seat = Number(s.dataset.seat);
        players[seat] = s.value === HUMAN ? `Player ${seat + 1}` : `${t("ruleBot")} #${seat}`;
        if (s.value !== HUMAN) botSeats.push(seat);
      }
      const bots = Object.fromEntries(botSeats.map((s) => [s, "rule"]));
      return create_({ family: "shengji", variant: "shengji", players, options: {}, bots, botDelayMs: 0 });
    }
    const v = variants.find((x) => x.id === select.value);
    if (!v) throw new Error("no variant");
    const players = [me];
    const bots: Record<number, string> = {};
    for (const s of form.querySelectorAll<HTMLSelectElement>("fieldset.bots select")) {
      const p = Number(s.dataset.player);
      // A bot seat's name is the server's: its style and index ("平凡型 #1"), never two alike.
      players[p] = s.value === HUMAN ? `Player ${p + 1}` : "";
      if (s.value !== HUMAN) bots[p] = s.value;
    }
    const options = chosenOptions(form);
    const botDelayMs = Math.max(0, Math.min(10_000, Number(delay.value) || 0));
    return create_({ family: "shuangkou", variant: v.id, players, options, bots, botDelayMs });
  };

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    start.disabled = true;
    error.textContent = "";
    const me = name.value.trim() || "Player 1";
    localStorage.setItem("name", name.value.trim());
    try {
      await create(me);
    } catch (e) {
      const r = rejection(e);
      error.replaceChildren(r.words, h("details", { class: "raw" }, h("summary", {}, t("details")), h("code", {}, r.message.startsWith(`${r.reason}:`) ? r.message : `${r.reason}: ${r.message}`)));
      start.disabled = false;
    }
  });
  root.replaceChildren(form);
}

/**
 * Creates a game as `again` says (the lobby's choice, or a finished match's seats once more),
 * remembers its links in this tab and opens seat 0's table.
 */
async function create_(again: Again): Promise<void> {
  let created: { gameId: string; seatTokens: string[]; spectatorToken: string };
  if (again.family === "shengji") {
    const botSeats = Object.keys(again.bots).map(Number);
    const c = await shengjiApi.createGame({ players: again.players, requestId: crypto.randomUUID(), botSeats });
    // A bot seat's token is the server's: no link to share for it.
    created = { ...c, seatTokens: c.seatTokens.map((tok, seat) => (botSeats.includes(seat) ? "" : tok)) };
  } else {
    created = await api.createGame({
      variant: again.variant,
      options: again.options,
      players: again.players,
      requestId: crypto.randomUUID(),
      bots: again.bots,
      botDelayMs: again.botDelayMs,
    });
  }
  const remembered: Created = {
    seatTokens: created.seatTokens,
    spectatorToken: created.spectatorToken,
    names: again.players,
    options: again.options,
    again,
  };
  rememberGame(created.gameId, remembered);
  location.hash = routeHref({ view: "play", game: created.gameId, token: created.seatTokens[0], player: 0, family: again.family });
}

/** "New match with the same seats" at the end of a match (the creator's tab only). */
export function againButton(created: Created | undefined): HTMLElement | null {
  const again = created?.again;
  if (!again) return null;
  const b = h("button", { type: "button", id: "new-match", class: "primary" }, t("newMatch"));
  const error = h("span", { class: "error", role: "alert" });
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      await create_(again);
    } catch (e) {
      error.textContent = rejection(e).words;
      b.disabled = false;
    }
  });
  return h("div", { class: "again" }, b, error);
}
