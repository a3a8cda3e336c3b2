// The 升級 table in the browser: a person (seat 0) and three server rule-bot seats. The lobby's
// game is checked for its bot seats and links; the deal played is set (admin seed and deck, so
// nothing depends on chance): a bot is the dealing seat and seat 0 holds every level card (the
// 2s), so the bot deals at once (no deadline waited for), the close waits for the person, who
// declares (亮主) by a click, becomes the dealer and buries six cards by clicks; every trick it
// plays one of the enabled cards, and the enabled cards must be exactly GetHints' legal cards.
// The hand is checked against the rules text's order (SHENGJI.md A1: side suits first, trumps
// last, the big joker at the very end), and the deal's result panel against GetState. A spectator
// page (the table's link) follows live; whenever the table waits for the person in the tricks,
// its DOM holds no card of the person's hand (but a declared one) and only cards the rules make
// public.

import type { BrowserContext, Page } from "playwright-core";
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Phase, ShengjiEngine } from "../src/gen/shengji/v1/shengji_pb";
import { check, opts, waitFor } from "./support";

const STEP_MS = 20_000;
const DEALS_DEADLINE_MS = 600_000;
const MAX_DEALS = 4;

interface PageState {
  seq: number;
  phase: string;
  myTurn: boolean;
  results: number;
}

async function pageState(page: Page): Promise<PageState> {
  const t = page.locator("#table.shengji");
  return {
    seq: Number(await t.getAttribute("data-seq")),
    phase: (await t.getAttribute("data-phase")) ?? "",
    myTurn: (await t.getAttribute("data-my-turn")) === "true",
    results: Number(await t.getAttribute("data-results")),
  };
}

/** The hand's card ids in page order, and which of them are enabled. */
async function handCards(page: Page): Promise<{ id: number; enabled: boolean }[]> {
  return page.$$eval(".hand .card", (els) =>
    els.map((e) => ({ id: Number((e as HTMLElement).dataset.card), enabled: !(e as HTMLButtonElement).disabled })),
  );
}

/** A trump by SHENGJI.md A1: a joker, a card of the level's face, or of the trump suit. */
function trumpByRules(id: number, level: number, trumpSuit: number | undefined): boolean {
  if (id >= 52) return true;
  const face = id % 13 === 12 ? 2 : (id % 13) + 3;
  return face === level || Math.floor(id / 13) === trumpSuit;
}

async function act(page: Page, what: string, how: () => Promise<void>): Promise<void> {
  const before = (await pageState(page)).seq;
  await how();
  await waitFor(what, STEP_MS, async () => ((await pageState(page)).seq > before ? true : undefined));
}

