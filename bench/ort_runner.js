#!/usr/bin/env node
// ONNX Runtime (CPU, npm onnxruntime-node) as a bench peer; the protocol of
// bench/c/ait_runner.c: "out DIR" -> "ok", "time N" -> "t MS ...", "cpu N" ->
// "t MS ..." (each run's process CPU time, user + system, every thread),
// startup "ready", failures "error MESSAGE".
// Session: graph optimisation level "all", intra-op threads THREADS, inter-op 1,
// sequential execution.
// With --bind, every output is bound to a buffer allocated once (session.run's
// `fetches` given preallocated tensors, shaped by a first run): ORT writes the
// outputs into those buffers. At startup the bound run is checked: our buffers
// must hold the unbound run's values. (onnxruntime-node 1.30 still hands back
// each output as a fresh copy, a new ArrayBuffer per output and run: binding
// saves ORT's own output allocation, not that copy.)
// usage: node bench/ort_runner.js MODEL.onnx INPUT_DIR THREADS [--bind]
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require('onnxruntime-node');
const { readNpy, writeNpy } = require('./npy.js');

function fail(what, err) {
  process.stdout.write(`error ${what}: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
}

async function main() {
  const [model, inputDir, threadsArg, bindArg] = process.argv.slice(2);
  const threads = parseInt(threadsArg, 10);
  if (!model || !inputDir || !(threads > 0) || (bindArg !== undefined && bindArg !== '--bind')) {
    fail('usage', 'ort_runner.js MODEL.onnx INPUT_DIR THREADS [--bind]');
  }
  let session;
  try {
    session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1,
      executionMode: 'sequential', executionProviders: ['cpu'],
    });
  } catch (e) { fail(model, e); }
  const feeds = {};
  for (const name of session.inputNames) {
    const file = path.join(inputDir, `${name}.npy`);
    try {
      const a = readNpy(fs.readFileSync(file));
      feeds[name] = new ort.Tensor(a.type, a.data, a.shape);
    } catch (e) { fail(file, e); }
  }
  const fetches = bindArg ? await bindOutputs(session, feeds) : undefined;
  const run = () => (fetches ? session.run(feeds, fetches) : session.run(feeds));
  process.stdout.write('ready\n');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'out' && arg) {
      let res;
      try { res = await run(); } catch (e) { fail('run', e); }
      for (const name of session.outputNames) {
        const file = path.join(arg, `${name}.npy`);
        try { fs.writeFileSync(file, writeNpy(res[name])); } catch (e) { fail(file, e); }
      }
      process.stdout.write('ok\n');
    } else if ((cmd === 'time' || cmd === 'cpu') && parseInt(arg, 10) > 0) {
      const times = [];
      for (let r = 0; r < parseInt(arg, 10); r++) {
        if (cmd === 'cpu') {
          const c0 = process.cpuUsage();
          try { await run(); } catch (e) { fail('run', e); }
          const c = process.cpuUsage(c0);
          times.push((c.user + c.system) / 1e3);
          continue;
        }
        const t0 = process.hrtime.bigint();
        try { await run(); } catch (e) { fail('run', e); }
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      process.stdout.write(`t ${times.map((t) => t.toFixed(4)).join(' ')}\n`);
    } else {
      fail('command', line);
    }
  }
}

// Preallocated output tensors, shaped as a first (unbound) run's outputs; one bound
// run must give back those very buffers with the same values, else we fail.
async function bindOutputs(session, feeds) {
  let free, bound;
  try { free = await session.run(feeds); } catch (e) { fail('run', e); }
  const fetches = {};
  for (const name of session.outputNames) {
    const t = free[name];
    fetches[name] = new ort.Tensor(t.type, new t.data.constructor(t.data.length), t.dims);
  }
  try { bound = await session.run(feeds, fetches); } catch (e) { fail('bound run', e); }
  for (const name of session.outputNames) {
    const got = fetches[name].data, want = free[name].data;
    if (bound[name].data.length !== want.length) fail('bind', `output ${name} has a different size when bound`);
    for (let i = 0; i < want.length; i++) {
      if (!(got[i] === want[i] || (Number.isNaN(got[i]) && Number.isNaN(want[i])))) {
        fail('bind', `output ${name}: its bound buffer differs from the unbound run at ${i}`);
      }
    }
  }
  return fetches;
}

main();
