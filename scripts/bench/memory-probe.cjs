// Preloaded by scripts/bench/memory.ts (`node --require`) into the server it measures, and into every
// thread the server starts: on SIGUSR2 the main thread asks each thread for its V8 heap over a
// BroadcastChannel and writes them, with the process's own figures and its WebAssembly memories'
// resident pages (from /proc/self/smaps), to MEMORY_PROBE_FILE. Plain CommonJS: `--require` is the
// preload a worker thread inherits (`--import` is not run in threads by Node 20), and a thread
// started with its own execArgv (piscina's) is given it here.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const v8 = require('node:v8');
const threads = require('node:worker_threads');
const { syncBuiltinESMExports } = require('node:module');

const CHANNEL = 'memory-probe';
const MB = 1024 * 1024;
const mb = (bytes) => Math.round((bytes / MB) * 10) / 10;

/** One thread's heap: V8's own figures. */
function heapOf(label) {
  const h = v8.getHeapStatistics();
  return { threadId: threads.threadId, label, heapTotal: mb(h.total_heap_size), heapUsed: mb(h.used_heap_size), external: mb(h.external_memory), malloced: mb(h.malloced_memory) };
}

/**
 * Resident pages of the process's mappings, by kind. A WebAssembly memory is a reservation of 8 GiB
 * or more (V8 on x64, its guard region included): its usable part is a read-write mapping right
 * before an inaccessible one of that size, so each memory shows as such a pair. `largest`: the
 * biggest other mappings, to read by hand.
 */
function mappings() {
  const all = [];
  let current = null;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      current = { start: BigInt('0x' + head[1]), end: BigInt('0x' + head[2]), perms: head[3], path: head[4], rss: 0 };
      all.push(current);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current) current.rss = Number(rss[1]) * 1024;
  }
  const GUARD = 4n * 1024n * 1024n * 1024n;
  const wasm = new Set();
  for (let i = 1; i < all.length; i++) {
    const m = all[i];
    const before = all[i - 1];
    if (m.perms.startsWith('---') && m.end - m.start >= GUARD && before.end === m.start && before.perms.startsWith('rw') && !before.path) wasm.add(before);
  }
  let anon = 0;
  let file = 0;
  const others = [];
  for (const m of all) {
    if (wasm.has(m)) continue;
    if (m.path && !m.path.startsWith('[')) file += m.rss;
    else {
      anon += m.rss;
      others.push({ mb: mb(m.rss), size: mb(Number(m.end - m.start)), perms: m.perms, path: m.path });
    }
  }
  others.sort((a, b) => b.mb - a.mb);
  return { wasmMemories: [...wasm].map((m) => mb(m.rss)).sort((a, b) => b - a), anonOther: mb(anon), fileBacked: mb(file), largest: others.slice(0, 25) };
}

if (threads.isMainThread) {
  // Threads started with an execArgv of their own (piscina passes one) get the probe too.
  const Original = threads.Worker;
  const labels = new Map();
  class Worker extends Original {
    constructor(filename, options = {}) {
      const execArgv = options.execArgv ? [...options.execArgv, '--require', __filename] : undefined;
      super(filename, execArgv ? { ...options, execArgv } : options);
      const name = String(filename);
      labels.set(this.threadId, name.includes('piscina') ? 'pdf' : name.includes('thread-entry') ? 'import' : 'thread');
    }
  }
  threads.Worker = Worker;
  syncBuiltinESMExports();

  process.on('SIGUSR2', () => {
    const channel = new threads.BroadcastChannel(CHANNEL);
    const replies = [];
    channel.onmessage = (event) => {
      if (event.data.type === 'heap') replies.push({ ...event.data.heap, label: labels.get(event.data.heap.threadId) ?? 'thread' });
    };
    channel.postMessage({ type: 'ask' });
    setTimeout(() => {
      channel.close();
      const u = process.memoryUsage();
      const report = {
        at: new Date().toISOString(),
        rss: mb(u.rss),
        main: { ...heapOf('main'), arrayBuffers: mb(u.arrayBuffers) },
        threads: replies.sort((a, b) => a.threadId - b.threadId),
        ...mappings(),
      };
      writeFileSync(process.env.MEMORY_PROBE_FILE ?? 'memory-probe.json', JSON.stringify(report));
    }, 500).unref();
  });
} else {
  const channel = new threads.BroadcastChannel(CHANNEL);
  channel.onmessage = (event) => {
    if (event.data.type === 'ask') channel.postMessage({ type: 'heap', heap: heapOf('thread') });
  };
  channel.unref(); // never what keeps a thread alive
}
