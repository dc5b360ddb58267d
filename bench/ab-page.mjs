// Runs in headless Chromium: times `compact()` of two builds of the package in one page, run
// for run in turns (the first of each pair alternating), so that both see the same machine,
// JIT and storage. Each build is its own module instance, served under /a/ and /b/.
import initA, * as a from "/a/context_compactor.js";
import initB, * as b from "/b/context_compactor.js";
import { buildSession, compactOnce, median } from "/bench/session.mjs";

/** Medians (ms), per build, of `rounds` compactions of a session of `iterations` iterations,
 * of as many reads of its logs with a token count (`new LogStore().estimateTokens()`, what
 * `contextUsage()` costs) and of as many appends of one execution (`appendExecution`, which
 * reads the three logs for the iteration number), after two untimed rounds. */
window.compareBuilds = async (iterations, rounds) => {
  await initA();
  await initB();
  const { snapshot, tokens } = buildSession(a.LogStore, iterations, 4);
  const builds = { a, b };
  const times = { a: [], b: [] };
  const reads = { a: [], b: [] };
  const appends = { a: [], b: [] };
  for (let round = -2; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ["a", "b"] : ["b", "a"]) {
      // The logs back as they were. The store lock's version stays: two module instances do
      // not know each other's writes as their own, and without it each would wait the lock's
      // catch-up for the other.
      for (const key of Object.keys(localStorage)) {
        if (!key.endsWith("store_version")) localStorage.removeItem(key);
      }
      for (const [key, text] of Object.entries(snapshot)) localStorage.setItem(key, text);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const readStart = performance.now();
      new builds[name].LogStore().estimateTokens();
      const readMs = performance.now() - readStart;
      const logs = new builds[name].LogStore();
      const appendStart = performance.now();
      logs.appendExecution({ success: true, code: "rows.length", result: 1042, executionTime: 3 });
      const appendMs = performance.now() - appendStart;
      const start = performance.now();
      await compactOnce(builds[name], tokens, "localStorage");
      const ms = performance.now() - start;
      if (round >= 0) {
        times[name].push(ms);
        reads[name].push(readMs);
        appends[name].push(appendMs);
      }
    }
  }
  return { tokens, a: median(times.a), b: median(times.b), readA: median(reads.a), readB: median(reads.b), appendA: median(appends.a), appendB: median(appends.b) };
};
window.abReady = true;
