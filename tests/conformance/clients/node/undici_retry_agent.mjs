// Library: undici 7.30.3 (npm `undici@7.30.3`, tests/conformance/package-lock.json; undici
//   8 needs Node 22; 7 needs Node >= 20.18.1): one `RetryAgent.request(...)` per call.
// Configuration:
//   new RetryAgent(new Agent({ connect: { timeout: 10000 }, headersTimeout: 10000,
//                              bodyTimeout: 10000 }), { maxRetries: 3 }),
//   the rest undici's defaults (minTimeout 500, maxTimeout 30000, timeoutFactor 2,
//   retryAfter true, methods, statusCodes, errorCodes, throwOnError true).
//
// What undici 7.30.3 documents, quoted from
// target/conformance/node/node_modules/undici/docs/docs/api/RetryAgent.md:
// - "A `undici.Dispatcher` that allows to automatically retry a request."
// - Attempts: "**maxRetries** `number` (optional) - Maximum number of retries. Default:
//   `5`" -> 3 retries, at most 4 attempts.
// - Methods: "Array of HTTP methods to retry. Default: `['GET', 'PUT', 'HEAD', 'OPTIONS',
//   'DELETE']`" (the code, target/conformance/node/node_modules/undici/lib/handler/retry-handler.js,
//   adds 'TRACE'; no POST either way).
// - Statuses: "Array of HTTP status codes to retry. Default: `[429, 500, 502, 503, 504]`";
//   errorCodes "Default: `['ECONNRESET', 'ECONNREFUSED', 'ENOTFOUND',
//   'ENETDOWN','ENETUNREACH', 'EHOSTDOWN', 'UND_ERR_SOCKET']`" (the code adds EHOSTUNREACH
//   and EPIPE).
// - Backoff: "**minTimeout** `number` (optional) - Minimum number of milliseconds to wait
//   before retrying. Default: `500` (half a second)", "**timeoutFactor** `number`
//   (optional) - Factor to multiply the timeout by for each retry attempt. Default: `2`",
//   "**maxTimeout** `number` (optional) - Maximum number of milliseconds to wait before
//   retrying. Default: `30000` (30 seconds)"; the code: "Math.min(minTimeout *
//   timeoutFactor ** (counter - 1), maxTimeout)" -> 500 ms, 1 s, 2 s. No jitter.
// - Retry-After: "**retryAfter** `boolean` (optional) - It enables automatic retry after
//   the `Retry-After` header is received. Default: `true`". In the code the default retry
//   function never reads that option: a Retry-After is always used when above 0, as
//   seconds ("retryAfterHeader * 1e3 // Retry-After is in seconds") or an HTTP-date,
//   capped at maxTimeout ("Math.min(retryAfterHeader, maxTimeout)").
// - "Disable to prevent throwing error on last retry attept" (throwOnError, default true):
//   out of retries, the request rejects with a RequestRetryError (printed as `status
//   <code>` of its statusCode).
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/undici_retry_agent.mjs URL

import { ATTEMPT_TIMEOUT_MS, load, readCall, reportError, reportStatus, run } from './_contract.mjs';

run(async () => {
  const undici = await load('undici');
  const { Agent, RetryAgent } = undici.default ?? undici;
  const call = readCall();
  const agent = new RetryAgent(
    new Agent({
      connect: { timeout: ATTEMPT_TIMEOUT_MS },
      headersTimeout: ATTEMPT_TIMEOUT_MS,
      bodyTimeout: ATTEMPT_TIMEOUT_MS,
    }),
    { maxRetries: 3 },
  );
  const url = new URL(call.url);
  try {
    const response = await agent.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: call.method,
      headers: call.headers,
      body: call.bodyOrUndefined,
    });
    await response.body.dump();
    await reportStatus(response.statusCode);
  } catch (error) {
    if (typeof error.statusCode === 'number') await reportStatus(error.statusCode);
    reportError(error);
  }
});
