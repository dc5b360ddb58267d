// Node (tests, SSR): the package imports, its pure functions work, what needs a browser says so
// with a ContextCompactorError, and a LogStore works over the localStorage the app gives
// globalThis (the README: "`LogStore` needs `localStorage`", not a window).
import init, { LogStore, validateSummary, estimateTokens, REQUIRED_SECTIONS, ContextCompactorError } from "context-compactor";

await init();
const outcome = { sections: REQUIRED_SECTIONS, tokens: estimateTokens("Compacts the logs."), valid: validateSummary("short").valid };
try {
  new LogStore();
  outcome.logStore = "no error";
} catch (err) {
  outcome.logStore = `${err.name}/${err.code}`;
  outcome.isInstance = err instanceof ContextCompactorError && ContextCompactorError.isInstance(err);
}

/** A Storage in memory, as a test or a server gives Node. */
class MemoryStorage {
  #items = new Map();
  get length() {
    return this.#items.size;
  }
  key(n) {
    return [...this.#items.keys()][n] ?? null;
  }
  getItem(key) {
    return this.#items.has(key) ? this.#items.get(key) : null;
  }
  setItem(key, value) {
    this.#items.set(key, String(value));
  }
  removeItem(key) {
    this.#items.delete(key);
  }
  clear() {
    this.#items.clear();
  }
}
globalThis.localStorage = new MemoryStorage();
try {
  const logs = new LogStore({ prefix: "node_" });
  logs.startIteration();
  logs.appendReasoning("Counted the rows of shard_1.csv.");
  logs.finishIteration();
  outcome.withStorage = { entries: logs.reasoningLog().length, stored: globalThis.localStorage.getItem("node_reasoning_log") !== null };
} catch (err) {
  outcome.withStorage = `${err.name}/${err.code}: ${err.message}`;
}
console.log(JSON.stringify(outcome));