export async function shengjiDeal(
  context: BrowserContext,
  url: string,
  out: string,
  screenshot: string,
  watchConsole: (page: Page, name: string) => void,
): Promise<void> {
  const api = createClient(ShengjiEngine, createGrpcWebTransport({ baseUrl: url.replace(/\/$/, "") }));
  const bearer = (token: string) => opts(token);
  const page = await context.newPage();
  watchConsole(page, "shengji");
  await page.goto(url);
  await page.waitForSelector("#game option", { state: "attached", timeout: STEP_MS });
  await page.selectOption("#game", "shengji");
  await page.fill("#name", "Tester");
  await page.click("#start");
  await page.waitForSelector("#table.shengji", { timeout: STEP_MS });
  const lobbyGame = new URLSearchParams(new URL(page.url()).hash.replace(/^#play\?/, "")).get("g")!;
  const lobbyCreated = await page.evaluate((g) => JSON.parse(sessionStorage.getItem(`game:${g}`)!), lobbyGame);
  const lobbyFirst = (await api.getState({ gameId: lobbyGame }, bearer(lobbyCreated.seatTokens[0]))).state!;
  check(JSON.stringify(lobbyFirst.botSeats) === "[1,2,3]", `升級: three rule-bot seats (${lobbyFirst.botSeats.join(",")})`);
  check((await page.locator(".seat .marker.bot").count()) === 3, "升級: the table marks the three bots");
  const links = await page.$$eval(".links a", (as) => as.map((a) => a.id || a.textContent || ""));
  check(JSON.stringify(links) === '["spectator-link"]', `升級: a spectator link and no seat link for the bot seats (${links.join(", ")})`);

  // The set deal: the first seed (from 1 up) whose dealing seat is a bot, read from a table of
  // four people (nothing moves there); then the same seed with a deck that gives seat 0 the
  // four 2s (the level cards of deal 1: ids 12, 25, 38, 51), so no bot can declare.
  let seed = "";
  let dealing = 0;
  for (let n = 1; n <= 16 && seed === ""; n++) {
    const probeSeed = n.toString(16).padStart(2, "0").repeat(32);
    const probe = await api.createGame({ players: ["a", "b", "c", "d"], seed: probeSeed, requestId: `probe-${n}-${Date.now()}` }, opts());
    const st = (await api.getState({ gameId: probe.gameId }, bearer(probe.seatTokens[0]))).state!;
    if (st.toAct !== undefined && st.toAct !== 0) {
      seed = probeSeed;
      dealing = st.toAct;
    }
  }
  check(seed !== "", `升級: a seed whose dealing seat is a bot (seat ${dealing})`);
  const twos = [12, 25, 38, 51];
  const rest = [...Array(54).keys()].filter((id) => !twos.includes(id));
  const deck: number[] = [];
  for (let i = 0; i < 54; i++) deck.push((dealing + i) % 4 === 0 && i < 16 && twos.length > 0 ? twos.shift()! : rest.shift()!);
  check(deck.length === 54 && new Set(deck).size === 54, "升級: a deck of 54 distinct cards");
  const set = await api.createGame(
    { players: ["Tester", "", "", ""].map((n, i) => n || `${i === dealing ? "Dealer" : "Bot"} #${i}`), seed, deck, botSeats: [1, 2, 3], requestId: `set-${Date.now()}` },
    opts(),
  );
  const game = set.gameId;
  const token = set.seatTokens[0];
  const created = { seatTokens: set.seatTokens.map((t, i) => (i === 0 ? t : "")), spectatorToken: set.spectatorToken, names: [], options: {} };
  await page.evaluate(([g, c]) => sessionStorage.setItem(`game:${g}`, c), [game, JSON.stringify(created)]);
  await page.goto(`${url}#play?g=${game}&t=${encodeURIComponent(token)}&p=0&k=shengji`);
  await page.waitForSelector("#table.shengji", { timeout: STEP_MS });

  // The bot dealing seat deals at once: the page soon offers the person its declarations with
  // the 48 cards out, the table's turn deadline not passed (no 托管 acted), and the dealing
  // seat's clock says what it waits for.
  await page.waitForSelector("#declare button", { timeout: STEP_MS });
  const dealt = (await api.getState({ gameId: game }, bearer(token))).state!;
  check(
    dealt.phase === Phase.DEALING && dealt.stockCount === 6 && dealt.toAct === dealing && Number(dealt.turnDeadline) > Date.now(),
    `升級: the bot dealing seat ${dealing} dealt the 48 cards at once (stock ${dealt.stockCount}, deadline not passed)`,
  );
  const closeClock = (await page.locator(`.seat[data-seat='${dealing}'] .turn-clock`).textContent({ timeout: STEP_MS })) ?? "";
  check(closeClock.startsWith("to declare or close the deal "), `升級: the dealing seat's clock says what it waits for (${closeClock})`);
  check((await page.textContent("#deal-one"))?.startsWith("Close the deal"), "升級: the person may close the deal");
  const spectator = await context.newPage();
  watchConsole(spectator, "shengji spectator");
  await spectator.goto((await page.getAttribute("#spectator-link", "href"))!);
  await spectator.waitForSelector("#table.shengji.spectator", { timeout: STEP_MS });
  let spectatorChecks = 0;

  const deadline = Date.now() + DEALS_DEADLINE_MS;
  let declared = false;
  let deals = 0;
  let buried = false;
  /** The deals settled when the person buried: it is done once that deal is settled too. */
  let buriedAfter = Infinity;
  let tricks = 0;
  let orderChecks = 0;
  let shot = false;
  for (;;) {
    if (Date.now() > deadline) throw new Error("升級: the deals did not end in time");
    // Nothing moves without the person while dealing (any seat deals; the bots only declare)
    // and on its turn; otherwise the bots act at once.
    const s = await waitFor("升級: the person's move or the deal's result", STEP_MS, async () => {
      const st = await pageState(page);
      const done = st.results >= MAX_DEALS || st.results > buriedAfter || st.phase === "finished";
      return done || st.phase === "dealing" || st.myTurn ? st : undefined;
    });
    deals = s.results;
    if (deals >= MAX_DEALS || deals > buriedAfter || s.phase === "finished") break;
    const view = (await api.getState({ gameId: game }, bearer(token))).state!;
    const hints = await api.getHints({ gameId: game }, bearer(token));
    if (BigInt(s.seq) !== view.seq || hints.seq !== view.seq) continue; // the page trails: look again
    const hand = await handCards(page);
    check(
      JSON.stringify(hand.map((c) => c.id).sort((a, b) => a - b)) === JSON.stringify([...view.hand].sort((a, b) => a - b)),
      `升級: the page's hand = GetState's (${hand.length} cards)`,
    );
    // The hand's order: every side-suit card before every trump; the jokers last, big one at the end.
    const trumpSuit = view.trump >= 1 ? view.trump - 1 : undefined;
    const kinds = hand.map((c) => trumpByRules(c.id, view.level, trumpSuit));
    const firstTrump = kinds.indexOf(true);
    if (firstTrump >= 0 && kinds.slice(firstTrump).some((k) => !k)) {
      throw new Error(`升級: a side card after a trump in the hand ${hand.map((c) => c.id).join(",")}`);
    }
    if (hand.some((c) => c.id === 53) && hand[hand.length - 1].id !== 53) throw new Error("升級: the big joker is not last");
    orderChecks++;

    if (s.phase === "dealing") {
      if (hints.declarable.length > 0) {
        const card = hints.declarable[0];
        await act(page, "升級: the declaration", () => page.click(`#declare [data-card='${card}']`));
        declared = true;
        const after = (await api.getState({ gameId: game }, bearer(token))).state!;
        check(after.declaration?.seat === 0 && after.declaration.card === card, `升級: seat 0 declared ${card} (trump ${after.trump})`);
      } else {
        throw new Error("升級: the set deal offers the person no declaration");
      }
    } else if (s.phase === "exchange") {
      check(hints.mustBury && view.dealer === 0 && hand.length === 18, "升級: the person is the dealer and holds 18 cards");
      const choosable = hand.filter((c) => c.enabled).map((c) => c.id);
      for (const id of choosable.slice(0, 6)) await page.click(`.hand [data-card='${id}']`);
      check(await page.isEnabled("#bury"), "升級: six cards chosen enable the bury");
      await act(page, "升級: the bury", () => page.click("#bury"));
      const after = (await api.getState({ gameId: game }, bearer(token))).state!;
      check(after.hand.length === 12 && after.phase === Phase.PLAYING, "升級: the dealer buried six and the tricks begin");
      buried = true;
      buriedAfter = s.results;
    } else if (s.phase === "playing") {
      const enabled = hand.filter((c) => c.enabled).map((c) => c.id).sort((a, b) => a - b);
      const legal = [...hints.legalCards].sort((a, b) => a - b);
      if (JSON.stringify(enabled) !== JSON.stringify(legal)) {
        throw new Error(`升級: enabled cards ${enabled.join(",")} != the legal cards ${legal.join(",")}`);
      }
      // Nothing moves while the person is to play: the spectator catches up and shows only
      // public cards (the trick, the last trick, the declaration, a turned bottom, settled deals'
      // bottoms), none of the person's hand.
      await waitFor("升級: the spectator at the table's seq", STEP_MS, async () =>
        (await pageState(spectator)).seq === s.seq ? true : undefined,
      );
      const pub = (await api.getState({ gameId: game }, bearer(created.spectatorToken))).state!;
      const open = new Set<number>([
        ...pub.trick.map((c) => c.card),
        ...pub.lastTrick.map((c) => c.card),
        ...pub.turned,
        ...(pub.declaration ? [pub.declaration.card] : []),
        ...pub.results.flatMap((r) => r.buried),
      ]);
      const ids = (sel: string) => spectator.$$eval(sel, (els) => els.map((e) => Number((e as HTMLElement).dataset.card)));
      const notPublic = (await ids("[data-card]")).filter((id) => !open.has(id));
      // The current deal's cards on the table (not the last trick or the settled deals' bottoms,
      // which may hold ids dealt again): none from the person's hand, but the declared card
      // (it stays in the declarer's hand, shown: public by the rules).
      const declared = pub.declaration?.card;
      const table = await ids(".ring [data-card]:not(.last-trick [data-card])");
      const fromHand = table.filter((id) => view.hand.includes(id) && id !== declared);
      if (notPublic.length > 0 || fromHand.length > 0) {
        throw new Error(`升級: the spectator's page shows hidden cards: not public ${notPublic.join(",")}, from the person's hand ${fromHand.join(",")}`);
      }
      spectatorChecks++;
      if (tricks === 0) {
        // The turn clock on the person's seat (to act, waited for): GetState's turn deadline.
        check(view.toAct === 0 && view.turnDeadline > 0n, "升級: the person is to act, with a deadline");
        for (const [who, p] of [["table", page], ["spectator", spectator]] as const) {
          const clock = p.locator('.seat[data-seat="0"] .turn-clock');
          const shown = await clock.getAttribute("data-deadline", { timeout: STEP_MS });
          const text = (await clock.textContent()) ?? "";
          check(shown === view.turnDeadline.toString(), `升級: the ${who} shows the person's turn clock (deadline ${shown} = GetState's ${view.turnDeadline})`);
          check(text.startsWith("to play "), `升級: the ${who}'s clock says what it waits for (${text})`);
        }
      }
      if (!shot && tricks >= 3) {
        await page.screenshot({ path: screenshot, fullPage: true });
        shot = true;
      }
      const card = enabled[tricks % enabled.length];
      await page.click(`.hand [data-card='${card}']`);
      await act(page, "升級: the play", () => page.keyboard.press("p"));
      tricks++;
    }
  }
  check(declared && buried, `升級: the person declared (${declared}) and, as the dealer, buried by clicks (${buried})`);
  check(tricks === 12 * deals, `升級: the person played a card in each of the ${12 * deals} tricks of ${deals} deals from the legal cards`);
  check(spectatorChecks === tricks, `升級: the spectator's page held only public cards (${spectatorChecks} checks)`);
  check(orderChecks > 0, `升級: the hand's order checked ${orderChecks} times against A1`);


  const final = (await api.getState({ gameId: game }, bearer(token))).state!;
  const d = final.results[0];
  const panel = page.locator("#results .deal-result[data-deal='1']");
  await panel.waitFor({ timeout: STEP_MS });
  const shown = {
    points: Number(await panel.getAttribute("data-opponents-points")),
    side: Number(await panel.getAttribute("data-upgrade-side")),
    levels: Number(await panel.getAttribute("data-upgrade-levels")),
    after: await panel.getAttribute("data-levels-after"),
  };
  const want = { points: d.opponentsPoints, side: d.upgradeSide, levels: d.upgradeLevels, after: `${d.levelsAfter?.team0},${d.levelsAfter?.team1}` };
  check(JSON.stringify(shown) === JSON.stringify(want), `升級: the deal result shown = GetState (${JSON.stringify(want)})`);
  const buriedShown = await panel.locator(".buried [data-card]").count();
  check(buriedShown === 6, "升級: the buried cards are shown after the deal");
  await page.screenshot({ path: `${out}/shengji-result.png`, fullPage: true });
  await spectator.close();
  await page.close();
}
