// The archive database module (src/web/archive_database.js) against each way an engine's
// IndexedDB reports a full disk, simulated at the API it calls: Chromium aborts the transaction
// and carries the QuotaExceededError in the abort (no request's own event fires); Firefox
// leaves a connection that met a quota error unable to write until the database is opened
// again; an abort may carry no error at all; a write may be refused at once. Each must reject
// with an Error (`quota` set where it was the quota), store nothing, and leave the next commit
// able to succeed.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";

/** An IndexedDB of one database, in memory, whose transactions a test can make fail. */
class FakeIndexedDB {
  constructor() {
    this.data = new Map([["meta:generation", 0]]);
    this.opens = 0;
    /** (tx, connection) => an error to abort with (`null` for an abort with no error), or
     * `undefined` to commit. */
    this.failWith = () => undefined;
    /** (key, value) => an error `put` throws at once, or `undefined`. */
    this.refusePut = () => undefined;
  }
  open() {
    const request = {};
    this.opens += 1;
    const connection = { fake: this, closed: false, readOnly: false, version: 1 };
    connection.objectStoreNames = { contains: () => true };
    connection.close = () => (connection.closed = true);
    connection.transaction = (names, mode) => {
      if (connection.closed) throw Object.assign(new Error("The database connection is closing."), { name: "InvalidStateError" });
      return new FakeTransaction(this, connection, mode);
    };
    setTimeout(() => {
      request.result = connection;
      request.onsuccess?.();
    });
    return request;
  }
}

class FakeTransaction {
  constructor(fake, connection, mode) {
    Object.assign(this, { fake, connection, mode, writes: [], error: null, done: false });
    setTimeout(() => setTimeout(() => this.finish()));
  }
  objectStore(name) {
    const tx = this;
    const request = (result) => {
      const r = { result };
      setTimeout(() => !tx.done && r.onsuccess?.());
      return r;
    };
    return {
      get: (key) => request(tx.fake.data.get(`${name}:${key}`)),
      getAllKeys: () => request([...tx.fake.data.keys()].filter((k) => k.startsWith("archives:")).map((k) => k.slice(9))),
      put(value, key) {
        const refused = tx.fake.refusePut(key, value);
        if (refused) throw refused;
        tx.writes.push([`${name}:${key}`, value]);
        return {};
      },
      delete(key) {
        tx.writes.push([`${name}:${key}`, undefined]);
        return {};
      },
    };
  }
  abort() {
    this.done = true;
    this.onabort?.();
  }
  finish() {
    if (this.done) return;
    this.done = true;
    const failure = this.fake.failWith(this, this.connection);
    if (failure !== undefined) {
      this.error = failure;
      this.onabort?.();
      return;
    }
    for (const [key, value] of this.writes) {
      if (value === undefined) this.fake.data.delete(key);
      else this.fake.data.set(key, value);
    }
    this.oncomplete?.();
  }
}

const quotaError = () => Object.assign(new Error("The quota has been exceeded."), { name: "QuotaExceededError" });
let fake;
let db;

beforeEach(async () => {
  fake = new FakeIndexedDB();
  globalThis.indexedDB = fake;
  globalThis.IDBKeyRange = { bound: (lower, upper) => ({ lower, upper }) };
  // A fresh module (its connection is module state) for every test.
  db = await import(`../../src/web/archive_database.js?${Math.random()}`);
});

const archives = () => [...fake.data.keys()].filter((k) => k.startsWith("archives:"));

test("Chromium's shape: the abort carries the QuotaExceededError; nothing is stored and the rejection says quota", async () => {
  fake.failWith = (tx) => (tx.mode === "readwrite" ? quotaError() : undefined);
  const err = await db.commitArchives(0, ["a_1"], ["text"]).then(() => null, (e) => e);
  assert.ok(err instanceof Error, String(err));
  assert.equal(err.quota, true);
  assert.match(err.message, /QuotaExceededError/);
  assert.deepEqual(archives(), []);
  assert.equal(fake.data.get("meta:generation"), 0);
});

test("Firefox's shape: after a quota error the connection cannot write until reopened; the next commit opens a new one", async () => {
  fake.failWith = (tx, connection) => {
    if (tx.mode !== "readwrite") return undefined;
    if (connection.readOnly) return Object.assign(new Error("The operation failed for reasons unrelated to the database itself"), { name: "UnknownError" });
    if (fake.full) {
      connection.readOnly = true;
      return quotaError();
    }
    return undefined;
  };
  fake.full = true;
  const first = await db.commitArchives(0, ["a_1"], ["big"]).then(() => null, (e) => e);
  assert.equal(first?.quota, true);
  // The app makes room; the same page commits again.
  fake.full = false;
  const second = await db.commitArchives(0, ["a_2"], ["small"]);
  assert.equal(second.generation, 1);
  assert.deepEqual(archives(), ["archives:a_2"]);
});

