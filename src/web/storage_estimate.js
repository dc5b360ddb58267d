// What the browser says of the origin's storage (IndexedDB, Cache and OPFS share one budget;
// localStorage is not in it), and the request to keep it from eviction. Where the browser has
// no `navigator.storage` (an insecure context), nothing is known and nothing is granted.

/** How long the browser may take to answer; an answer that never comes is none. */
const ANSWER_MS = 2000;

/** What `answer` resolves to, or `none` after ANSWER_MS. */
function inTime(answer, none) {
  return Promise.race([answer, new Promise((resolve) => setTimeout(resolve, ANSWER_MS, none))]);
}

/** A figure of bytes as the browser gave it, or 0 where it is not one (`NaN`, `Infinity`). */
function bytes(n) {
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** `{ usage, quota, persisted }` in bytes; zeros and `false` where unknown, not answered in
 * time, or not finite. */
export async function storageEstimate() {
  const storage = globalThis.navigator?.storage;
  const answer = storage?.estimate ? await inTime(storage.estimate(), {}) : {};
  const [usage, quota] = [bytes(answer?.usage), bytes(answer?.quota)];
  const persisted = storage?.persisted ? await inTime(storage.persisted(), false) : false;
  return { usage, quota, persisted };
}

/** `navigator.storage.persist()`: whether the origin's storage is now kept from eviction. */
export async function storagePersist() {
  const storage = globalThis.navigator?.storage;
  return storage?.persist ? storage.persist() : false;
}
