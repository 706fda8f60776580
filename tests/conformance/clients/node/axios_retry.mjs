// Library: axios-retry 4.5.0 on axios 1.21.1 (npm `axios-retry@4.5.0`, `axios@1.21.1`,
//   tests/conformance/package-lock.json): one `client.request(...)` per call on an axios
//   instance that axios-retry has wrapped.
// Configuration:
//   axiosRetry(client, { retries: 3, retryDelay: axiosRetry.exponentialDelay,
//                        shouldResetTimeout: true }), retryCondition left at its default;
//   axios.create({ timeout: 10000, proxy: false }): with shouldResetTimeout each attempt
//   has its own 10 s.
//
// What axios-retry 4.5.0 documents, quoted from its README,
// target/conformance/node/node_modules/axios-retry/README.md:
// - Attempts: retries: "The number of times to retry before failing. 1 = One retry after
//   first failure" -> 3 retries, at most 4 attempts.
// - Statuses and methods: retryCondition defaults to isNetworkOrIdempotentRequestError: "By
//   default, it retries if it is a network error or a 5xx error on an idempotent request
//   (GET, HEAD, OPTIONS, PUT or DELETE)." -> a POST is not retried.
//   The source (target/conformance/node/node_modules/axios-retry/dist/esm/index.js) also
//   retries a 429: isRetryableError() is `error.response.status === 429 ||
//   (error.response.status >= 500 && error.response.status <= 599)`; and not a timeout
//   (`error.code !== 'ECONNABORTED'`).
// - Backoff: retryDelay: "Another option is exponentialDelay ([Exponential Backoff]"; the
//   source: "const calculatedDelay = 2 ** retryNumber * delayFactor;" with delayFactor
//   100 and retryNumber from 1 -> 200 ms, 400 ms, 800 ms.
// - Jitter: "const randomSum = delay * 0.2 * Math.random(); // 0-20% of the delay", added to
//   the larger of the backoff and Retry-After: a Retry-After of 1 s waits 1 to 1.2 s.
// - Retry-After (source): "const delay = Math.max(calculatedDelay, retryAfter(error));"
//   where retryAfter() reads seconds ("// if the retry after header is a number, convert
//   it to milliseconds") or a date ("// If the retry after header is a date, get the number
//   of milliseconds until that date"); no cap. `Retry-After: 0` reads as a date, in the
//   past: the backoff is used.
// - Timeout: "**Note:** Unless `shouldResetTimeout` is set, the plugin interprets the
//   request timeout as a global value, so it is not used for each retry but for the whole
//   request lifecycle."
// - Out of retries: axios rejects with the last error (printed as `status <code>` of its
//   response).
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/axios_retry.mjs URL

import { ATTEMPT_TIMEOUT_MS, load, readCall, reportError, reportStatus, run } from './_contract.mjs';

run(async () => {
  const axios = (await load('axios')).default;
  const retryModule = await load('axios-retry');
  const axiosRetry = retryModule.default?.default ?? retryModule.default;
  const call = readCall();
  const client = axios.create({ timeout: ATTEMPT_TIMEOUT_MS, proxy: false });
  axiosRetry(client, {
    retries: 3,
    retryDelay: axiosRetry.exponentialDelay,
    shouldResetTimeout: true,
  });
  try {
    const response = await client.request({
      url: call.url,
      method: call.method,
      headers: call.headers,
      data: call.bodyOrUndefined,
    });
    await reportStatus(response.status);
  } catch (error) {
    if (error.response) await reportStatus(error.response.status);
    reportError(error);
  }
});
