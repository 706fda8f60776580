'use strict';
// axios with axios-retry against a retrylab scenario, through the Node helper.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { serve } = require('..');
const { axios, axiosRetry, skip } = require('../pinned-clients');

const ORDERS = path.join(__dirname, '..', '..', 'docs', 'examples', 'orders-429.yaml');

/** The client under test: POST /orders on an axios instance that axios-retry wraps; an
 * answer that is still an error after the retries is returned, not thrown. */
async function createOrder(baseURL, retryOptions) {
  const client = axios.create({ baseURL, timeout: 10_000, proxy: false });
  axiosRetry(client, { retries: 3, retryCondition: axiosRetry.isRetryableError, ...retryOptions });
  return client.post('/orders', { sku: 's-1' }).catch((error) => error.response ?? Promise.reject(error));
}

test('axios-retry honours Retry-After', { skip }, async (t) => {
  const served = await serve(ORDERS, { t });
  await createOrder(served.url('api'), { retryDelay: axiosRetry.exponentialDelay });
  await served.assertPassed();
});

test('axios-retry with a fixed delay fails, with the timeline in the message', { skip }, async (t) => {
  const served = await serve(ORDERS, { t });
  await createOrder(served.url('api'), { retryDelay: () => 50 }); // ignores Retry-After
  await assert.rejects(served.assertPassed(), (error) => {
    assert.match(error.message, /FAIL retry_after/);
    assert.match(error.message, /timeline \(\d+ attempts\):\n[\s\S]*POST \/orders {2}-> 429/);
    return true;
  });
});

test('axios-retry with too few retries fails', { skip }, async (t) => {
  const served = await serve(ORDERS, { t });
  await createOrder(served.url('api'), { retries: 1, retryDelay: axiosRetry.exponentialDelay });
  await assert.rejects(served.assertPassed(), /FAIL attempts/);
});
