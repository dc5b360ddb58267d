// What the browser says of the origin's storage (IndexedDB, Cache and OPFS share one budget;
// localStorage is not in it), and the request to keep it from eviction. Where the browser has
// no `navigator.storage` (an insecure context), nothing is known and nothing is granted.

/** `{ usage, quota, persisted }` in bytes; zeros and `false` where unknown. */
export async function storageEstimate() {
  const storage = globalThis.navigator?.storage;
  const { usage = 0, quota = 0 } = storage?.estimate ? await storage.estimate() : {};
  const persisted = storage?.persisted ? await storage.persisted() : false;
  return { usage, quota, persisted };
}

/** `navigator.storage.persist()`: whether the origin's storage is now kept from eviction. */
export async function storagePersist() {
  const storage = globalThis.navigator?.storage;
  return storage?.persist ? storage.persist() : false;
}
