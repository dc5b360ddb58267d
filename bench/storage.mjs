// The archive backends side by side (#27): the same long session compacted 20 times with its
// archives in localStorage, then in IndexedDB, each in a fresh browser context. Reports the
// localStorage room left to the app, the archives' bytes in each store, and the time of one
// compaction (median, range). Runs in the page: `await measureBackend("indexedDB")`.
import init, { Archives, Compactor, LogStore } from "/pkg/context_compactor.js";
import { simulateIteration } from "/simulate.js";

const COMPACTIONS = 20;
const ITERATIONS_PER_COMPACTION = 8;
/** A code execution's output, as an agent that prints a table preview logs it: 72 KB. */
const PREVIEW = Array.from({ length: 1200 }, (_, i) => `${i},north,2026-03-${String((i % 28) + 1).padStart(2, "0")},${(i * 7919) % 100000}`).join("\n");

export async function measureBackend(archiveStore) {
  await init();
  localStorage.clear();
  const logs = new LogStore();
  const options = { provider: { type: "offline" }, contextWindowTokens: 200_000, recommendedUsage: 0, archiveStore };
  const compactor = new Compactor(logs, options);
  const times = [];
  const failures = [];
  for (let c = 0; c < COMPACTIONS; c++) {
    for (let i = 0; i < ITERATIONS_PER_COMPACTION; i++) {
      const n = logs.startIteration();
      simulateIteration(logs, n, c + 1);
      logs.appendExecution({ success: true, code: `print(preview(${n}))`, result: `${n}\n${PREVIEW}`, executionTime: 12 });
      logs.finishIteration();
    }
    const t0 = performance.now();
    try {
      await compactor.compact();
      times.push(performance.now() - t0);
    } catch (err) {
      failures.push(err.code);
    }
  }
  const archives = new Archives(logs, { archiveStore });
  const estimate = await archives.estimate();
  const listed = await archives.list();
  times.sort((a, b) => a - b);
  return {
    archiveStore,
    compacted: times.length,
    failures,
    medianMs: times[Math.floor(times.length / 2)] ?? null,
    rangeMs: times.length ? [times[0], times[times.length - 1]] : null,
    archives: listed.length,
    archiveBytes: listed.reduce((sum, a) => sum + a.bytes, 0),
    localStorageFree: estimate.localStorageFree,
    usage: estimate.usage,
  };
}
