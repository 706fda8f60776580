'use strict';
// retrylab for Node: serve a scenario to a client under test and read the CLI's judgement.
//
//   const { serve } = require('retrylab');
//   test('the orders client honours Retry-After', async (t) => {
//     const served = await serve('orders-429.yaml', { t });
//     await createOrder(served.url('api'));
//     await served.assertPassed();   // the verdicts and the timeline in the message
//   });
//
// A thin wrapper around `retrylab serve --until-eof --format json`: it starts the CLI in a
// process group of its own, reads the URLs it prints, closes its standard input when the
// client is done and parses the JSON it then prints (the run as `retrylab run --format json`
// writes one). Every verdict is the CLI's. Only Node's standard library is used.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { AssertionError } = require('node:assert');

/** How long the CLI may take to print its URLs. */
const STARTUP_TIMEOUT_MS = 30_000;
/** How long the CLI may take to judge once told the client is done. */
const JUDGE_TIMEOUT_MS = 60_000;
/** How long a stopped CLI gets after SIGTERM before its group is sent SIGKILL. */
const KILL_GRACE_MS = 2_000;

const INSTALL_HINT =
  'install the retrylab wheel (`pip install retrylab-<version>-*.whl`, built by ' +
  'python/build-wheel, puts `retrylab` on PATH), or `cargo install retrylab --features cli`, ' +
  'or set RETRYLAB_BIN to its path';

/** The CLI could not be found or started, or did not behave as documented. */
class RetrylabError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RetrylabError';
  }
}

/** The scenario did not load: the message holds the CLI's located errors. */
class ScenarioError extends RetrylabError {
  constructor(message) {
    super(message);
    this.name = 'ScenarioError';
  }
}

/** Every group still being served, stopped if the process exits without stopping them.
 * SIGTERM, not SIGKILL: serve catches it and kills the command client it started, which
 * runs in a process group of its own that no signal to serve's group reaches. */
const live = new Set();
process.on('exit', () => {
  for (const pid of live) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

function executable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The `retrylab` executable: RETRYLAB_BIN when set, else the first on PATH. Throws a
 * RetrylabError saying what to install when there is none.
 * @returns {string}
 */
function findBinary() {
  const explicit = process.env.RETRYLAB_BIN;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new RetrylabError(`RETRYLAB_BIN=${explicit} is not an executable file; ${INSTALL_HINT}`);
  }
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'retrylab');
    if (executable(candidate)) return candidate;
  }
  throw new RetrylabError(`the \`retrylab\` executable was not found; ${INSTALL_HINT}`);
}

/** The CLI's report for people (the JSON's `summary`, as `retrylab serve` prints it): the
 * verdicts, each call's end and the timeline with its real instants. */
function failureMessage(file, result) {
  return `retrylab served ${file}:\n${String(result.summary || '').trimEnd()}`;
}

