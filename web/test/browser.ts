// The web table in a real browser: Debian's Chromium driven by playwright-core, against the
// shuangkou binary (SHUANGKOU_BIN; CI uses the release build). Started on free ports with the
// memory store; the test talks to the same server over gRPC-Web from Node as the oracle
// (GetState of every seat, preset hands).
//
//  1. a person's deal of `classic` against three bots, every turn of seat 0 through clicks
//     (hint, then play or pass) until the deal ends; the result panel equals GetState's scores;
//  2. a spectator page, opened from the table's link, sees the plays live and its DOM holds no
//     card id of any seat's hand;
//  3. the replay of the finished game, stepped to its end;
//  4. 千變 (qianbian) with a preset hand: five cards that read as two straights, the UI asks
//     which; a non-combination is rejected with its reason in words;
//  5. a whole 升級 deal by a person against three rule-bot seats (web/test/shengji.ts);
//  6. no console errors; screenshots (desktop and phone width) under web/artifacts/; the first
//     load's compressed size and the interaction latencies written to web/artifacts/metrics.json.
//
// Every wait has a deadline. Usage: node artifacts/browser.mjs (npm test builds and runs it).

import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameEngine, Phase, type GetStateResponse } from "../src/gen/shuangkou/v1/shuangkou_pb";
import { check, waitFor } from "./support";
import { shengjiDeal } from "./shengji";

const BIN = process.env.SHUANGKOU_BIN ?? "../target/release/shuangkou";
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const OUT = "artifacts";
const DEAL_DEADLINE_MS = 240_000;
const STEP_MS = 20_000;

mkdirSync(OUT, { recursive: true });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

async function startServer(): Promise<{ proc: ChildProcess; url: string }> {
  const grpc = await freePort();
  const web = await freePort();
  const proc = spawn(
    BIN,
    ["serve", "--store", "memory", "--no-metrics", "--listen", `127.0.0.1:${grpc}`, "--web-listen", `127.0.0.1:${web}`],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SHUANGKOU_LOG_FORMAT: "text" } },
  );
  let log = "";
  const printed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not print its web address in 120 s:\n${log}`)), 120_000);
    const onData = (d: Buffer) => {
      log += d.toString();
      if (log.includes(`web table on http://127.0.0.1:${web}/`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.on("exit", (code) => reject(new Error(`server exited (${code}):\n${log}`)));
  });
  await printed;
  console.log(`ok: the server printed its web address (http://127.0.0.1:${web}/)`);
  return { proc, url: `http://127.0.0.1:${web}/` };
}

const server = await startServer();
const api = createClient(GameEngine, createGrpcWebTransport({ baseUrl: server.url.replace(/\/$/, "") }));
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

const consoleErrors: string[] = [];
function watchConsole(page: Page, name: string): void {
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(`${name}: ${m.text()}`);
  });
  page.on("pageerror", (e) => consoleErrors.push(`${name}: ${e.message}`));
}

async function state(page: Page): Promise<{ seq: number; phase: string; myTurn: boolean }> {
  const t = page.locator("#table");
  return {
    seq: Number(await t.getAttribute("data-seq")),
    phase: (await t.getAttribute("data-phase")) ?? "",
    myTurn: (await t.getAttribute("data-my-turn")) === "true",
  };
}

/** Card ids present in the page's DOM. */
async function domCards(page: Page): Promise<number[]> {
  return page.$$eval("[data-card]", (els) => els.map((e) => Number((e as HTMLElement).dataset.card)));
}

/**
 * The cards every viewer may see: those played so far (from seat 0's own WatchGame stream) and
 * the shown card (明牌, public by the rules). Every other card is in some seat's hand.
 */
function publicCards(game: string, token: string, shown: number | undefined, signal: AbortSignal): Set<number> {
  const seen = new Set<number>(shown === undefined ? [] : [shown]);
  void (async () => {
    try {
      for await (const ev of api.watchGame({ gameId: game, fromSeq: 0n }, { ...bearer(token), signal })) {
        if (ev.event.case === "played") for (const c of ev.event.value.play?.cards ?? []) seen.add(c);
      }
    } catch {
      // ended by the test (abort)
    }
  })();
  return seen;
}

