// The page: a header (title, language), then the view the URL fragment names — the lobby, a seat
// at a table (Shuangkou or 升級), a spectator's table, or a replay.

import "./style.css";
import { currentRoute, h } from "./dom";
import { currentLang, setLang, t, type Lang } from "./i18n";
import { renderLobby } from "./lobby";
import { Replay } from "./replay";
import { ShengjiTable } from "./shengji";
import { Table } from "./table";

let active: { stop(): void } | undefined;

function header(): HTMLElement {
  const langs = h("span", { class: "langs" });
  for (const [code, label] of [["zh", "中文"], ["en", "English"]] as [Lang, string][]) {
    const b = h("button", { type: "button", class: code === currentLang() ? "on" : "", "data-lang": code }, label);
    b.addEventListener("click", () => {
      setLang(code);
      show();
    });
    langs.append(b);
  }
  return h("header", {}, h("h1", {}, h("a", { href: "#" }, t("title"))), langs);
}

function show(): void {
  active?.stop();
  active = undefined;
  const main = h("main", { id: "view" });
  document.body.replaceChildren(header(), main);
  document.title = t("title");
  const r = currentRoute();
  switch (r.view) {
    case "lobby":
      void renderLobby(main);
      break;
    case "play":
    case "watch": {
      const viewer = { game: r.game, token: r.token, player: r.view === "play" ? r.player : undefined };
      const table = r.family === "shengji" ? new ShengjiTable(main, viewer) : new Table(main, viewer);
      active = table;
      void table.start();
      break;
    }
    case "replay": {
      const replay = new Replay(main, r.game, r.token, r.player);
      active = replay;
      void replay.start();
      break;
    }
  }
}

setLang(currentLang());
window.addEventListener("hashchange", show);
show();
