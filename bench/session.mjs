// What the benchmark pages share: the provider that answers at once, the seeded sessions of
// the demo's simulated loop, one timed compaction, and the median.
import { simulateIteration } from "/www/simulate.js";

const SUMMARY = [
  "### 🎯 OBJECTIVE ACHIEVED", "- Totals per region computed for every dataset.",
  "### 📊 KEY DISCOVERIES", "- North leads; duplicated ids explained the gap.",
  "### ✅ SUCCESSFUL SOLUTIONS", "- A plain loop over rows with a totals map.",
  "### 🔧 TOOLS USED SUCCESSFULLY", "- vfs write, fetch get",
  "### 💡 CRITICAL INSIGHTS", "- Array.prototype.groupBy does not exist here.",
  "### 📝 IMPORTANT CONTEXT FOR FUTURE REASONING", "- Verify against the reference report next.",
].join("\n");

/** A provider that answers at once and, as a model following the prompt does, keeps the facts
 * it lists. */
export const generate = async (prompt) => {
  const block = String(prompt).split("## FACTS THE SUMMARY MUST KEEP\n")[1];
  const facts = block ? block.split("\n## ")[0].split("\n").filter((line) => line.startsWith("- ")) : [];
  return [SUMMARY, ...facts].join("\n");
};

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The logs of `iterations` iterations of the simulated loop (`perIteration` steps each) and an
 * empty current one, written through `LogStore` (the package's class) into a cleared
 * localStorage: the three logs' text, their estimated tokens and their length in units. */
export function buildSession(LogStore, iterations, perIteration) {
  localStorage.clear();
  const logs = new LogStore();
  for (let i = 0; i < iterations; i++) {
    const n = logs.startIteration();
    for (let k = 0; k < perIteration; k++) simulateIteration(logs, n, 1000 + k);
    logs.finishIteration();
  }
  logs.startIteration();
  logs.finishIteration();
  const snapshot = Object.fromEntries(["gdrs_reasoning_log", "gdrs_execution_log", "gdrs_tool_activity_log"].map((k) => [k, localStorage.getItem(k)]));
  return { snapshot, tokens: logs.estimateTokens(), chars: Object.values(snapshot).reduce((t, v) => t + v.length, 0) };
}

/** One `compact()` of the stored logs by a compactor of the package `build` (its `Compactor`
 * and `LogStore`) made for it, with this file's provider and its archives in `archiveStore`;
 * resolves to its result. */
export function compactOnce({ Compactor, LogStore }, tokens, archiveStore) {
  const compactor = new Compactor(new LogStore(), { provider: { type: "custom", generate }, contextWindowTokens: tokens, retryDelayMs: 0, archiveStore });
  return compactor.compact({ trigger: "context_limit_error" });
}

/** Puts the logs back as they were, every other key cleared (the store lock's version too: a
 * tab whose own write was the last one does not wait for it, see "Several tabs"), and the
 * archives given, in either store. */
export async function restore(snapshot, archives = {}) {
  for (const key of Object.keys(localStorage)) {
    localStorage.removeItem(key);
  }
  for (const [k, v] of Object.entries(snapshot)) localStorage.setItem(k, v);
  for (const [k, v] of Object.entries(archives.localStorage ?? {})) localStorage.setItem(k, v);
  await setArchiveDatabase(archives.indexedDB ?? {});
}

/** Leaves the package's IndexedDB archive database holding `archives` only (raising its
 * generation, as a writer does), so that every run starts with the same archives. */
async function setArchiveDatabase(archives) {
  const db = await new Promise((resolve) => {
    const request = indexedDB.open("context-compactor-archives");
    request.onupgradeneeded = () => request.transaction.abort();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
  });
  if (!db) return;
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["archives", "meta"], "readwrite");
    const store = tx.objectStore("archives");
    store.clear();
    for (const [k, v] of Object.entries(archives)) store.put(v, k);
    const meta = tx.objectStore("meta");
    const read = meta.get("generation");
    read.onsuccess = () => meta.put((Number(read.result) || 0) + 1, "generation");
    tx.oncomplete = resolve;
    tx.onabort = () => reject(tx.error);
  });
  db.close();
}
