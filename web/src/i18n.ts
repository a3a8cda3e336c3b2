// Chinese and English labels. The language is the browser's (zh* → Chinese) until the reader
// picks one; the choice is kept in localStorage.

export type Lang = "en" | "zh";

const LABELS = {
  title: ["Shuangkou table", "雙扣牌桌"],
  variant: ["Variant", "玩法"],
  players: ["players", "人"],
  deals: ["Deals in the match", "本場局數"],
  yourName: ["Your name", "你的名字"],
  seat: ["Seat", "座位"],
  human: ["a person (share the seat link)", "真人 (分享座位連結)"],
  start: ["Start game", "開始"],
  options: ["Options", "選項"],
  play: ["Play", "出牌"],
  pass: ["Pass", "過"],
  hint: ["Hint", "提示"],
  suggest: ["Bot's suggestion", "電腦建議"],
  noSuggestion: ["No suggestion now.", "現在沒有建議。"],
  clear: ["Clear", "清除"],
  yourTurn: ["Your turn", "輪到你"],
  waiting: ["Waiting for", "等待"],
  cards: ["cards", "張"],
  place: ["place", "名"],
  team: ["team", "隊"],
  score: ["score", "分"],
  auto: ["托管 auto-play", "托管"],
  disconnected: ["disconnected", "斷線"],
  turnClock: ["seconds left to play", "出牌剩餘秒數"],
  reconnectClock: ["seconds left to reconnect", "重連剩餘秒數"],
  bot: ["bot", "電腦"],
  bots: ["Bots for the other seats", "其他座位的電腦玩家"],
  botDelay: ["Bot pause before each play (ms)", "電腦出牌前停頓 (毫秒)"],
  turn: ["to act", "出牌中"],
  trick: ["Trick", "本輪"],
  top: ["on top", "最大"],
  by: ["by", "出牌者"],
  passed: ["pass", "過"],
  shownCard: ["Shown card 明牌", "明牌"],
  partnerHand: ["Partner's hand (雙明)", "隊友的牌 (雙明)"],
  deal: ["Deal", "局"],
  results: ["Results", "結算"],
  outcome: ["Outcome", "結果"],
  lines: ["Score lines", "計分明細"],
  totals: ["Match totals", "總分"],
  chart: ["Running totals", "累計分數"],
  matchOver: ["The match is over.", "比賽結束。"],
  spectatorLink: ["Spectator link", "觀戰連結"],
  seatLinks: ["Seat links", "座位連結"],
  replay: ["Replay", "回放"],
  replayLink: ["Replay link", "回放連結"],
  step: ["Action", "步"],
  first: ["Start", "開頭"],
  prev: ["Back", "上一步"],
  next: ["Next", "下一步"],
  last: ["End", "結尾"],
  interpretation: ["These cards can be read several ways. Play them as:", "這手牌有多種理解，請選擇："],
  spectating: ["Watching as a spectator", "觀戰中"],
  lobby: ["New game", "新牌局"],
  loading: ["Loading…", "載入中…"],
  you: ["you", "你"],
  noPlay: ["No play beats the table: pass.", "沒有能壓過的牌：過。"],
  escaped: ["escaped", "逃跑"],
  trickWon: ["wins the trick", "贏了這輪"],
  out: ["is out", "出完了"],
  game: ["Game", "遊戲"],
  shuangkou: ["Shuangkou 雙扣", "雙扣"],
  shengji: ["Shengji 升級 (one deck)", "升級 (一副牌)"],
  ruleBot: ["rule bot", "規則電腦"],
  level: ["Level 級", "級"],
  levels: ["Levels 等級", "等級"],
  trump: ["Trump 主", "主"],
  noTrump: ["not declared yet", "未亮主"],
  dealer: ["Dealer 莊家", "莊家"],
  dealing: ["Dealing 發牌", "發牌中"],
  exchange: ["Burying 扣底", "扣底中"],
  playing: ["Tricks 出牌", "出牌中"],
  finished: ["Over 結束", "結束"],
  stock: ["cards to deal", "張未發"],
  dealOne: ["Deal a card", "發一張"],
  closeDeal: ["Close the deal", "收底"],
  dealAll: ["Deal the rest", "發完"],
  declare: ["Declare 亮主", "亮主"],
  declared: ["declares", "亮主"],
  bury: ["Bury 6 扣底", "扣底"],
  buryChoose: ["Choose 6 cards to bury", "選六張扣底"],
  buried: ["buries 6 cards", "扣了六張底牌"],
  bottom: ["Bottom 底牌", "底牌"],
  turned: ["Bottom turned over 翻底", "翻底"],
  lastTrick: ["Last trick", "上一輪"],
  pointsTaken: ["Points taken 得分", "得分"],
  opponentsPoints: ["閑家 points", "閑家得分"],
  kouDi: ["摳底 ×", "摳底 ×"],
  upgrade: ["Upgrade 升級", "升級"],
  dealerSide: ["莊家 side", "莊家"],
  opponentsSide: ["閑家 side", "閑家"],
  nextDealer: ["next dealer", "下一莊"],
  winner: ["Winner", "勝方"],
  leave: ["Leave", "離開"],
  leaveAsk: ["Leave this table?", "要離開這桌嗎？"],
  leaveFree: ["Leaving now costs nothing: no deal is scored for it.", "現在離開不扣分：不會因此結算任何一局。"],
  leaveEscape: ["Leaving now ends this deal as an escape (逃跑). The variant scores it:", "現在離開，本局按逃跑結算。依本玩法的規則："],
  leaveShengji: ["Leaving ends the match at once, and your team loses it (升級's rule for a seat that leaves).", "離開會立刻結束比賽，你的隊伍判負（升級的離座規則）。"],
  leaveConfirm: ["Leave and take the escape", "確定離開"],
  leaveStay: ["Stay", "留下"],
  leftTable: ["You left the table.", "你已離開牌桌。"],
  leftScored: ["The deal was scored as an escape:", "本局按逃跑結算："],
  details: ["Details", "詳細"],
  partner: ["partner", "隊友"],
  rightOpp: ["right opponent", "下家"],
  leftOpp: ["left opponent", "上家"],
  opponent: ["opponent", "對手"],
  waitsPlay: ["to play", "等出牌"],
  waitsDeal: ["to deal or declare", "等發牌或亮主"],
  waitsClose: ["to declare or close the deal", "等亮主或收底"],
  waitsBury: ["to bury", "等扣底"],
  waitsReconnect: ["to reconnect", "等重連"],
  newMatch: ["New match with the same seats", "同樣座位再開一場"],
  hands: ["Hands", "手牌"],
  scrubber: ["Step", "步數"],
  refused: ["The server refused this request.", "伺服器拒絕了這個請求。"],
  lineLabel: ["rule", "項目"],
  seed: ["seed", "種子"],
  engine: ["engine", "引擎"],
} as const;

