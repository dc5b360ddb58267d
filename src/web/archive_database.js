// The archive database: one IndexedDB object store of archive texts keyed by their storage
// key, and a generation number that every commit raises in the same transaction, so that a
// tab can tell in one read whether its copy is still current.

const DATABASE = "context-compactor-archives";
const ARCHIVES = "archives";
const META = "meta";
const GENERATION = "generation";
/** How long an open waits behind another tab's version change of the database. */
const OPEN_MS = 3000;

let opening = null;

/** The form of an archive stored compressed: its UTF-16 code units (every string exactly, lone
 * surrogates too, which a UTF-8 encoding would replace), gzip. Archives stored before, or by a
 * browser without `CompressionStream`, are plain strings and read as they are. */
const GZIP_UTF16 = "gzip-utf16";

/** The UTF-16 units of a text copied and compressed in one task (a million took 19 ms to copy). */
const UNITS_AT_ONCE = 1 << 18;

/** `text` as it is stored: compressed where the browser can. A part at a time is copied into
 * its UTF-16 units and given to the compressor, the page running between two (5 MB was 26 ms
 * to copy and, given whole, 48 ms of the compressor's in one task). */
async function packed(text) {
  if (typeof globalThis.CompressionStream !== "function") return text;
  const compressor = new CompressionStream("gzip");
  const writer = compressor.writable.getWriter();
  const gzip = new Response(compressor.readable).arrayBuffer();
  for (let start = 0; start < text.length; start += UNITS_AT_ONCE) {
    if (start > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    const end = Math.min(text.length, start + UNITS_AT_ONCE);
    const units = new Uint16Array(end - start);
    for (let i = start; i < end; i++) units[i - start] = text.charCodeAt(i);
    await writer.write(units);
  }
  await writer.close();
  return { format: GZIP_UTF16, units: text.length, gzip: await gzip };
}

/** The text of a stored value: a plain string as it is, a compressed one decompressed. */
async function unpacked(value) {
  if (value === null || typeof value !== "object" || value.format !== GZIP_UTF16) return value;
  const stream = new Blob([value.gzip]).stream().pipeThrough(new DecompressionStream("gzip"));
  const units = new Uint16Array(await new Response(stream).arrayBuffer());
  if (units.length !== value.units) throw new Error("a compressed archive is cut short");
  const parts = [];
  for (let i = 0; i < units.length; i += 8192) parts.push(String.fromCharCode.apply(null, units.subarray(i, i + 8192)));
  return parts.join("");
}

/** How many texts are decompressed at once: each start costs the task that makes it about
 * 0.5 ms (a Blob and two streams), and 300 started together were one task of 300 ms. */
const AT_ONCE = 16;

/** The texts of stored `values`, decompressed [`AT_ONCE`] at a time (the page runs between
 * two groups); a failure to decompress one is a read failure, or where `each` is set,
 * `{ damaged }` saying why in its place (the others are read). */
async function texts(values, what, each = false) {
  const damaged = (error) => ({ damaged: failure("its compressed text does not decompress", error).message });
  const out = [];
  try {
    for (let i = 0; i < values.length; i += AT_ONCE) {
      const group = values.slice(i, i + AT_ONCE);
      out.push(...(await Promise.all(group.map((value) => (each ? unpacked(value).catch(damaged) : unpacked(value))))));
    }
    return out;
  } catch (error) {
    throw failure(what, error);
  }
}

/** An `Error` saying `what` failed and what the browser reported; `quota` when it was full. */
function failure(what, error) {
  const name = (error && error.name) || "Error";
  const detail = error && error.message ? `${name}: ${error.message}` : name;
  const err = new Error(`${what} (${detail})`);
  err.quota = name === "QuotaExceededError";
  return err;
}

/** Whether this browser provides IndexedDB at all (it may still refuse to open it). */
export function archiveDatabaseAvailable() {
  try {
    return typeof globalThis.indexedDB?.open === "function";
  } catch {
    return false;
  }
}

function hasStores(db) {
  return db.objectStoreNames.contains(ARCHIVES) && db.objectStoreNames.contains(META);
}

/** The database at its current version; one that lacks the stores (created by other code) is
 * opened once more at the next version, which adds them. */
function open() {
  if (opening) return opening;
  const attempt = openAt(undefined).then((db) => (hasStores(db) ? db : upgraded(db)));
  opening = attempt;
  attempt.catch(() => {
    if (opening === attempt) opening = null;
  });
  return attempt;
}

function upgraded(db) {
  const version = db.version + 1;
  db.close();
  return openAt(version).then((next) => {
    if (hasStores(next)) return next;
    next.close();
    throw failure(`IndexedDB "${DATABASE}" could not be opened`, {
      name: "NotFoundError",
      message: "it lacks its object stores",
    });
  });
}

function openAt(version) {
  return new Promise((resolve, reject) => {
    const what = `IndexedDB "${DATABASE}" could not be opened`;
    let request;
    try {
      request = version === undefined ? globalThis.indexedDB.open(DATABASE) : globalThis.indexedDB.open(DATABASE, version);
    } catch (error) {
      reject(failure(what, error));
      return;
    }
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(failure(what, {
        name: "BlockedError",
        message: `another tab's version change kept it blocked for ${OPEN_MS} ms`,
      }));
    }, OPEN_MS);
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(ARCHIVES)) db.createObjectStore(ARCHIVES);
      if (!db.objectStoreNames.contains(META)) db.createObjectStore(META);
    };
    request.onsuccess = () => {
      clearTimeout(timer);
      const db = request.result;
      // Another tab changing the database's version: let it, and open again next time.
      db.onversionchange = () => {
        db.close();
        forget(db);
      };
      db.onclose = () => forget(db);
      if (late) db.close();
      else resolve(db);
    };
    request.onerror = () => {
      clearTimeout(timer);
      reject(failure(what, request.error));
    };
  });
}

