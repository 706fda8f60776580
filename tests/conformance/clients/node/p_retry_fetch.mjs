// Library: p-retry 7.1.1 (npm `p-retry@7.1.1`, tests/conformance/package-lock.json; p-retry
//   8 and 9 need Node 22), around one call of Node's own `fetch` per attempt (Node's fetch
//   does not retry).
// Configuration, the README's Usage example with `retries: 3`:
//   pRetry(run, { retries: 3 }), the rest p-retry's defaults (factor 2, minTimeout 1000,
//   maxTimeout Infinity, randomize false, maxRetryTime Infinity). `run` fetches with
//   `signal: AbortSignal.timeout(10000)` (10 s per attempt), returns a 2xx response,
//   throws a plain Error for 408, 429, 500, 502, 503, 504 (retried) and, as the README
//   does for a 404, an AbortError for any other status (not retried). Every method, POST
//   included, is retried: p-retry retries the function.
//
// What p-retry 7.1.1 documents, quoted from its README,
// target/conformance/node/node_modules/p-retry/readme.md:
// - "If calling `input` returns a rejected promise, `input` is called again until the max
//   retries are reached, it then rejects with the last rejection reason."
// - Attempts: retries, "Default: `10`" "The maximum amount of times to retry the
//   operation." -> 3 retries, at most 4 attempts.
// - What is retried: "Does not retry on most `TypeErrors`, with the exception of network
//   errors." and AbortError: "Abort retrying and reject the promise." Statuses are this
//   program's choice, above.
// - Retry-After: p-retry knows nothing of HTTP; this client ignores Retry-After.
// - Backoff: factor "Default: `2`" "The exponential factor to use."; minTimeout
//   "Default: `1000`" "The number of milliseconds before starting the first retry."; the
//   source (target/conformance/node/node_modules/p-retry/index.js): "let timeout =
//   Math.round(random * options.minTimeout * (options.factor ** (attempt - 1)));" -> 1 s,
//   2 s, 4 s.
// - Jitter: randomize, "Default: `false`" "Randomizes the timeouts by multiplying with a
//   factor between 1 and 2." -> none here.
// - Out of retries: the last Error, whose status this program prints as `status <code>`.
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/p_retry_fetch.mjs URL

import { ATTEMPT_TIMEOUT_MS, load, readCall, reportError, reportStatus, run } from './_contract.mjs';

const RETRY_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

class StatusError extends Error {
  constructor(status) {
    super(`HTTP ${status}`);
    this.status = status;
  }
}

run(async () => {
  const { default: pRetry, AbortError } = await load('p-retry');
  const call = readCall();
  const attempt = async () => {
    const response = await fetch(call.url, {
      method: call.method,
      headers: call.headers,
      body: call.bodyOrUndefined,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    if (response.ok) return response;
    if (RETRY_STATUSES.has(response.status)) throw new StatusError(response.status);
    // As the README's example does for a 404: not worth retrying.
    throw new AbortError(new StatusError(response.status));
  };
  try {
    const response = await pRetry(attempt, { retries: 3 });
    await reportStatus(response.status);
  } catch (error) {
    if (error instanceof StatusError) await reportStatus(error.status);
    reportError(error);
  }
});