/** A scenario being served, then judged: what `serve()` resolves to. */
class Served {
  constructor(file, child, argv) {
    this.file = file;
    this.argv = argv;
    this.child = child;
    /** @type {Record<string, string>} every endpoint's base URL */
    this.urls = {};
    this._stdout = '';
    this._stderr = '';
    this._exit = null;
    this._result = null;
    this._finishing = null;
    // Set once Node has reaped the process: from then on its pid, and so its group's id,
    // may belong to another process, and is never signalled.
    this._reaped = false;
    child.on('exit', () => {
      this._reaped = true;
      live.delete(child.pid);
    });
    this._closed = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this._reaped = true;
        live.delete(child.pid);
        this._exit = { code, signal };
        resolve(this._exit);
      });
    });
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      this._stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      this._stderr += chunk;
    });
    // A client done before the CLI read its input, or a CLI gone: nothing to write anyway.
    child.stdin.on('error', () => {});
  }

  /** Resolves once the URL lines, ended by an empty line, have been read. */
  _listening() {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new RetrylabError(`\`${this.argv.join(' ')}\` printed no URLs in ${STARTUP_TIMEOUT_MS / 1000}s`));
      }, STARTUP_TIMEOUT_MS);
      const check = () => {
        const end = this._stdout.indexOf('\n\n');
        const ended = end >= 0 || this._stdout === '\n';
        if (!ended) return;
        const head = this._stdout.slice(0, Math.max(end, 0));
        this._stdout = this._stdout.slice(end >= 0 ? end + 2 : 1);
        for (const line of head.split('\n')) {
          const space = line.indexOf(' ');
          if (space > 0) this.urls[line.slice(0, space)] = line.slice(space + 1);
        }
        cleanup();
        resolve();
      };
      const exited = () => {
        cleanup();
        const { code } = this._exit;
        const errors = this._stderr.trim();
        if (code === 2 && errors) reject(new ScenarioError(errors));
        else reject(new RetrylabError(`\`${this.argv.join(' ')}\` exited with ${code} before listening: ${errors || '(nothing on standard error)'}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        this.child.stdout.off('data', check);
      };
      this.child.stdout.on('data', check);
      this._closed.then(() => {
        if (Object.keys(this.urls).length === 0 && !this._stdout.includes('\n\n')) exited();
      });
      this.child.on('error', (error) => {
        cleanup();
        reject(new RetrylabError(`cannot start ${this.argv[0]}: ${error.message}; ${INSTALL_HINT}`));
      });
      check();
    });
  }

  /**
   * The base URL of endpoint `name` (`http://127.0.0.1:<port>`).
   * @param {string} name
   * @returns {string}
   */
  url(name) {
    const url = this.urls[name];
    if (url === undefined) {
      const known = Object.keys(this.urls).sort().join(', ') || 'none';
      throw new RetrylabError(`${this.file} has no endpoint \`${name}\` (its endpoints: ${known})`);
    }
    return url;
  }

  /**
   * Tells the CLI the client is done (closes its standard input) and resolves to its
   * judgement, the JSON of `retrylab run --format json` for one run. Bounded: a CLI that
   * has not judged in time is stopped and the promise rejects.
   */
  finish() {
    if (!this._finishing) this._finishing = this._finish();
    return this._finishing;
  }

  async _finish() {
    this.child.stdin.end();
    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve(null), JUDGE_TIMEOUT_MS);
    });
    const exit = await Promise.race([this._closed, timedOut]);
    clearTimeout(timer);
    if (exit === null) {
      await this.stop();
      throw new RetrylabError(`\`${this.argv.join(' ')}\` had not judged ${JUDGE_TIMEOUT_MS / 1000}s after the client was done; it was stopped`);
    }
    if (exit.code !== 0 && exit.code !== 1) {
      throw new RetrylabError(`\`${this.argv.join(' ')}\` exited with ${exit.code ?? exit.signal}: ${this._stderr.trim()}`);
    }
    try {
      this._result = JSON.parse(this._stdout);
    } catch (error) {
      throw new RetrylabError(`\`${this.argv.join(' ')}\` printed no JSON (${error.message}): ${this._stdout.slice(0, 2000)} ${this._stderr}`);
    }
    return this._result;
  }

  /** The CLI's judgement (finishing first if the client has not been declared done). */
  async result() {
    return this._result ?? this.finish();
  }

  /** Rejects with an AssertionError carrying the verdicts and the timeline unless every
   * verdict passed. */
  async assertPassed() {
    const result = await this.result();
    if (result.passed !== true) {
      const error = new AssertionError({ message: failureMessage(this.file, result) });
      error.result = result;
      throw error;
    }
  }

  /** Stops serving without a judgement: SIGTERM to the CLI's process group, SIGKILL after
   * a grace, and waits for it (serve starts no process in its own group: a command client
   * gets a group of its own, which serve stops itself). Safe to call at any time, and
   * again. */
  async stop() {
    if (this.child.pid === undefined) return; // it never started
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      if (this._reaped) break;
      try {
        process.kill(-this.child.pid, signal);
      } catch {
        break; // the group is gone
      }
      let timer;
      const graceOver = new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), KILL_GRACE_MS);
      });
      const exit = await Promise.race([this._closed, graceOver]);
      clearTimeout(timer);
      if (exit !== null) break;
    }
    live.delete(this.child.pid);
  }
}

/**
 * Serves a scenario file on 127.0.0.1 (each endpoint on a port the system picks) and resolves
 * once every endpoint listens.
 * @param {string} file the scenario (relative to the working directory, as for the CLI)
 * @param {{ t?: { after(fn: () => unknown): void }, calls?: number, idle?: string,
 *   firstRequest?: string, timeout?: string, bin?: string }} [options] `t`: a node:test
 *   context, whose `after` stops the server whatever the test did; the others are `retrylab
 *   serve`'s options (`--calls`, `--idle`, `--first-request`, `--timeout`).
 * @returns {Promise<Served>}
 */
async function serve(file, options = {}) {
  const bin = options.bin || findBinary();
  const argv = [bin, 'serve', '--until-eof', '--format', 'json'];
  for (const [flag, value] of [
    ['--calls', options.calls],
    ['--idle', options.idle],
    ['--first-request', options.firstRequest],
    ['--timeout', options.timeout],
  ]) {
    if (value !== undefined && value !== null) argv.push(flag, String(value));
  }
  argv.push(String(file));
  // `detached`: a process group of its own, stopped as one.
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.pid !== undefined) live.add(child.pid);
  const served = new Served(String(file), child, argv);
  if (options.t) options.t.after(() => served.stop());
  try {
    await served._listening();
  } catch (error) {
    await served.stop();
    throw error;
  }
  return served;
}

module.exports = { serve, findBinary, failureMessage, Served, RetrylabError, ScenarioError };
