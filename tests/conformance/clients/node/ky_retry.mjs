// Library: ky 1.14.3 on Node's own fetch (npm `ky@1.14.3`,
//   tests/conformance/package-lock.json; ky 2 needs Node 22): one `ky(url, options)` per
//   call, with ky's built-in retry.
// Configuration:
//   ky(url, { method, headers, body, retry: { limit: 3 }, timeout: 10000 }), the rest of
//   `retry` ky's defaults (methods, statusCodes, afterStatusCodes, delay, no jitter,
//   retryOnTimeout false); throwHttpErrors left true.
//
// What ky 1.14.3 documents, quoted from its README,
// target/conformance/node/node_modules/ky/readme.md (section `retry`):
// - Defaults: "`limit`: `2`", "`methods`: `get` `put` `head` `delete` `options` `trace`"
//   (no POST), statusCodes 408 413 429 500 502 503 504, afterStatusCodes 413 429 503.
//   -> with limit 3, at most 4 attempts.
// - Backoff: "By default, the delay is calculated with `0.3 * (2 ** (attemptCount - 1)) *
//   1000`. The delay increases exponentially." -> 300 ms, 600 ms, 1200 ms.
// - Jitter: "Set to `true` to use full jitter" (default `undefined`: none here). "**Note:**
//   Jitter is not applied when the server provides a `Retry-After` header, as the server's
//   explicit timing should be respected."
// - Retry-After: "If the response provides an HTTP status contained in `afterStatusCodes`,
//   Ky will wait until the date, timeout, or timestamp given in the" Retry-After "header
//   has passed to retry the request. If `Retry-After` is missing, the non-standard"
//   RateLimit-Reset "header is used in its place as a fallback. If the provided status code
//   is not in the list, the" Retry-After "header will be ignored."
//   "If `maxRetryAfter` is set to `undefined`, it will use `options.timeout`." The code
//   disagrees (target/conformance/node/node_modules/ky/distribution/utils/normalize.js):
//   the default is "maxRetryAfter: Number.POSITIVE_INFINITY," so a Retry-After is never
//   capped. In target/conformance/node/node_modules/ky/distribution/core/Ky.js a numeric
//   value is seconds unless "// A large number is treated as a timestamp (fixed threshold
//   protects against clock skew)"; a 413 without Retry-After is not retried.
// - Timeout: "Timeout in milliseconds for getting a response, including any retries." In
//   the code each attempt's fetch gets its own timer (ky/distribution/utils/timeout.js,
//   called per attempt), and "By default, retries are not triggered following a" timeout.
// - Out of retries: ky rejects with an HTTPError (printed as `status <code>` of its
//   response).
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/ky_retry.mjs URL

import { ATTEMPT_TIMEOUT_MS, load, readCall, reportError, reportStatus, run } from './_contract.mjs';

run(async () => {
  const ky = (await load('ky')).default;
  const call = readCall();
  try {
    const response = await ky(call.url, {
      method: call.method,
      headers: call.headers,
      body: call.bodyOrUndefined,
      retry: { limit: 3 },
      timeout: ATTEMPT_TIMEOUT_MS,
    });
    await reportStatus(response.status);
  } catch (error) {
    if (error.response) await reportStatus(error.response.status);
    reportError(error);
  }
});
