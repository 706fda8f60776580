// Library: @grpc/grpc-js 1.14.7 with @grpc/proto-loader 0.8.1 (npm, pinned in
//   tests/conformance/package-lock.json): the pure-JavaScript gRPC client, its retries
//   configured by a service config given as the channel option `grpc.service_config`; one
//   unary call per logical call, on one client (one channel) that every call of the
//   process shares. The proto, tests/proto/retrylab/test/v1/echo.proto, is loaded at run
//   time by proto-loader: no generated code.
// Configuration: ../grpc/service-config.json (the same file the grpcio program reads):
//   retryPolicy { maxAttempts: 9, initialBackoff: 1s, maxBackoff: 2s, backoffMultiplier: 2,
//   retryableStatusCodes: [UNAVAILABLE] } for the service retrylab.test.v1.Echo, and
//   retryThrottling { maxTokens: 20, tokenRatio: 0.5 }. maxAttempts 9 is on purpose: gRFC A6
//   caps it at 5, and the suite checks that the client does.
//   Channel options: grpc.enable_retries 1 (the default, said out loud),
//   grpc.service_config_disable_resolution 1 (the config given here is the one used).
//   Each call has a 20 s deadline (all its attempts).
//
// What @grpc/grpc-js 1.14.7 documents, quoted from
// target/conformance/node/node_modules/@grpc/grpc-js/README.md: "Documentation
// specifically for the `@grpc/grpc-js` package is currently not available."; under
// "Supported Channel Options" it lists `grpc.service_config`, `grpc.enable_retries`,
// `grpc.per_rpc_retry_buffer_size`, `grpc.retry_buffer_size`,
// `grpc.service_config_disable_resolution` and `grpc-node.retry_max_attempts_limit`. The
// service config's retryPolicy and retryThrottling are gRFC A6's: the profile
// (../../profiles/grpc-js.yaml) judges the client against A6 with this config.
// The code, build/src/retrying-call.js (src/retrying-call.ts beside it):
// - `DEFAULT_MAX_ATTEMPTS_LIMIT = 5`, `Math.min(retryPolicy.maxAttempts, maxAttemptsLimit)`;
// - the jitter: "Jitter of +-20% is applied", `Math.random() * (1.2 - 0.8) + 0.8`;
// - the pushback: `getPushback()` returns `parseInt(mdValue[0])` in a try whose catch
//   returns -1; parseInt throws nothing, so a value that is not a number is NaN, which
//   `maybeRetryCall()` neither stops on (`pushback < 0` is false) nor leaves to the
//   backoff: it becomes the retry's delay, `setTimeout(..., NaN)`, which Node runs at once;
// - a negative pushback: `this.state = 'TRANSPARENT_ONLY'`, no retry;
// - throttling: a `RetryThrottler` per channel target (internal-channel.js,
//   RETRY_THROTTLER_MAP), `addCallFailed()` -1, `addCallSucceeded()` +tokenRatio,
//   `canRetryCall()` while `tokens > maxTokens / 2`;
// - `grpc-previous-rpc-attempts` set on every retry's metadata.
//
// Calls: RETRYLAB_CALLS of them, one after another (the profile runs the program once per
// run, `per: run`, so that retry throttling, kept per channel, sees them all); each sends
// `x-retrylab-call: <n>` as metadata on every attempt.
// Output: one line, `status OK` for one call, or `statuses OK, UNAVAILABLE, ...` for
// several (the gRPC status names); exit 0 when every call ended OK, 1 otherwise.
//
// Contract: ../README.md. Run with node (no NODE_PATH needed):
//   node tests/conformance/clients/node/grpc_js_retry.mjs URL

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { load, readCall, reportFailure, run } from './_contract.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVICE_CONFIG = path.resolve(here, '../grpc/service-config.json');
const PROTO_ROOT = path.resolve(here, '../../../proto');
/** The deadline of one call, all its attempts included, in milliseconds. */
const CALL_DEADLINE_MS = 20_000;

run(async () => {
  const grpcModule = await load('@grpc/grpc-js');
  const grpc = grpcModule.default ?? grpcModule;
  const loaderModule = await load('@grpc/proto-loader');
  const protoLoader = loaderModule.default ?? loaderModule;
  const call = readCall();
  const url = new URL(call.url);
  const calls = Number(process.env.RETRYLAB_CALLS || '1');
  const definition = protoLoader.loadSync('retrylab/test/v1/echo.proto', {
    includeDirs: [PROTO_ROOT],
  });
  const { Echo } = grpc.loadPackageDefinition(definition).retrylab.test.v1;
  if (url.pathname !== '/retrylab.test.v1.Echo/Say') {
    reportFailure('usage', `this program calls /retrylab.test.v1.Echo/Say, not ${url.pathname}`);
  }
  const config = JSON.stringify(JSON.parse(readFileSync(SERVICE_CONFIG, 'utf8')));
  const client = new Echo(url.host, grpc.credentials.createInsecure(), {
    'grpc.service_config': config,
    'grpc.enable_retries': 1,
    'grpc.service_config_disable_resolution': 1,
  });
  const statuses = [];
  for (let i = 0; i < calls; i += 1) {
    const metadata = new grpc.Metadata();
    metadata.set('x-retrylab-call', String(i));
    const deadline = new Date(Date.now() + CALL_DEADLINE_MS);
    const status = await new Promise((resolve) => {
      client.say({ text: `call ${i}` }, metadata, { deadline }, (error) => {
        if (error) {
          process.stderr.write(`call ${i}: ${grpc.status[error.code]}: ${error.details}\n`);
          resolve(grpc.status[error.code] ?? String(error.code));
        } else {
          resolve('OK');
        }
      });
    });
    statuses.push(status);
  }
  client.close();
  const word = statuses.length === 1 ? 'status' : 'statuses';
  const ok = statuses.every((s) => s === 'OK');
  process.stdout.write(`${word} ${statuses.join(', ')}\n`, () => process.exit(ok ? 0 : 1));
});
