// Runs in headless Chromium: builds seeded sessions, then times compact() against the plain-JS
// baseline and the localStorage/JSON floor. Results land in window.benchResults.
import init, { LogStore, Compactor, estimateTokens } from "/pkg/context_compactor.js";
import { jsCompaction, floor } from "/bench/baseline.mjs";
import { buildSession, compactOnce, generate, median, restore } from "/bench/session.mjs";

/** A run of `compact()` by a compactor made for it over the stored logs, with its archives in
 * `archiveStore`; resolves to its result. */
const compactRun = (tokens, archiveStore) => () => compactOnce({ Compactor, LogStore }, tokens, archiveStore);

/** Ten archives of the session `snapshot`, as ten earlier compactions of it would have left
 * them (written a day apart, the newest yesterday): the archives a session that compacts
 * regularly keeps at `maxArchives` 10. */
async function tenArchives(snapshot, tokens) {
  await restore(snapshot);
  const { archiveKey } = await compactOnce({ Compactor, LogStore }, tokens, "localStorage");
  const text = localStorage.getItem(archiveKey);
  const written = Number(archiveKey.split("_").pop());
  const archives = {};
  for (let day = 1; day <= 10; day++) {
    const timestamp = written - day * 86_400_000;
    archives[archiveKey.replace(String(written), String(timestamp))] = text.replace(`"timestamp":${written}`, `"timestamp":${timestamp}`);
  }
  return archives;
}

/**
 * Medians of `rounds` timed runs of every variant, after two untimed rounds that warm up the
 * JIT and the caches. The variants take turns within a round, so that a slow spell of the
 * machine weighs on all of them alike. Returns the medians and, per variant, the time windows
 * of its timed runs.
 */
async function timeAll(variants, snapshot, rounds, archives) {
  variants = Object.fromEntries(Object.entries(variants).filter(([, run]) => run));
  const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  const windows = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = -2; round < rounds; round++) {
    for (const [name, run] of Object.entries(variants)) {
      await restore(snapshot, archives[name]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const start = performance.now();
      await run();
      const end = performance.now();
      if (round >= 0) {
        times[name].push(end - start);
        windows[name].push([start, end]);
      }
    }
  }
  return { medians: Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs) ?? null])), times, windows };
}

/** Medians (ms) of 200 uncontended holds, after 20 untimed: `withLock` with nothing to do,
 * and what it is made of done by hand — a Web Lock alone, one IndexedDB read-and-write
 * transaction alone, and the transaction inside the Web Lock. */
async function lockHolds() {
  const time = async (hold) => {
    const xs = [];
    for (let i = -20; i < 200; i++) {
      const t = performance.now();
      await hold();
      if (i >= 0) xs.push(performance.now() - t);
    }
    return median(xs);
  };
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("bench-lock", 1);
    request.onupgradeneeded = () => request.result.createObjectStore("versions");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const transaction = () =>
    new Promise((resolve, reject) => {
      const tx = db.transaction("versions", "readwrite", { durability: "relaxed" });
      const store = tx.objectStore("versions");
      const read = store.get("v");
      read.onsuccess = () => store.put((read.result ?? 0) + 1, "v");
      tx.oncomplete = resolve;
      tx.onabort = () => reject(tx.error);
    });
  const logs = new LogStore();
  const result = {
    withLockMs: await time(() => logs.withLock(() => {})),
    webLockMs: await time(() => navigator.locks.request("bench-web-lock", async () => {})),
    transactionMs: await time(transaction),
    webLockAndTransactionMs: await time(() => navigator.locks.request("bench-web-lock", transaction)),
  };
  db.close();
  return result;
}

async function main() {
  const t0 = performance.now();
  await init();
  const instantiateMs = performance.now() - t0;
  const results = { instantiateMs, sessions: [] };
  const entry = { success: true, code: "rows.length", result: 40213, executionTime: 3 };
  for (const [iterations, perIteration] of [[10, 4], [50, 4], [200, 4]]) {
    const { snapshot, tokens, chars } = buildSession(LogStore, iterations, perIteration);
    const kept = await tenArchives(snapshot, tokens);
    // Ten archives of the 380K-token session do not fit in localStorage's 5 MiB with it.
    const keptUnits = Object.values(kept).reduce((n, text) => n + text.length, chars);
    const fitsLocalStorage = keptUnits < 4_500_000;
    const rounds = iterations >= 200 ? 7 : 11;
    // Long tasks are attributed to compact() when they start during one of its timed runs;
    // the session building above is one long task that must not be charged to it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const longTasks = [];
    const observer = new PerformanceObserver((list) => list.getEntries().forEach((e) => longTasks.push(e)));
    observer.observe({ type: "longtask" });
    const { medians, times, windows } = await timeAll(
      {
        // Archives in localStorage, as the JavaScript baseline keeps them.
        ours: compactRun(tokens, "localStorage"),
        // The default: archives in IndexedDB.
        oursIndexedDb: compactRun(tokens, "indexedDB"),
        // The same with the ten archives of earlier compactions kept (one is evicted); in
        // IndexedDB read by a compactor made for this compaction (a page's first).
        oursTenArchives: fitsLocalStorage && compactRun(tokens, "localStorage"),
        oursIndexedDbTenArchives: compactRun(tokens, "indexedDB"),
        // One read of the three logs with a token count, the unit the engine repeats.
        readAndCount: async () => new LogStore().estimateTokens(),
        jsBaseline: () => jsCompaction(generate),
        floor: async () => floor(),
        // One execution appended to the running iteration: by the LogStore, and by hand in JS.
        append: async () => new LogStore().appendExecution(entry),
        jsAppend: async () => {
          const log = JSON.parse(localStorage.getItem("gdrs_execution_log") ?? "[]");
          log.push({ ...entry, id: `exec_${Date.now()}`, timestamp: new Date().toISOString() });
          localStorage.setItem("gdrs_execution_log", JSON.stringify(log));
        },
      },
      snapshot,
      rounds,
      { oursTenArchives: { localStorage: kept }, oursIndexedDbTenArchives: { indexedDB: kept } },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    const during = longTasks.filter((e) => [...windows.ours, ...windows.oursIndexedDb, ...(windows.oursTenArchives ?? []), ...windows.oursIndexedDbTenArchives].some(([from, to]) => e.startTime >= from - 1 && e.startTime <= to));
    results.sessions.push({
      iterations, tokens, chars,
      oursMs: medians.ours, oursIndexedDbMs: medians.oursIndexedDb,
      oursTenArchivesMs: medians.oursTenArchives, oursIndexedDbTenArchivesMs: medians.oursIndexedDbTenArchives, readAndCountMs: medians.readAndCount, jsBaselineMs: medians.jsBaseline,
      floorMs: medians.floor, appendMs: medians.append, jsAppendMs: medians.jsAppend,
      longestTaskMs: Math.max(0, ...during.map((e) => e.duration)),
      runsMs: times,
    });
  }
  results.lock = await lockHolds();
  results.estimateCheck = estimateTokens("benchmark");
  window.benchResults = results;
}

main().catch((err) => {
  window.benchResults = { error: String(err?.stack ?? err) };
});
