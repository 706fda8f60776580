// One call of Node's own fetch under a small retry loop, as a retrylab command client.
//
//   node fetch_retry.mjs --attempts 3 --delay-ms 100 URL
//
// It retries a 429 or a 5xx answer, and a network error, up to `--attempts` attempts in all;
// before a retry it sleeps the answer's Retry-After when it has one in seconds, else
// `--delay-ms`. The method is RETRYLAB_METHOD, the body the standard input, and every attempt
// carries `x-retrylab-call: $RETRYLAB_CALL`. It prints `status <code>` (or `error <message>`)
// and exits 0 on a 2xx, 1 otherwise. Only Node's standard library: nothing to install.

import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";

const { values, positionals } = parseArgs({
  options: {
    attempts: { type: "string", default: "3" },
    "delay-ms": { type: "string", default: "100" },
  },
  allowPositionals: true,
});
const url = positionals[0];
const attempts = Number(values.attempts);
const delayMs = Number(values["delay-ms"]);
const method = process.env.RETRYLAB_METHOD ?? "GET";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const body = chunks.length && method !== "GET" && method !== "HEAD" ? Buffer.concat(chunks) : undefined;

let last = "error no attempt made";
let ok = false;
for (let attempt = 1; attempt <= attempts; attempt++) {
  let wait = delayMs;
  try {
    const response = await fetch(url, {
      method,
      body,
      headers: { "x-retrylab-call": process.env.RETRYLAB_CALL ?? "0" },
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    last = `status ${response.status}`;
    ok = response.ok;
    if (response.status !== 429 && response.status < 500) break;
    const retryAfter = Number(response.headers.get("retry-after"));
    if (Number.isFinite(retryAfter) && retryAfter >= 0 && response.headers.has("retry-after")) {
      wait = retryAfter * 1000;
    }
  } catch (error) {
    last = `error ${error.cause?.code ?? error.name}`;
    ok = false;
  }
  if (attempt < attempts) await sleep(wait);
}
console.log(last);
process.exit(ok ? 0 : 1);