test("a connection that cannot write for another reason is reopened and the commit tried once more", async () => {
  let failures = 1;
  fake.failWith = (tx) => {
    if (tx.mode !== "readwrite" || failures === 0) return undefined;
    failures -= 1;
    return Object.assign(new Error("read only"), { name: "UnknownError" });
  };
  const result = await db.commitArchives(0, ["a_1"], ["text"]);
  assert.equal(result.generation, 1);
  assert.deepEqual(archives(), ["archives:a_1"]);
  assert.equal(fake.opens, 2, "a new connection for the second try");
});

test("an abort with no error rejects with an Error that says so, never with null", async () => {
  fake.failWith = (tx) => (tx.mode === "readwrite" ? null : undefined);
  const err = await db.commitArchives(0, ["a_1"], ["text"]).then(() => "stored", (e) => e);
  assert.ok(err instanceof Error, String(err));
  assert.equal(err.quota, false);
  assert.deepEqual(archives(), []);
});

test("a write refused at once (the quota, thrown by put) stores none of the commit's writes", async () => {
  fake.refusePut = (key) => (key === "a_2" ? quotaError() : undefined);
  const err = await db.commitArchives(0, ["a_1", "a_2"], ["one", "two"]).then(() => null, (e) => e);
  assert.equal(err?.quota, true, String(err));
  // Let the transaction's own end pass: it must not commit a_1.
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(archives(), []);
  fake.refusePut = () => undefined;
  await db.commitArchives(0, ["a_3"], ["three"]);
  assert.deepEqual(archives(), ["archives:a_3"]);
});

test("archive texts are stored gzip-compressed and read back exactly, lone surrogates and all", async () => {
  const rows = Array.from({ length: 400 }, (_, i) => `| shard_${i} | latency | ${i * 37 % 991} ms | ok |`).join("\n");
  const text = JSON.stringify({ data: { reasoningLog: [`=== ITERATION 1 ===\n${rows}`, "Ab\ud83d", "\udc00z", "😀"] } });
  await db.commitArchives(0, ["a_1"], [text]);
  const stored = fake.data.get("archives:a_1");
  assert.equal(stored.format, "gzip-utf16");
  assert.ok(stored.gzip.byteLength * 5 < text.length * 2, `${stored.gzip.byteLength} bytes for ${text.length} UTF-16 units`);
  assert.deepEqual(await db.fetchArchives(["a_1", "missing"]), [text, undefined]);
  assert.equal(await db.readCommitted("a_1"), text);
});

test("archives stored as plain strings (before compression, or by a browser without it) still read", async () => {
  fake.data.set("archives:old_1", "{\"data\":\"plain\"}");
  assert.deepEqual(await db.fetchArchives(["old_1"]), ["{\"data\":\"plain\"}"]);
  const saved = globalThis.CompressionStream;
  globalThis.CompressionStream = undefined;
  try {
    await db.commitArchives(0, ["plain_1"], ["as text"]);
  } finally {
    globalThis.CompressionStream = saved;
  }
  assert.equal(fake.data.get("archives:plain_1"), "as text");
});

test("a compressed archive that does not decompress is named damaged, never a wrong text, and the others read", async () => {
  fake.data.set("archives:bad_1", { format: "gzip-utf16", units: 3, gzip: new Uint8Array([1, 2, 3]).buffer });
  fake.data.set("archives:old_1", "{\"data\":\"plain\"}");
  // Before (#66), the whole fetch failed as if IndexedDB could not be read.
  const [bad, good] = await db.fetchArchives(["bad_1", "old_1"]);
  assert.match(bad.damaged, /its compressed text does not decompress/);
  assert.equal(good, "{\"data\":\"plain\"}");
  // Read alone (the idle page reading its digest, the move from localStorage reading back what
  // it wrote), it is named damaged too: the package reads it as an archive that does not read.
  const alone = await db.readCommitted("bad_1");
  assert.match(alone.damaged, /its compressed text does not decompress/);
  assert.equal(await db.readCommitted("old_1"), "{\"data\":\"plain\"}");
});
