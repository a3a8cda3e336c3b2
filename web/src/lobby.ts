// The lobby: the game (Shuangkou or 升級); for Shuangkou the variants (ListVariants) with their
// option schema as form fields and the bots for the other seats; for 升級 which seats the server's
// rule bot plays; then CreateGame of the game's service.

import type { Variant, VariantOption } from "./gen/shuangkou/v1/shuangkou_pb";
import { api, rejection, shengjiApi } from "./api";
import { h, rememberGame, routeHref, type Family } from "./dom";
import { t } from "./i18n";

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
  return h(
    "label",
    { class: "option", title: o.description },
    h("span", { class: "option-name" }, o.name),
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
  const deals = h("input", { id: "deals", type: "number", min: "0", max: "1000", value: "1" });
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
    h("label", {}, h("span", {}, t("deals")), deals),
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
      for (const b of BOT_POLICIES) s.append(h("option", { value: b }, b));
      s.append(h("option", { value: HUMAN }, t("human")));
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
        players[seat] = s.value === HUMAN ? `Player ${seat + 1}` : `${t("ruleBot")} ${seat}`;
        if (s.value !== HUMAN) botSeats.push(seat);
      }
      const c = await shengjiApi.createGame({ players, requestId: crypto.randomUUID(), botSeats });
      // A bot seat's token is the server's: no link to share for it.
      const seatTokens = c.seatTokens.map((tok, seat) => (botSeats.includes(seat) ? "" : tok));
      return { family: "shengji" as Family, created: { ...c, seatTokens }, players, options: {} };
    }
    const v = variants.find((x) => x.id === select.value);
    if (!v) throw new Error("no variant");
    const players = [me];
    const bots: Record<number, string> = {};
    for (const s of form.querySelectorAll<HTMLSelectElement>("fieldset.bots select")) {
      const p = Number(s.dataset.player);
      players[p] = s.value === HUMAN ? `Player ${p + 1}` : `${s.value} bot`;
      if (s.value !== HUMAN) bots[p] = s.value;
    }
    const options = chosenOptions(form);
    const c = await api.createGame({
      variant: v.id,
      options,
      deals: Number(deals.value) || 0,
      players,
      requestId: crypto.randomUUID(),
      bots,
      botDelayMs: Math.max(0, Math.min(10_000, Number(delay.value) || 0)),
    });
    return { family: "shuangkou" as Family, created: c, players, options };
  };

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    start.disabled = true;
    error.textContent = "";
    const me = name.value.trim() || "Player 1";
    localStorage.setItem("name", name.value.trim());
    try {
      const { family, created, players, options } = await create(me);
      rememberGame(created.gameId, {
        seatTokens: created.seatTokens,
        spectatorToken: created.spectatorToken,
        names: players,
        options,
      });
      location.hash = routeHref({
        view: "play",
        game: created.gameId,
        token: created.seatTokens[0],
        player: 0,
        family,
      });
    } catch (e) {
      const r = rejection(e);
      error.textContent = `${r.words} (${r.message})`;
      start.disabled = false;
    }
  });
  root.replaceChildren(form);
}
