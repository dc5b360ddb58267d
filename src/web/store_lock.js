// The store lock across the tabs of one origin: a Web Lock, plus a version number that tells a
// tab whether its copy of localStorage has caught up with the writes made under the lock.
//
// A Web Lock alone is not enough. Chromium gives each tab its own copy of localStorage and
// brings it up to date asynchronously, so the tab granted the lock next can still read the
// previous holder's log without its last entry (measured: three tabs adding to one array under
// a Web Lock lost 1,458 of 4,500 entries). So every holder records a version in IndexedDB,
// whose transactions every tab sees at once, before it writes, and the same number in
// localStorage after it wrote; the next holder waits until its copy of localStorage shows
// that number.

/** How long a holder waits for its copy to catch up. Copies catch up in milliseconds; a
 * version that never arrives means the writer was closed mid-write or someone cleared the key
 * (its writes, if any, have arrived by then). */
const CATCH_UP_MS = 2000;
const POLL_MS = 4;
/** How long an open of the version database, or one of its transactions, may take. Behind
 * another tab's deletion or upgrade of the database an open waits for as long as the tab that
 * blocks it lives; after this the lock goes on without the version, as without IndexedDB. */
const DATABASE_MS = 2000;
const DATABASE = "context-compactor";
const VERSIONS = "store_versions";

/** Holds of this tab, by lock name: a nested acquire (a compaction started inside
 * `withLock`) shares the hold instead of waiting for itself. */
const held = new Map();
/** The version this tab gave each lock when it last released it: while the lock's recorded
 * version is still that one, no other tab has written since, and this tab's copy of
 * localStorage is its own (even after it cleared it or restored a snapshot): no wait. */
const lastOwn = new Map();
/** The open connection to the version database (a promise of it, `null` without one). */
let database = null;

/** Forgets `opened` when it is the connection in use: the next hold opens a new one. */
function forget(opened) {
  if (database === opened) database = null;
}

/** What `work(resolve)` resolves to, or `null` after DATABASE_MS; a throw is a rejection. */
function inTime(work) {
  return new Promise((resolve) => {
    setTimeout(resolve, DATABASE_MS, null);
    work(resolve);
  });
}

function openDatabase() {
  if (database) return database;
  const opened = inTime((resolve) => {
    const request = globalThis.indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(VERSIONS);
    request.onsuccess = () => {
      const db = request.result;
      // Another tab deleting or upgrading the database: let it, and open again next time
      // (held open, it would block that tab, and every tab opened after, for good).
      db.onversionchange = db.onclose = () => {
        db.close();
        forget(opened);
      };
      // A database of that name that other code made without the store is none.
      if (db.objectStoreNames.contains(VERSIONS)) resolve(db);
      else {
        resolve(null);
        db.onclose();
      }
    };
    request.onerror = () => resolve(null);
  })
    // Without IndexedDB (disabled storage) the lock still serialises the writers.
    .catch(() => null)
    .then((db) => {
      if (!db) forget(opened);
      return db;
    });
  database = opened;
  return opened;
}

/** Raises the lock's recorded version by one and returns the previous one (`null` without
 * IndexedDB, or when it did not answer in time). The transaction is complete before it
 * resolves. */
async function nextVersion(name, seen) {
  const opened = openDatabase();
  const db = await opened;
  return (
    db &&
    inTime((resolve) => {
      let previous = 0;
      // "relaxed": the number only has to be seen by the other tabs, not survive a power cut
      // (measured in a disk-backed Chromium profile: 1.1 ms a hold against 1.2-1.3 by default).
      const tx = db.transaction(VERSIONS, "readwrite", { durability: "relaxed" });
      const store = tx.objectStore(VERSIONS);
      const read = store.get(name);
      read.onsuccess = () => {
        previous = Number(read.result) || 0;
        store.put(Math.max(previous, seen) + 1, name);
      };
      tx.oncomplete = () => resolve(previous);
      tx.onerror = tx.onabort = () => resolve(null);
    }).catch(() => {
      // The connection closed under it (another tab's version change): open again next time.
      forget(opened);
      return null;
    })
  );
}

function storedVersion(key) {
  try {
    return Number(globalThis.localStorage.getItem(key)) || 0;
  } catch {
    return 0;
  }
}

async function catchUp(name, versionKey) {
  const previous = await nextVersion(name, storedVersion(versionKey));
  if (previous === null) return storedVersion(versionKey) + 1;
  if (previous === lastOwn.get(name)) return previous + 1;
  const deadline = Date.now() + CATCH_UP_MS;
  while (storedVersion(versionKey) < previous && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return Math.max(previous, storedVersion(versionKey)) + 1;
}

function releaser(name) {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const hold = held.get(name);
    if (!hold) return;
    hold.count -= 1;
    if (hold.count > 0) return;
    held.delete(name);
    lastOwn.set(name, hold.version);
    try {
      globalThis.localStorage.setItem(hold.versionKey, String(hold.version));
    } catch {
      // A full store: the next holder waits CATCH_UP_MS, then reads what arrived.
    }
    hold.unlock();
  };
}

/** Waits until this tab holds the lock `name` with a current copy of localStorage; resolves
 * to the function that releases it. Without Web Locks (not a secure context) it resolves at
 * once: the writes of one tab are still ordered, those of several are not guarded. */
export function acquireStoreLock(name, versionKey) {
  const hold = held.get(name);
  if (hold) {
    hold.count += 1;
    return Promise.resolve(releaser(name));
  }
  const locks = globalThis.navigator?.locks;
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    locks
      .request(name, () =>
        new Promise((unlock) => {
          catchUp(name, versionKey).then(
            (version) => {
              held.set(name, { count: 1, version, versionKey, unlock });
              resolve(releaser(name));
            },
            (error) => {
              unlock();
              reject(error);
            },
          );
        }),
      )
      .catch(reject);
  });
}
