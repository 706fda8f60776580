// The command-client contract, shared by the Node programs of this folder.
//
// Not a client itself: each `<library>.mjs` beside it imports it. See ../README.md for the
// contract:
// - argv[2] (node's argv[1] is the script; or RETRYLAB_URL) is the full URL of the
//   operation; RETRYLAB_METHOD its method (GET when absent); RETRYLAB_CALL the 0-based
//   call index, forwarded as the header `x-retrylab-call` on every attempt;
//   RETRYLAB_IDEMPOTENCY_KEY and RETRYLAB_IDEMPOTENCY_HEADER, when set, one more header,
//   the same on every attempt of the call; the request body on stdin (possibly empty).
// - One line on stdout, `status <code>` or `error <kind>: <message>`; exit 0 when the
//   final answer is 2xx, 1 otherwise.
//
// Where the packages come from: the programs are run as `node <program> URL` with no
// NODE_PATH, from any working directory, and find the pinned packages that
// tests/conformance/install put in target/conformance/node/node_modules, relative to this
// file (four folders up is the repository). When NODE_PATH is set, its first entry (a
// node_modules folder) is used instead. ESM resolution ignores NODE_PATH and a program's
// folder has no node_modules, so `load()` resolves the package there and imports the file.
// It uses Node's standard library only, so it says nothing about any client's retries.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The node_modules folder the packages are loaded from. */
export const NODE_MODULES =
  (process.env.NODE_PATH ?? '').split(path.delimiter).find(Boolean) ??
  path.resolve(here, '../../../../target/conformance/node/node_modules');

const require = createRequire(import.meta.url);

/** The timeout every program gives its library for one attempt, in milliseconds. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** Imports the pinned package `name` (its module namespace). */
export async function load(name) {
  let file;
  try {
    file = require.resolve(name, { paths: [NODE_MODULES] });
  } catch (error) {
    reportFailure(
      'setup',
      `cannot find ${name} in ${NODE_MODULES} (run tests/conformance/install): ${error.message}`,
    );
  }
  return import(pathToFileURL(file).href);
}

/** The version of the pinned package `name`, from its package.json. */
export function versionOf(name) {
  const file = path.join(NODE_MODULES, name, 'package.json');
  return JSON.parse(readFileSync(file, 'utf8')).version;
}

/** Reads the call from argv, the environment and stdin. */
export function readCall() {
  const url = process.argv[2] || process.env.RETRYLAB_URL || '';
  if (!url) reportFailure('usage', 'no URL (argv[1] or RETRYLAB_URL)');
  const index = process.env.RETRYLAB_CALL ?? '0';
  const headers = { 'x-retrylab-call': index };
  const key = process.env.RETRYLAB_IDEMPOTENCY_KEY;
  const keyHeader = process.env.RETRYLAB_IDEMPOTENCY_HEADER;
  if (key && keyHeader) headers[keyHeader] = key;
  let body = Buffer.alloc(0);
  if (!process.stdin.isTTY) {
    try {
      body = readFileSync(0);
    } catch {
      // No stdin at all (closed): an empty body.
    }
  }
  return {
    url,
    method: (process.env.RETRYLAB_METHOD || 'GET').toUpperCase(),
    index,
    headers,
    body,
    /** The body, or undefined when it is empty (a GET with no body sends none). */
    bodyOrUndefined: body.length > 0 ? body : undefined,
  };
}

function oneLine(text) {
  return String(text).split(/\s+/).filter(Boolean).join(' ');
}

function finish(line, code) {
  // Exit once stdout is flushed (a pipe is asynchronous in Node).
  process.stdout.write(`${line}\n`, () => process.exit(code));
  setTimeout(() => process.exit(code), 1000).unref();
}

/** Prints `status <code>` and exits 0 for a 2xx, 1 otherwise. */
export function reportStatus(status) {
  finish(`status ${status}`, status >= 200 && status < 300 ? 0 : 1);
  return new Promise(() => {});
}

/** Prints `error <kind>: <message>` and exits 1. */
export function reportFailure(kind, message) {
  finish(`error ${kind}: ${oneLine(message)}`, 1);
  throw new ExitSignal();
}

/** Prints `error <kind>: <message>` for an error (its name or code), and exits 1. */
export function reportError(error, kind) {
  const name = kind ?? error?.code ?? error?.name ?? 'Error';
  const cause = error?.cause ? ` (cause: ${error.cause.code ?? error.cause.message ?? error.cause})` : '';
  return reportFailure(name, `${error?.message ?? error}${cause}`);
}

/** Thrown by reportFailure so that nothing after it runs while stdout drains. */
class ExitSignal extends Error {}

/** Runs `main`, reporting what it throws (other than the exit signal) as an error. */
export function run(main) {
  main().catch((error) => {
    if (!(error instanceof ExitSignal)) reportError(error);
  });
}
