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

/**
 * Twenty compactions of a growing session with its archives in `archiveStore`. With
 * `afterLocalStorage`, the session first ran twenty compactions with its archives in
 * localStorage (as version 0.1 kept them), which the compactor then moves on first open.
 */
export async function measureBackend(archiveStore, afterLocalStorage = false) {
  await init();
  localStorage.clear();
  const logs = new LogStore();
  const options = { provider: { type: "offline" }, contextWindowTokens: 200_000, recommendedUsage: 0 };
  let before = null;
  if (afterLocalStorage) {
    await compactTimes(logs, new Compactor(logs, { ...options, archiveStore: "localStorage" }), 0);
    before = (await new Archives(logs, { archiveStore: "localStorage" }).estimate()).localStorageFree;
  }
  const { times, failures } = await compactTimes(logs, new Compactor(logs, { ...options, archiveStore }), afterLocalStorage ? COMPACTIONS : 0);
  const archives = new Archives(logs, { archiveStore });
  const estimate = await archives.estimate();
  const listed = await archives.list();
  times.sort((a, b) => a - b);
  return {
    archiveStore,
    afterLocalStorage,
    localStorageFreeBefore: before,
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

/** Twenty rounds of eight iterations, each followed by a compaction; their times (ms) and the
 * codes of those that failed. `first` numbers the rounds' seeds. */
async function compactTimes(logs, compactor, first) {
  const times = [];
  const failures = [];
  for (let c = first; c < first + COMPACTIONS; c++) {
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
  return { times, failures };
}
