// The gRPC-Web clients of shuangkou.v1 and shengji.v1 (升級), on the origin the page came from (the binary serves the
// page and the game service on one address), and the reading of its rejections.

import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GameEngine, HandType } from "./gen/shuangkou/v1/shuangkou_pb";
import { ShengjiEngine } from "./gen/shengji/v1/shengji_pb";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb";
import { reasonWords } from "./i18n";

const transport = createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true });

export const api: Client<typeof GameEngine> = createClient(GameEngine, transport);

/** The 升級 game service on the same server. */
export const shengjiApi: Client<typeof ShengjiEngine> = createClient(ShengjiEngine, transport);

/** Call options carrying a bearer token. */
export function auth(token: string, signal?: AbortSignal) {
  return { headers: { authorization: `Bearer ${token}` }, signal };
}

/** An interpretation offered by AMBIGUOUS_PLAY ("straight:9" in ErrorInfo metadata). */
export interface Interpretation {
  typeName: string;
  type: HandType;
  key: string;
}

export interface Rejection {
  reason: string;
  words: string;
  message: string;
  interpretations: Interpretation[];
}

const TYPE_BY_NAME: Record<string, HandType> = {
  single: HandType.TYPE_SINGLE,
  pair: HandType.TYPE_PAIR,
  triple: HandType.TYPE_TRIPLE,
  straight: HandType.TYPE_STRAIGHT,
  pair_chain: HandType.TYPE_PAIR_CHAIN,
  triple_chain: HandType.TYPE_TRIPLE_CHAIN,
  bomb: HandType.TYPE_BOMB,
  three_jokers: HandType.TYPE_THREE_JOKERS,
  four_jokers: HandType.TYPE_FOUR_JOKERS,
  chain_bomb: HandType.TYPE_CHAIN_BOMB,
};

function parseInterpretations(list: string): Interpretation[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => {
      const [typeName, key = ""] = s.split(":");
      return { typeName, type: TYPE_BY_NAME[typeName] ?? HandType.TYPE_UNSPECIFIED, key };
    })
    .filter((i) => i.type !== HandType.TYPE_UNSPECIFIED);
}

/** The reason (ErrorInfo, else the message's prefix), in words, with its details. */
export function rejection(err: unknown): Rejection {
  const e = ConnectError.from(err);
  const info = e.findDetails(ErrorInfoSchema)[0];
  const reason = info?.reason ?? (e.rawMessage.match(/^([A-Z_]+):/)?.[1] ?? Code[e.code]);
  const interpretations = parseInterpretations(info?.metadata["interpretations"] ?? "");
  return { reason, words: reasonWords(reason), message: e.rawMessage, interpretations };
}

/** True when the error only means the stream was cancelled by the page itself. */
export function cancelled(err: unknown): boolean {
  return ConnectError.from(err).code === Code.Canceled;
}
