// What the browser tests share: a check that prints what it verified, a wait with a deadline,
// and the per-call deadline of every gRPC-Web call the tests make themselves.

export function check(ok: unknown, what: string): void {
  if (!ok) throw new Error(`check failed: ${what}`);
  console.log(`ok: ${what}`);
}

export async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Milliseconds any one unary gRPC-Web call of the tests may take (then DEADLINE_EXCEEDED). */
export const CALL_MS = 20_000;

/** Call options: the per-call deadline, with a bearer token when given (and a stream's signal). */
export function opts(token?: string, signal?: AbortSignal, timeoutMs = CALL_MS) {
  return { headers: token ? { authorization: `Bearer ${token}` } : undefined, signal, timeoutMs };
}
