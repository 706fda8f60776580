'use strict';
// What the helper promises besides the judgement, which is the CLI's.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { serve, ScenarioError, RetrylabError } = require('..');

const ORDERS = path.join(__dirname, '..', '..', 'docs', 'examples', 'orders-429.yaml');

/** One POST with node:http and no retry: its status. */
function post(url) {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/orders`, { method: 'POST', agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode));
    });
    request.on('error', reject);
    request.end();
  });
}

test('result() is the CLI JSON', async (t) => {
  const served = await serve(ORDERS, { t });
  assert.match(served.url('api'), /^http:\/\/127\.0\.0\.1:\d+$/);
  const codes = [];
  for (let i = 0; i < 3; i += 1) codes.push(await post(served.url('api')));
  assert.deepStrictEqual(codes, [429, 503, 201]);
  const result = await served.result();
  const checks = Object.fromEntries(result.verdicts.map((v) => [v.check, v.judgement]));
  // Three attempts, but the second came at once: the CLI failed `retry_after`.
  assert.strictEqual(checks.attempts, 'passed');
  assert.strictEqual(checks.retry_after, 'failed');
  assert.strictEqual(result.passed, false);
  assert.ok(result.trace);
});

test('a scenario that does not load rejects with its located errors', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrylab-node-'));
  const bad = path.join(dir, 'bad.yaml');
  fs.writeFileSync(bad, 'version: 1\nname: bad\nendpoints: { api: {} }\noperation: { endpoint: api }\nexpect: { atempts: 2 }\n');
  try {
    await assert.rejects(serve(bad), (error) => {
      assert.ok(error instanceof ScenarioError, error);
      assert.ok(error.message.includes(`${bad}:5:`) && error.message.includes('expect.atempts'), error.message);
      return true;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('stop() ends the process group and frees the port', async () => {
  const served = await serve(ORDERS);
  const url = served.url('api');
  await served.stop();
  assert.throws(() => process.kill(-served.child.pid, 0), { code: 'ESRCH' });
  await assert.rejects(post(url), { code: 'ECONNREFUSED' });
});

test('an unknown endpoint names the known ones', async (t) => {
  const served = await serve(ORDERS, { t });
  assert.throws(() => served.url('orders'), /its endpoints: api/);
});

test('a missing binary says what to install', async () => {
  const saved = process.env.RETRYLAB_BIN;
  process.env.RETRYLAB_BIN = path.join(os.tmpdir(), 'no-such-retrylab');
  try {
    await assert.rejects(serve(ORDERS), (error) => error instanceof RetrylabError && /install the retrylab wheel/.test(error.message));
  } finally {
    if (saved === undefined) delete process.env.RETRYLAB_BIN;
    else process.env.RETRYLAB_BIN = saved;
  }
});

/** Whether `pid` runs (a zombie, ended but not yet reaped, does not). */
function alive(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(') ') + 2, stat.lastIndexOf(') ') + 3);
  return state !== 'Z' && state !== 'X';
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a process that exits while serving leaves no command client behind', async (t) => {
  if (!fs.existsSync('/proc/self/stat')) {
    t.skip('no /proc here to tell whether a process still runs');
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrylab-node-exit-'));
  fs.writeFileSync(path.join(dir, 'long-client.yaml'), [
    'version: 1',
    'name: long-client',
    'endpoints: { api: { script: [ { status: 200 } ] } }',
    'operation: { endpoint: api }',
    'client:',
    "  command: [sh, -c, 'sleep 60 & echo $! > pid.tmp && mv pid.tmp pid; wait']",
    '  cwd: .',
    '  timeout: 120s',
    'expect: { attempts: 1, outcome: success }',
    '',
  ].join('\n'));
  const pidFile = path.join(dir, 'pid');
  // A Node process that serves the file, waits for its client to start, and exits without
  // stopping it: the helper's exit hook is all that is left to stop serve and its client.
  const script = `
    const fs = require('node:fs');
    require(${JSON.stringify(path.join(__dirname, '..'))})
      .serve(${JSON.stringify(path.join(dir, 'long-client.yaml'))})
      .then(async () => {
        for (let i = 0; i < 600 && !fs.existsSync(${JSON.stringify(pidFile)}); i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        process.exit(0);
      });`;
  try {
    const child = require('node:child_process').spawnSync(process.execPath, ['-e', script], {
      timeout: 60_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    assert.strictEqual(child.status, 0, String(child.stderr));
    assert.ok(fs.existsSync(pidFile), 'the client did not start within 30 s');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    // Bounded: 10 s for serve to take the SIGTERM and kill the client's group.
    for (let i = 0; i < 200 && alive(pid); i += 1) await sleep(50);
    if (alive(pid)) {
      process.kill(pid, 'SIGKILL');
      assert.fail(`the client's child ${pid} outlived the process that served it`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