export type LabelKey = keyof typeof LABELS;

const OUTCOMES: Record<number, [string, string]> = {
  1: ["雙扣 double: partners 1st and 2nd", "雙扣"],
  2: ["單扣 single: partners 1st and 3rd", "單扣"],
  3: ["平扣 draw: partners 1st and 4th", "平扣"],
  4: ["逃跑 escape", "逃跑"],
};

const REASONS: Record<string, [string, string]> = {
  BAD_CARD_ID: ["No such card.", "沒有這張牌。"],
  DUPLICATE_CARD: ["The same card twice.", "同一張牌選了兩次。"],
  NOT_A_COMBINATION: ["These cards form no combination.", "這些牌不成牌型。"],
  AMBIGUOUS_PLAY: ["These cards can be read several ways: choose one.", "這手牌有多種理解，請選擇一種。"],
  NOT_YOUR_TURN: ["It is not your turn.", "還沒輪到你。"],
  CARDS_NOT_HELD: ["You do not hold these cards.", "你沒有這些牌。"],
  DOES_NOT_BEAT: ["This does not beat the play on the table.", "壓不過桌上的牌。"],
  MUST_LEAD: ["You lead this trick: you cannot pass.", "這輪由你先出，不能過。"],
  GAME_OVER: ["The match is over.", "比賽已結束。"],
  STALE_SEQ: ["The table moved on; look again.", "牌局已更新，請再看一次。"],
  NO_SUCH_GAME: ["No such game.", "沒有這個牌局。"],
  UNAUTHENTICATED_TOKEN: ["This link's token is not known.", "連結的憑證無效。"],
  PERMISSION_DENIED_TOKEN: ["This link may not do that.", "這個連結沒有權限。"],
  LIMIT_EXCEEDED: ["The server is at a limit; try again later.", "伺服器已達上限，請稍後再試。"],
  SCRIPT_FAILED: ["The variant's script failed; nothing changed.", "玩法腳本出錯，牌局未變。"],
  BAD_REQUEST: ["The request was malformed.", "請求格式錯誤。"],
  DECLARED_MISMATCH: ["The chosen reading does not fit the cards.", "所選牌型與牌不符。"],
  UNAVAILABLE_SERVER: ["The server is unavailable; try again.", "伺服器暫時無法使用。"],
  STORE_FAILED: ["The server could not save; try again.", "伺服器儲存失敗，請重試。"],
  GAME_IN_PROGRESS: ["The replay opens when the match is over.", "比賽結束後才能回放。"],
  BAD_OPTION: ["An option is out of range.", "選項超出範圍。"],
  UNKNOWN_VARIANT: ["No such variant.", "沒有這個玩法。"],
  WRONG_PHASE: ["Not now: the deal is in another phase.", "現在不能這樣做。"],
  NOT_A_LEVEL_CARD: ["That is not a level card.", "這不是級牌。"],
  ALREADY_DECLARED: ["Trump is already declared.", "已經有人亮主了。"],
  NOT_THE_DEALER: ["Only the dealer buries.", "只有莊家扣底。"],
  BURY_COUNT: ["Bury exactly six cards.", "必須扣六張牌。"],
  POINTS_BURIED: ["This table does not allow burying point cards.", "這桌不能扣分牌。"],
  MUST_FOLLOW: ["You must follow the led suit.", "必須跟出首家的花色。"],
  IDEMPOTENCY_CONFLICT: ["This request was already sent with other content.", "這個請求已用不同內容送出過。"],
  TOKEN_KEY_CHANGED: ["This link no longer works on this server.", "這個連結在此伺服器已失效。"],
  CURSOR_OUT_OF_RANGE: ["The table moved on; look again.", "牌局已更新，請再看一次。"],
  PERMISSION_DENIED: ["This link may not do that.", "這個連結沒有權限。"],
  UNAUTHENTICATED: ["This link's token is not known.", "連結的憑證無效。"],
  DeadlineExceeded: ["The server took too long; try again.", "伺服器回應逾時，請重試。"],
  Unavailable: ["The server is unavailable; try again.", "伺服器暫時無法使用。"],
};