/**
 * Fails when the page shows a card that is neither public nor in `own` (the viewer's hand).
 * A card not yet public is waited for (seat 0's stream may trail the page); a leaked one never
 * becomes public while the table waits for seat 0, so the wait ends in the failure.
 */
async function noHiddenCard(page: Page, name: string, visibleToAll: Set<number>, own: Set<number>): Promise<void> {
  let leaked: number[] = [];
  await waitFor(`${name}: every card on the page public or its own`, 10_000, async () => {
    leaked = (await domCards(page)).filter((id) => !visibleToAll.has(id) && !own.has(id));
    return leaked.length === 0 ? true : undefined;
  }).catch(() => {
    throw new Error(`${name}'s DOM holds hidden cards ${leaked.join(",")}`);
  });
}

let browser: Browser | undefined;
const metrics: Record<string, unknown> = {};
const latencies: { what: string; ms: number }[] = [];
/** Takes the latencies a page measured (input → re-rendered page) before it navigates away. */
async function harvest(page: Page): Promise<void> {
  latencies.push(
    ...(await page.evaluate(() => {
      const w = window as unknown as { __latencies?: { what: string; ms: number }[] };
      const l = w.__latencies ?? [];
      w.__latencies = [];
      return l;
    })),
  );
}
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watchConsole(page, "table");

  // First load: what the browser fetched, compressed, before any game.
  await page.goto(server.url);
  await page.waitForSelector("#variant option", { state: "attached", timeout: STEP_MS });
  const transfer = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation") as PerformanceResourceTiming[];
    const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
    const assets = [...nav, ...res].filter((e) => !e.name.includes("/shuangkou.v1."));
    return {
      encodedBytes: assets.reduce((n, e) => n + e.encodedBodySize, 0),
      transferBytes: assets.reduce((n, e) => n + e.transferSize, 0),
      files: assets.map((e) => e.name),
    };
  });
  metrics.firstLoad = transfer;
  console.log(`first load: ${transfer.encodedBytes} B compressed bodies, ${transfer.transferBytes} B transferred, ${transfer.files.length} files`);
  check(transfer.encodedBytes > 0 && transfer.encodedBytes < 300_000, "first load under 300 KB compressed");
  const variantIds = await page.$$eval("#variant option", (os) => os.map((o) => (o as HTMLOptionElement).value));
  check(variantIds.includes("classic") && variantIds.includes("qianbian"), `the variant list (${variantIds.join(", ")})`);
  await page.screenshot({ path: `${OUT}/lobby.png`, fullPage: true });

  // 1. classic against three bots.
  await page.selectOption("#variant", "classic");
  await page.fill("#name", "Tester");
  await page.fill("#deals", "1");
  await page.fill("#bot-delay", "0");
  await page.click("#start");
  await page.waitForSelector("#table", { timeout: STEP_MS });
  const url = new URL(page.url());
  const game = new URLSearchParams(url.hash.replace(/^#play\?/, "")).get("g")!;
  const created = await page.evaluate((g) => JSON.parse(sessionStorage.getItem(`game:${g}`)!), game);
  const seatTokens: string[] = created.seatTokens;
  const first = await api.getState({ gameId: game }, bearer(seatTokens[0]));
  console.log(`game ${game}: seats ${first.seats.map((s) => `${s.name}${s.bot ? ` [bot ${s.bot}]` : ""}`).join(", ")}`);
  check(first.seats.filter((s) => s.bot !== "").length === 3 && seatTokens.slice(1).every((tok) => tok === ""), "three bot seats (no tokens)");
  const botMarkers = await page.locator(".seat .marker.bot").count();
  check(botMarkers === 3, "the table marks the three bots");

  // 2. the spectator, from the table's link.
  const spectatorHref = await page.getAttribute("#spectator-link", "href");
  check(spectatorHref?.includes("#watch?"), "the table offers a spectator link");
  const spectator = await context.newPage();
  watchConsole(spectator, "spectator");
  await spectator.goto(spectatorHref!);
  await spectator.waitForSelector("#table.spectator", { timeout: STEP_MS });

  const stopWatch = new AbortController();
  const visible = publicCards(game, seatTokens[0], first.shownCard, stopWatch.signal);
  const deadline = Date.now() + DEAL_DEADLINE_MS;
  let turns = 0;
  let hiddenChecks = 0;
  let screenshotTaken = false;
  for (;;) {
    if (Date.now() > deadline) throw new Error("the deal did not end in time");
    const s = await waitFor("seat 0's turn or the end of the match", STEP_MS * 3, async () => {
      const st = await state(page);
      return st.phase === "finished" || st.myTurn ? st : undefined;
    });
    if (s.phase === "finished") break;
    // While the table waits for seat 0, nothing moves: the spectator's page must have caught
    // up with every play so far (live) and show no card of any hand.
    // (Not only plays move the seq: a page's watch stream connecting is an action too.)
    await waitFor(`the spectator to see the table's seq`, STEP_MS, async () =>
      (await state(spectator)).seq === (await state(page)).seq ? true : undefined,
    ).catch(async (e) => {
      throw new Error(`${e.message} (spectator at ${(await state(spectator)).seq}, table at ${(await state(page)).seq})`);
    });
    const mine = new Set((await api.getState({ gameId: game }, bearer(seatTokens[0]))).hand);
    await noHiddenCard(spectator, "the spectator", visible, new Set());
    await noHiddenCard(page, "seat 0", visible, mine);
    hiddenChecks++;
    if (!screenshotTaken && turns >= 2) {
      await page.screenshot({ path: `${OUT}/table.png`, fullPage: true });
      await spectator.screenshot({ path: `${OUT}/spectator.png`, fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: `${OUT}/table-phone.png`, fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      screenshotTaken = true;
    }
    if (turns === 0) {
      // The turn clock on the seat to act (seat 0, waited for): GetState's turn deadline.
      const want = (await api.getState({ gameId: game }, bearer(seatTokens[0]))).turnDeadline;
      check(want > 0n, "seat 0's turn has a deadline (turn timers on)");
      for (const [who, p] of [["table", page], ["spectator", spectator]] as const) {
        const clock = p.locator(`.seat[data-seat="${first.seats.find((x) => x.player === 0)?.seat ?? 0}"] .turn-clock`);
        const shown = await clock.getAttribute("data-deadline", { timeout: STEP_MS });
        const text = (await clock.textContent()) ?? "";
        const left = Number(/(\d+) s$/.exec(text)?.[1] ?? NaN);
        check(
          shown === want.toString() && left >= 0 && left <= Math.ceil((Number(want) - Date.now()) / 1000) + 1,
          `the ${who} shows seat 0's turn clock (${text}, deadline ${shown} = GetState's ${want})`,
        );
      }
      await page.click("#suggest");
      await waitFor("the bot's suggestion", STEP_MS, async () => ((await page.textContent("#message")) ?? "").startsWith("Bot's suggestion") ? true : undefined);
      check(true, `the bot's suggestion answers (${await page.textContent("#message")})`);
    }
    // A turn by clicks: the hint selects the weakest legal play; play it, or pass when none.
    const said = (await page.textContent("#message")) ?? "";
    await page.click("#hint");
    await waitFor("the hint", STEP_MS, async () => {
      const m = (await page.textContent("#message")) ?? "";
      return m !== "" && m !== said ? true : undefined;
    });
    const before = (await state(page)).seq;
    const selected = await page.locator(".hand .card.selected").count();
    if (selected > 0) await page.click("#play");
    else await page.click("#pass");
    await waitFor("the play to be taken", STEP_MS, async () => ((await state(page)).seq > before ? true : undefined));
    turns++;
  }
  stopWatch.abort();
  check(turns > 0, `seat 0 played ${turns} turns through the UI`);
  check(hiddenChecks > 0, `no hidden card in the spectator's DOM (${hiddenChecks} checks)`);

  // The result panel against GetState.
  const final: GetStateResponse = await api.getState({ gameId: game }, bearer(seatTokens[0]));
  check(final.phase === Phase.FINISHED, "the match is over");
  await page.waitForSelector("#results .totals li", { timeout: STEP_MS });
  const shownTotals = await page.$$eval("#results .totals li", (els) =>
    els.map((e) => [Number((e as HTMLElement).dataset.player), Number((e as HTMLElement).dataset.total)]),
  );
  const wantTotals = final.scores!.total.map((s, p) => [p, s]);
  check(JSON.stringify(shownTotals) === JSON.stringify(wantTotals), `match totals shown = GetState (${JSON.stringify(wantTotals)})`);
  const shownLines = await page.$$eval("#results .deal-result[data-deal='1'] table.lines tr[data-label]", (els) =>
    els.map((e) => {
      const d = (e as HTMLElement).dataset;
      return [Number(d.seat), d.label, Number(d.amount), e.querySelector(".detail")?.textContent ?? ""];
    }),
  );
  const deal1 = final.scores!.deals[0];
  const wantLines = deal1.lines.map((l) => [l.seat, l.label, l.amount, l.detail]);
  check(JSON.stringify(shownLines) === JSON.stringify(wantLines), `deal 1's ${wantLines.length} score lines shown = GetState`);
  const shownDeal = await page.$$eval("#results .deal-result[data-deal='1'] .deal-scores li", (els) =>
    els.map((e) => [Number((e as HTMLElement).dataset.player), Number((e as HTMLElement).dataset.score)]),
  );
  const wantDeal = deal1.scores.map((s, seat) => [deal1.players[seat], s]);
  check(JSON.stringify(shownDeal) === JSON.stringify(wantDeal), "deal 1's scores by seat shown = GetState");
  const outcome = await page.getAttribute("#results .deal-result[data-deal='1']", "data-outcome");
  check(Number(outcome) === deal1.outcome, `the outcome shown = GetState (${deal1.outcome})`);
  await page.screenshot({ path: `${OUT}/result.png`, fullPage: true });
  await spectator.waitForSelector("#table.spectator[data-phase='finished']", { timeout: STEP_MS });
  check(true, "the spectator saw the match end live");

  // 3. the replay, stepped to its end.
  await page.click("#replay-link");
  await page.waitForSelector("#replay", { timeout: STEP_MS });
  const steps = Number(await page.getAttribute("#replay", "data-steps"));
  const replay = await api.getReplay({ gameId: game });
  check(steps === replay.actions.length && steps > 0, `the replay has every action (${steps})`);
  for (let k = 1; k <= steps; k++) {
    await page.click("#replay-next");
    await page.waitForSelector(`#replay[data-step='${k}']`, { timeout: STEP_MS });
    const kind = await page.getAttribute(".replay-action", "data-kind");
    if (kind !== replay.actions[k - 1].kind) throw new Error(`replay step ${k}: ${kind} != ${replay.actions[k - 1].kind}`);
  }
  check(await page.isDisabled("#replay-next"), "the replay stepped to its end");
  check((await page.locator("#replay-final").count()) === 1, "the replay's end shows the final scores");
  await page.screenshot({ path: `${OUT}/replay.png`, fullPage: true });

  // 4. 千變 ambiguity with a preset hand.
  await ambiguity(context.pages()[0]);

  // 5. a 升級 deal: a person and three rule-bot seats (web/test/shengji.ts).
  await shengjiDeal(context, server.url, OUT, `${OUT}/shengji.png`, watchConsole);

  // Languages.
  await harvest(page);
  await page.goto(server.url);
  await page.click("header [data-lang='zh']");
  await page.waitForSelector("#start", { timeout: STEP_MS });
  check((await page.textContent("#start")) === "開始", "Chinese labels");
  await page.click("header [data-lang='en']");
  await page.waitForSelector("#start", { timeout: STEP_MS });
  check((await page.textContent("#start")) === "Start game", "English labels");

  // Latencies measured in the page (input → re-rendered page).
  for (const p of context.pages()) await harvest(p);
  const byKind: Record<string, { n: number; median: number; p95: number; max: number }> = {};
  for (const kind of [...new Set(latencies.map((l) => l.what))]) {
    const v = latencies.filter((l) => l.what === kind).map((l) => l.ms).sort((a, b) => a - b);
    byKind[kind] = { n: v.length, median: v[Math.floor(v.length / 2)], p95: v[Math.min(v.length - 1, Math.floor(v.length * 0.95))], max: v[v.length - 1] };
  }
  metrics.latencyMs = byKind;
  console.log("interaction latency (ms):", JSON.stringify(byKind));
  check(consoleErrors.length === 0, `no console errors${consoleErrors.length ? ": " + consoleErrors.join(" | ") : ""}`);
  writeFileSync(`${OUT}/metrics.json`, JSON.stringify(metrics, null, 2));
  console.log("web browser tests: all passed");
} catch (e) {
  // What each page showed when the test failed, for the artifacts.
  for (const [i, p] of (browser?.contexts()[0]?.pages() ?? []).entries()) {
    await p.screenshot({ path: `${OUT}/failure-${i}.png`, fullPage: true }).catch(() => undefined);
    const info = await p.evaluate(() => document.querySelector("#table")?.outerHTML.slice(0, 400) ?? document.body.innerText.slice(0, 400)).catch(() => "");
    console.error(`page ${i} (${p.url()}): ${info}`);
  }
  if (consoleErrors.length) console.error(`console errors: ${consoleErrors.join(" | ")}`);
  throw e;
} finally {
  await browser?.close();
  server.proc.kill("SIGTERM");
}

/**
 * A qianbian game where seat 0 leads and holds 3♠ 4♠ 5♠, a small and two big jokers (all four
 * jokers wild in 千變): the straight 3–8 or the pair chain 33 44 55 (RULES.md: different types
 * are declared). The page must ask which one; the chosen reading is played.
 */
async function ambiguity(page: Page): Promise<void> {
  const spade = (rank: number) => rank; // deck 0, spades: id = rank (0 = "3")
  const six = [spade(0), spade(1), spade(2), 52, 53, 107];
  const mine = [...six, spade(12)];
  const rest: number[] = [];
  for (let id = 0; id < 108; id++) if (!mine.includes(id)) rest.push(id);
  const hand0 = [...mine, ...rest.splice(0, 27 - mine.length)];
  const handsPreset = [hand0, rest.slice(0, 27), rest.slice(27, 54), rest.slice(54, 81)];
  let game = "";
  let token = "";
  for (let seed = 1; seed <= 64 && !game; seed++) {
    const c = await api.createGame({
      variant: "qianbian",
      deals: 1,
      players: ["Tester", "East", "North", "West"],
      seed: seed.toString(16).padStart(64, "0"),
      presetHands: { hands: handsPreset.map((cards) => ({ cards })) },
      requestId: `ambiguity-${seed}-${Date.now()}`,
    });
    const s = await api.getState({ gameId: c.gameId }, bearer(c.seatTokens[0]));
    if (s.turnSeat === 0) {
      game = c.gameId;
      token = c.seatTokens[0];
    }
  }
  check(game !== "", "a preset qianbian game where seat 0 leads");
  await harvest(page);
  await page.goto(`${server.url}#play?g=${game}&t=${encodeURIComponent(token)}&p=0`);
  await page.waitForSelector("#table[data-my-turn='true']", { timeout: STEP_MS });
  const wilds = await page.locator(".hand .card.wild").count();
  check(wilds >= 1, `wild jokers are marked (${wilds})`);
  // A rejection in words: 3♠ and 2♠ form no combination.
  await page.click(`.hand [data-card='${spade(0)}']`);
  await page.click(`.hand [data-card='${spade(12)}']`);
  await page.click("#play");
  await waitFor("the rejection", STEP_MS, async () => ((await page.textContent("#message")) ?? "").includes("form no combination") ? true : undefined);
  check(true, "a rejected play says why in words");
  await page.click("#clear");
  for (const id of six) await page.click(`.hand [data-card='${id}']`);
  await page.click("#play");
  await page.waitForSelector("#interpretations button", { timeout: STEP_MS });
  const options = await page.$$eval("#interpretations button", (bs) => bs.map((b) => `${(b as HTMLElement).dataset.type}:${(b as HTMLElement).dataset.key}`));
  check(options.length >= 2, `the UI asks for the interpretation (${options.join(", ")})`);
  await page.screenshot({ path: `${OUT}/ambiguity.png`, fullPage: true });
  const before = (await state(page)).seq;
  await page.click("#interpretations button >> nth=0");
  await waitFor("the declared play", STEP_MS, async () => ((await state(page)).seq > before ? true : undefined));
  const s = await api.getState({ gameId: game }, bearer(token));
  check(s.trick?.top?.typeName === options[0].split(":")[0] && s.trick?.topSeat === 0, `the declared reading was played (${s.trick?.top?.typeName} ${s.trick?.top?.key})`);
}

