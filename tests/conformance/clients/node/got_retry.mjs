// Library: got 14.6.6 (npm `got@14.6.6`, tests/conformance/package-lock.json; got 15 and
//   16 need Node 22): one `got(url, options)` per call, with got's built-in retry.
// Configuration:
//   got(url, { method, headers, body, retry: { limit: 3 }, timeout: { request: 10000 } }),
//   the rest of `retry` got's defaults (methods, statusCodes, errorCodes, noise 100,
//   backoffLimit Infinity, maxRetryAfter undefined); throwHttpErrors left true.
//
// What got 14.6.6 documents, quoted from its README,
// target/conformance/node/node_modules/got/readme.md, and from the docstring of
// `Options.retry` in target/conformance/node/node_modules/got/dist/source/core/options.js
// (the package ships no documentation/ folder):
// - "By default, Got will retry on failure. To disable this option, set"
//   `options.retry.limit` to 0. Defaults (options.js): `limit: 2`, methods GET, PUT, HEAD,
//   DELETE, OPTIONS, TRACE (no POST), statusCodes 408, 413, 429, 500, 502, 503, 504, 521,
//   522, 524. -> with limit 3, at most 4 attempts.
// - "By default, it retries *only* on the specified methods, status codes, and on these
//   network errors:" ETIMEDOUT, ECONNRESET, EADDRINUSE, ECONNREFUSED, EPIPE, ENOTFOUND,
//   ENETUNREACH, EAI_AGAIN.
// - Backoff and jitter: "Delays between retries counts with function `1000 *
//   Math.pow(2, retry) + Math.random() * 100`, where `retry` is attempt number (starts from
//   1)." That would be 2 s, 4 s, 8 s; the code
//   (target/conformance/node/node_modules/got/dist/source/core/calculate-retry-delay.js)
//   computes "Math.min(((2 ** (attemptCount - 1)) * 1000), retryOptions.backoffLimit) +
//   noise" with noise "Math.random() * retryOptions.noise" -> 1 s, 2 s, 4 s, plus 0 to
//   100 ms. The docstring and the code disagree by a factor of 2.
// - Retry-After: "__Note__: If `maxRetryAfter` is set to `undefined`, it will use
//   `options.timeout`." and "__Note__: If [`Retry-After`]" "header is greater than
//   `maxRetryAfter`, it will cancel the request." Here that is timeout.request, 10 s: a
//   Retry-After over 10 s is not retried. In the code, Retry-After is read for any
//   retried status, as seconds or as a date (target/conformance/node/node_modules/got/dist/source/core/index.js:
//   "retryAfter = Date.parse(response.headers['retry-after']) - Date.now();", a past date
//   becoming 1 ms), and replaces the backoff; a 413 without Retry-After is not retried.
// - Timeout: `timeout.request` "starts when the request is initiated and ends when the
//   response's end event fires." (each attempt is a new request).
// - Out of retries: got rejects with an HTTPError (printed as `status <code>` of its
//   response).
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/got_retry.mjs URL

import { ATTEMPT_TIMEOUT_MS, load, readCall, reportError, reportStatus, run } from './_contract.mjs';

run(async () => {
  const got = (await load('got')).default;
  const call = readCall();
  try {
    const response = await got(call.url, {
      method: call.method,
      headers: call.headers,
      body: call.bodyOrUndefined,
      retry: { limit: 3 },
      timeout: { request: ATTEMPT_TIMEOUT_MS },
    });
    await reportStatus(response.statusCode);
  } catch (error) {
    if (error.response) await reportStatus(error.response.statusCode);
    reportError(error);
  }
});