const TYPES: Record<string, [string, string]> = {
  single: ["single", "單張"],
  pair: ["pair", "對子"],
  triple: ["triple", "三張"],
  straight: ["straight", "順子"],
  pair_chain: ["pair chain", "連對"],
  triple_chain: ["triple chain", "連三張"],
  bomb: ["bomb", "炸彈"],
  three_jokers: ["three jokers", "三王"],
  four_jokers: ["four jokers", "天王"],
  chain_bomb: ["chain bomb", "連環炸彈"],
};

const KINDS: Record<string, [string, string]> = {
  play: ["plays", "出牌"],
  pass: ["passes", "過"],
  leave: ["leaves", "離開"],
  timeout: ["times out", "超時"],
  auto: ["托管 auto-play", "托管"],
  disconnect: ["disconnects", "斷線"],
  reconnect: ["reconnects", "重連"],
  reconnect_expired: ["did not come back in time", "未及時重連"],
  abort: ["match ended by an operator", "管理員結束比賽"],
};

/** The six player styles of seed 000 by their seed names (docs/BOTS.md); the policies by kind. */
const BOT_NAMES: Record<string, [string, string]> = {
  pingfan: ["平凡型 steady", "平凡型"],
  sasa: ["灑脫型 carefree", "灑脫型"],
  chuantong: ["傳統型 traditional", "傳統型"],
  zhuanmen: ["專門型 expert", "專門型"],
  laoshou: ["老手型 veteran", "老手型"],
  douqi: ["鬥氣型 spiteful", "鬥氣型"],
  heuristic: ["heuristic", "經驗法則"],
  basic: ["basic", "基本"],
  greedy: ["greedy", "貪心"],
  search: ["search", "搜尋"],
};

let lang: Lang = pickLang();

function pickLang(): Lang {
  const saved = globalThis.localStorage?.getItem("lang");
  if (saved === "en" || saved === "zh") return saved;
  return (globalThis.navigator?.language ?? "en").toLowerCase().startsWith("zh") ? "zh" : "en";
}

export function currentLang(): Lang {
  return lang;
}

export function setLang(l: Lang): void {
  lang = l;
  localStorage.setItem("lang", l);
  document.documentElement.lang = l === "zh" ? "zh-Hant" : "en";
}

function pick(pair: readonly [string, string]): string {
  return lang === "zh" ? pair[1] : pair[0];
}

export function t(key: LabelKey): string {
  return pick(LABELS[key]);
}

export function outcomeWords(outcome: number): string {
  return OUTCOMES[outcome] ? pick(OUTCOMES[outcome]) : "—";
}

/** A rejection's reason in words; an unknown one in plain words too (never the code). */
export function reasonWords(reason: string): string {
  return pick(REASONS[reason] ?? LABELS.refused);
}

/** A bot (CreateGame `bots` name, `search:N` included) in words. */
export function botWords(bot: string): string {
  const base = bot.split(":")[0];
  return BOT_NAMES[base] ? pick(BOT_NAMES[base]) : bot;
}

/** "Deal 1 of 8" / "第 1 局 / 共 8 局"; without `of`: "Deal 1" / "第 1 局". */
export function dealWords(n: number, of?: number): string {
  if (lang === "zh") return of === undefined ? `第 ${n} 局` : `第 ${n} 局 / 共 ${of} 局`;
  return of === undefined ? `Deal ${n}` : `Deal ${n} of ${of}`;
}

export function typeWords(typeName: string): string {
  return TYPES[typeName] ? pick(TYPES[typeName]) : typeName;
}

/** A replay action's kind (GetReplay's `kind`) in words. */
export function kindWords(kind: string): string {
  return KINDS[kind] ? pick(KINDS[kind]) : kind;
}

export function ordinal(place: number): string {
  if (lang === "zh") return `第 ${place} 名`;
  return ["", "1st", "2nd", "3rd", "4th"][place] ?? `${place}th`;
}

/** A team's name: 1 for seats 0 and 2, 2 for seats 1 and 3. */
export function teamWords(team: number): string {
  return lang === "zh" ? `第 ${team + 1} 隊` : `${t("team")} ${team + 1}`;
}