/** Forgets the connection `db` once it is closed: the next call opens a new one. */
function forget(db) {
  const current = opening;
  if (current) current.then((open) => {
    if (open === db && opening === current) opening = null;
  }, () => {});
}

/** A transaction over both stores, or a rejection saying why there is none. */
async function transaction(mode, what) {
  try {
    return (await open()).transaction([ARCHIVES, META], mode);
  } catch (error) {
    if (opening === null) throw error; // the open itself failed, and said why
    // A connection closed by a version change: open a new one, once.
    opening = null;
  }
  try {
    return (await open()).transaction([ARCHIVES, META], mode);
  } catch (error) {
    opening = null;
    throw failure(what, error);
  }
}

/** The key of every archive whose key starts with `prefix`, and the generation; `null` when
 * the generation is still `known`. No archive's text is read: `fetchArchives` reads those an
 * operation needs. */
export async function loadArchives(known, prefix) {
  const what = "IndexedDB could not be read";
  const tx = await transaction("readonly", what);
  return new Promise((resolve, reject) => {
    let loaded = null;
    const read = tx.objectStore(META).get(GENERATION);
    read.onsuccess = () => {
      const generation = Number(read.result) || 0;
      if (generation === known) return;
      // Keys are strings compared by UTF-16 unit: the prefix's keys lie below prefix + U+FFFF.
      const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`);
      const keys = tx.objectStore(ARCHIVES).getAllKeys(range);
      keys.onsuccess = () => {
        loaded = { generation, keys: keys.result };
      };
    };
    tx.oncomplete = () => resolve(loaded);
    tx.onabort = () => reject(failure(what, tx.error));
  });
}

/** The archive texts under `keys`, in their order, in one transaction (`undefined` for a key
 * the database no longer holds, `{ damaged }` for one whose compressed text does not
 * decompress). */
export async function fetchArchives(keys) {
  const what = "IndexedDB could not be read";
  const tx = await transaction("readonly", what);
  return new Promise((resolve, reject) => {
    const store = tx.objectStore(ARCHIVES);
    const reads = keys.map((key) => store.get(key));
    tx.oncomplete = () => resolve(texts(reads.map((read) => read.result), what, true));
    tx.onabort = () => reject(failure(what, tx.error));
  });
}

/** Closes the connection in use, if any: the next transaction opens a new one. */
function dropConnection() {
  const current = opening;
  opening = null;
  if (current) current.then((db) => db.close(), () => {});
}

/** Writes (`written[i]` a string, stored compressed) and deletes (`null`) in one transaction,
 * complete before it resolves to the new generation and whether another tab had committed since `known`. A
 * failed transaction stored nothing; its connection is closed (Firefox leaves one that met a
 * quota error unable to write until the database is opened again), and a failure that was not
 * the quota is tried once more on a new connection. */
export async function commitArchives(known, keys, written) {
  // Compressed before the transaction opens: one left idle across an await commits early.
  const values = await Promise.all(written.map((text) => (text === null ? null : packed(text))));
  try {
    return await commitOnce(known, keys, values);
  } catch (error) {
    dropConnection();
    if (!error.aborted || error.quota) throw error;
    return commitOnce(known, keys, values);
  }
}

async function commitOnce(known, keys, values) {
  const what = "IndexedDB did not store the archives";
  const tx = await transaction("readwrite", what);
  return new Promise((resolve, reject) => {
    const meta = tx.objectStore(META);
    const store = tx.objectStore(ARCHIVES);
    let generation = 0;
    let stale = false;
    const read = meta.get(GENERATION);
    read.onsuccess = () => {
      const previous = Number(read.result) || 0;
      stale = previous !== known;
      generation = previous + 1;
      meta.put(generation, GENERATION);
    };
    tx.oncomplete = () => resolve({ generation, stale });
    tx.onabort = () => reject(Object.assign(failure(what, tx.error), { aborted: true }));
    try {
      keys.forEach((key, i) => {
        if (values[i] === null) store.delete(key);
        else store.put(values[i], key);
      });
    } catch (error) {
      // A write the engine refused at once: none of them may be stored.
      tx.onabort = null;
      tx.abort();
      reject(failure(what, error));
    }
  });
}

/** The archive text under `key` as the database holds it (`undefined` when absent, `{ damaged }`
 * when its compressed text does not decompress). */
export async function readCommitted(key) {
  const what = "IndexedDB could not be read";
  const tx = await transaction("readonly", what);
  return new Promise((resolve, reject) => {
    const read = tx.objectStore(ARCHIVES).get(key);
    // Resolved in a task after the one that made the text, where the package copies it in
    // (2.4 M characters: 20 ms to make, 25 to copy, once a task of 53 ms).
    tx.oncomplete = () => resolve(texts([read.result], what, true).then(([text]) => new Promise((next) => setTimeout(next, 0, text))));
    tx.onabort = () => reject(failure(what, tx.error));
  });
}
