'use strict';
// The pinned client libraries of the examples (node/package-lock.json), installed by
// node/install into target/node/node_modules (RETRYLAB_NODE_MODULES overrides the folder).
// When they are not there, `skip` says why, for node:test to print.
const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

const root = path.join(__dirname, '..');
const modules = process.env.RETRYLAB_NODE_MODULES || path.join(root, 'target', 'node', 'node_modules');

function load() {
  try {
    const requireThere = createRequire(path.join(modules, 'index.js'));
    const axios = requireThere('axios');
    const retry = requireThere('axios-retry');
    return { axios: axios.default ?? axios, axiosRetry: retry.default ?? retry, skip: false };
  } catch (error) {
    const recorded = path.join(root, 'target', 'node', 'skipped');
    const why = fs.existsSync(recorded) ? fs.readFileSync(recorded, 'utf8').split('\n')[0] : `run node/install first (${error.code || error.message})`;
    const shown = modules.startsWith(root) ? path.relative(root, modules) : modules;
    return { skip: `axios and axios-retry are not installed in ${shown}: ${why}` };
  }
}

module.exports = { ...load(), root };
