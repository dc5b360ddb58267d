// Two real tabs of one origin in Chromium, for a bounded time: random appends, iterations (some
// spanning several tasks), compactions (the user's, which summarise; the loop's, which clear
// bulky results first; the loop's in the background, which the tab does not wait for; the
// clearing rung alone), rollbacks, archive deletions and page reloads. Afterwards every entry ever appended
// is present exactly once across the live logs and the summaries' archives, and every bulky
// body exactly once, whole: in its entry, or in a clearing's archive while its placeholder
// stands in the entry (or gone with an archive the test deleted on purpose).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { launch, databaseArchives } from "./browser.mjs";

const RUN_MS = Number(process.env.CHAOS_MS ?? 30_000);
const TABS = 2;

let env;
before(async () => {
  env = await launch();
});
after(async () => {
  await env?.close();
});

/** A small deterministic generator, so a failing run can be replayed from its seed. */
function generator(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}

/** Loads the package in the page and keeps a LogStore and an offline Compactor on `window`. */
async function setUp(page) {
  await page.evaluate(async () => {
    // A bulky result body of about 600 tokens, which the clearing rung clears.
    window.bodyOf = (tag) => `${tag} `.repeat(Math.ceil(2400 / (tag.length + 1)));
    const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
    await init();
    const logs = new LogStore();
    const compactor = new Compactor(logs, {
      provider: { type: "offline" },
      contextWindowTokens: 1500,
      recommendedUsage: 0.05,
      maxArchives: 1000,
    });
    // The ends of the background compactions this page started.
    window.chaos = { logs, compactor, pending: [] };
  });
}

/** `TABS` real tabs of one origin (one browser context) over an empty localStorage, each set up;
 * `errors` collects their uncaught exceptions. */
async function openTabs() {
  const context = await env.browser.newContext();
  const errors = [];
  const pages = [];
  for (let tab = 0; tab < TABS; tab++) {
    const page = await context.newPage();
    page.on("pageerror", (err) => errors.push(String(err)));
    await page.goto(`${env.baseUrl}pkg/package.json`);
    pages.push(page);
  }
  await pages[0].evaluate(() => localStorage.clear());
  for (const page of pages) await setUp(page);
  return { context, pages, errors };
}

/** One random action in a tab; resolves to what it confirmed. */
function act(page, kind, tag) {
  return page.evaluate(
    async ({ kind, tag }) => {
      const { logs, compactor, pending } = window.chaos;
      const refused = (err) => ({ refused: err.code ?? String(err) });
      const compacted = (result) => ({ compacted: result.archiveKey, rung: result.rung, archivedInLocalStorage: localStorage.getItem(result.archiveKey) !== null });
      switch (kind) {
        case "slow-iteration":
          // Started in one task and finished in another: a background compaction waits for it.
          await logs.withLock(() => {
            logs.startIteration();
            logs.appendReasoning(`chaos reasoning ${tag}`);
          });
          await new Promise((resolve) => setTimeout(resolve, 30));
          return logs.withLock(() => {
            logs.appendExecution({ code: `chaos(${JSON.stringify(tag)})`, success: true, source: "chaos", result: { tag, page: bodyOf(tag) } });
            logs.appendToolActivity({ type: "vault", action: `chaos ${tag}`, status: "success" });
            logs.finishIteration();
            return { appended: [tag] };
          });
        case "iteration":
          return logs.withLock(() => {
            logs.startIteration();
            logs.appendReasoning(`chaos reasoning ${tag}`);
            logs.appendExecution({ code: `chaos(${JSON.stringify(tag)})`, success: true, source: "chaos", result: { tag, page: bodyOf(tag) } });
            logs.appendToolActivity({ type: "vault", action: `chaos ${tag}`, status: "success" });
            logs.finishIteration();
            return { appended: [tag] };
          });
        case "append":
          return logs.withLock(() => {
            logs.appendReasoning(`chaos reasoning ${tag}`);
            return { appended: [tag] };
          });
        case "compact": {
          // The user's summarises; the loop's clears bulky results first; or the clearing alone;
          // or the loop's in the background: the tab goes on, its end is awaited at the end.
          const n = Number(tag.split("-")[1]);
          if (n % 4 === 3) {
            return compactor.compact({ trigger: "auto", background: true }).then((started) => {
              pending.push(started.done.then(compacted, refused));
              return { background: started.iterations };
            }, refused);
          }
          const options = n % 4 === 0 ? { trigger: "auto" } : n % 4 === 1 ? { rung: "clear" } : {};
          // Where the archive went: the default store is IndexedDB, never localStorage.
          return compactor.compact(options).then(compacted, refused);
        }
        case "rollback":
          return compactor.archives().then(([newest]) =>
            newest ? compactor.rollback(newest.key).then(() => ({ rolledBack: newest.key }), refused) : {},
          );
        case "delete":
          return logs.withLock(async () => {
            const all = await compactor.archives();
            if (all.length === 0) return {};
            const oldest = all[all.length - 1];
            const archive = await compactor.readArchive(oldest.key);
            try {
              await compactor.deleteArchive(oldest.key);
            } catch (err) {
              return refused(err);
            }
            // A clearing's archive takes bodies only: their entries stay, as placeholders.
            return oldest.rung === "clear" ? { deletedBodies: archive.data } : { deleted: archive.data };
          });
        default:
          throw new Error(`unknown action ${kind}`);
      }
    },
    { kind, tag },
  );
}

const TAG = /^chaos reasoning (t\d+-\d+)$/;
const EXEC = /^chaos\("(t\d+-\d+)"\)$/;
const TOOL = /^chaos (t\d+-\d+)$/;

/** The tags found in a set of logs, one per entry (summaries and headers are not entries). */
function tagsOf(data) {
  const tags = [];
  for (const text of data.reasoningLog ?? []) {
    const match = typeof text === "string" && text.match(TAG);
    if (match) tags.push(`r:${match[1]}`);
  }
  for (const entry of data.executionLog ?? []) {
    const match = typeof entry?.code === "string" && entry.code.match(EXEC);
    if (match) tags.push(`e:${match[1]}`);
  }
  for (const entry of data.toolActivityLog ?? []) {
    const match = typeof entry?.action === "string" && entry.action.match(TOOL);
    if (match) tags.push(`t:${match[1]}`);
  }
  return tags;
}

/** The tags whose whole bulky body `data` holds (an entry's own, or a clearing archive's original). */
function bodiesOf(data) {
  const tags = [];
  for (const entry of data.executionLog ?? []) {
    const body = entry?.result;
    if (typeof body?.tag === "string" && typeof body.page === "string" && body.page.startsWith(`${body.tag} `)) tags.push(body.tag);
  }
  return tags;
}

const entryTags = (kind, tag) => (kind.endsWith("iteration") ? [`r:${tag}`, `e:${tag}`, `t:${tag}`] : [`r:${tag}`]);

/** Counts what an action (or a background compaction's end) confirmed. */
function record(ledger, kind, tag, outcome) {
  if (outcome.appended) for (const t of entryTags(kind, tag)) ledger.confirmed.add(t);
  if (outcome.deleted) for (const t of tagsOf(outcome.deleted)) ledger.deleted.add(t);
  if (outcome.deleted) for (const t of bodiesOf(outcome.deleted)) ledger.deletedBodies.add(t);
  if (outcome.deletedBodies) for (const t of bodiesOf(outcome.deletedBodies)) ledger.deletedBodies.add(t);
  if (outcome.compacted) ledger.counts.compact += 1;
  if (outcome.archivedInLocalStorage) ledger.archivedInLocalStorage += 1;
  if (outcome.rolledBack) ledger.counts.rollback += 1;
  if (outcome.deleted || outcome.deletedBodies) ledger.counts.delete += 1;
  if (outcome.rung) ledger.counts[outcome.rung] += 1;
  if (outcome.background) ledger.counts.background += 1;
  if (outcome.refused) ledger.counts.refused[outcome.refused] = (ledger.counts.refused[outcome.refused] ?? 0) + 1;
}

async function drive(page, tab, random, ledger, deadline) {
  let n = 0;
  while (Date.now() < deadline) {
    const roll = random();
    const tag = `t${tab}-${n++}`;
    const kind =
      roll < 0.3 ? "iteration" : roll < 0.45 ? "slow-iteration" : roll < 0.6 ? "append" : roll < 0.78 ? "compact" : roll < 0.86 ? "rollback" : roll < 0.94 ? "delete" : "reload";
    if (kind === "reload") {
      // An action in flight when the page goes: its entries may or may not have landed.
      const inFlight = random() < 0.5 ? "iteration" : "compact";
      const flightTag = `t${tab}-${n++}`;
      const pending = act(page, inFlight, flightTag).catch(() => null);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 30)));
      await page.reload();
      const landed = await pending;
      if (inFlight === "iteration") {
        for (const t of entryTags(inFlight, flightTag)) (landed?.appended ? ledger.confirmed : ledger.maybe).add(t);
      }
      await setUp(page);
      ledger.counts.reload += 1;
      continue;
    }
    record(ledger, kind, tag, await act(page, kind, tag));
  }
}

test(`two tabs appending, compacting, rolling back, deleting archives and reloading for ${RUN_MS / 1000} s lose and duplicate nothing`, async () => {
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
  const { context, pages, errors } = await openTabs();
  const ledger = {
    confirmed: new Set(),
    maybe: new Set(),
    deleted: new Set(),
    deletedBodies: new Set(),
    counts: { compact: 0, clear: 0, summarize: 0, rollback: 0, delete: 0, reload: 0, background: 0, refused: {} },
    archivedInLocalStorage: 0,
  };
  const deadline = Date.now() + RUN_MS;
  await Promise.all(pages.map((page, tab) => drive(page, tab, generator(seed * 31 + tab), ledger, deadline)));

  // The background compactions still under way end (a tab's loop has stopped: none waits for
  // a boundary); a compaction a reload interrupted is settled by the next compactor of that tab.
  for (const page of pages) {
    for (const outcome of await page.evaluate(() => Promise.all(window.chaos.pending))) record(ledger, "compact", "", outcome);
  }
  for (const page of pages) await page.evaluate(() => window.chaos.compactor.recover());
  const stored = await pages[0].evaluate(() =>
    window.chaos.logs.withLock(async () => {
      const { logs, compactor } = window.chaos;
      const infos = await compactor.archives();
      return {
        live: { reasoningLog: logs.reasoningLog(), executionLog: logs.executionLog(), toolActivityLog: logs.toolActivityLog() },
        archives: await Promise.all(infos.map(async (info) => ({ rung: info.rung, data: (await compactor.readArchive(info.key)).data }))),
      };
    }),
  );
  // Entries: the live logs and the summaries' archives (a clearing's archive holds bodies whose
  // entries stand elsewhere as placeholders). Bodies: wherever they are whole.
  const seen = new Map();
  const bodies = new Map();
  for (const { rung, data } of [{ rung: "live", data: stored.live }, ...stored.archives]) {
    if (rung !== "clear") for (const tag of tagsOf(data)) seen.set(tag, (seen.get(tag) ?? 0) + 1);
    for (const tag of bodiesOf(data)) bodies.set(tag, (bodies.get(tag) ?? 0) + 1);
  }
  const report = `seed ${seed}; ${JSON.stringify(ledger.counts)}; ${ledger.confirmed.size} entries confirmed`;
  const lost = [...ledger.confirmed].filter((tag) => !seen.has(tag) && !ledger.deleted.has(tag));
  const twice = [...seen].filter(([, count]) => count > 1).map(([tag]) => tag);
  const unknown = [...seen.keys()].filter((tag) => !ledger.confirmed.has(tag) && !ledger.maybe.has(tag));
  const deletedButPresent = [...ledger.deleted].filter((tag) => seen.has(tag));
  const executions = [...ledger.confirmed].filter((tag) => tag.startsWith("e:")).map((tag) => tag.slice(2));
  const bodiesLost = executions.filter((tag) => !bodies.has(tag) && !ledger.deletedBodies.has(tag));
  const bodiesTwice = [...bodies].filter(([, count]) => count > 1).map(([tag]) => tag);
  assert.deepEqual(
    { lost, twice, unknown, deletedButPresent, bodiesLost, bodiesTwice },
    { lost: [], twice: [], unknown: [], deletedButPresent: [], bodiesLost: [], bodiesTwice: [] },
    report,
  );
  assert.ok(ledger.counts.clear >= 1, `no clearing ran: ${report}`);
  const { compact, rollback, delete: deleted, reload, background } = ledger.counts;
  assert.ok(compact >= 3 && rollback >= 1 && deleted >= 1 && reload >= 1 && background >= 1, `too little happened: ${report}`);
  // Every archive went to the default store, IndexedDB; what is left of them is there too.
  assert.equal(ledger.archivedInLocalStorage, 0, report);
  const inDatabase = await pages[0].evaluate(databaseArchives, "gdrs_archived_logs_");
  assert.equal(Object.keys(inDatabase).length, stored.archives.length, report);
  assert.deepEqual(errors, []);
  console.log(`chaos: ${report}`);
  await context.close();
});

test("appends through withLock from two tabs at once all land; the lock nests, rejects bad work and is given back", async () => {
  const { context, pages } = await openTabs();
  const PER_TAB = 300;
  await Promise.all(
    pages.map((page, tab) =>
      page.evaluate(
        async ({ tab, PER_TAB }) => {
          const { logs } = window.chaos;
          for (let i = 0; i < PER_TAB; i++) {
            await logs.withLock(() => logs.appendExecution({ code: `chaos("t${tab}-${i}")`, success: true, source: "chaos" }));
          }
        },
        { tab, PER_TAB },
      ),
    ),
  );
  const outcome = await pages[1].evaluate(async () => {
    const { logs, compactor } = window.chaos;
    // Read under the lock: outside it this tab's copy of localStorage may not show the other
    // tab's last append yet (Chromium brings copies up to date asynchronously).
    const codes = await logs.withLock(() => logs.executionLog().map((entry) => entry.code));
    for (let i = 0; i < 6; i++) await logs.withLock(() => { logs.startIteration(); logs.appendReasoning(`step ${i} `.repeat(80)); logs.finishIteration(); });
    // A compaction started inside withLock shares this tab's hold instead of waiting for it.
    const nested = await logs.withLock(() => compactor.compact().then((r) => r.iterations, (err) => err.code));
    const notAFunction = await logs.withLock(42).then(() => "resolved", (err) => `${err.name}/${err.code}`);
    const thrown = await logs.withLock(() => { throw new RangeError("app error"); }).then(() => "resolved", (err) => `${err.name}: ${err.message}`);
    const after = await logs.withLock(async () => { await new Promise((r) => setTimeout(r, 5)); return "given back"; });
    return { count: codes.length, unique: new Set(codes).size, nested, notAFunction, thrown, after };
  });
  assert.deepEqual(outcome, {
    count: 2 * PER_TAB,
    unique: 2 * PER_TAB,
    nested: [1, 5],
    notAFunction: "ContextCompactorError/invalid_input",
    thrown: "RangeError: app error",
    after: "given back",
  });
  await context.close();
});

test("a tab whose own write was the last one never waits for the lock to catch up: not after localStorage.clear(), not after a restored snapshot", async () => {
  const { context, pages } = await openTabs();
  const outcome = await pages[0].evaluate(async () => {
    const { logs } = window.chaos;
    // Count the catch-up polls (4 ms timers) the lock makes while this tab works alone.
    const realSetTimeout = globalThis.setTimeout;
    let polls = 0;
    globalThis.setTimeout = (fn, ms, ...rest) => {
      if (ms === 4) polls += 1;
      return realSetTimeout(fn, ms, ...rest);
    };
    try {
      await logs.withLock(() => logs.appendReasoning("first"));
      const snapshot = { ...localStorage };
      const rounds = [];
      for (const reset of ["clear", "restore", "clear"]) {
        if (reset === "clear") localStorage.clear();
        else for (const [key, value] of Object.entries(snapshot)) localStorage.setItem(key, value);
        const before = polls;
        await logs.withLock(() => logs.appendReasoning(`after ${reset}`));
        await logs.withLock(() => logs.appendReasoning("again"));
        rounds.push(polls - before);
      }
      return { rounds, last: logs.reasoningLog().at(-1) };
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
  });
  assert.deepEqual(outcome, { rounds: [0, 0, 0], last: "again" });
  // The other tab still catches up with this tab's writes before it writes.
  const seen = await pages[1].evaluate(async () => {
    const { logs } = window.chaos;
    await logs.withLock(() => logs.appendReasoning("from the other tab"));
    return logs.reasoningLog().slice(-2);
  });
  assert.deepEqual(seen, ["again", "from the other tab"]);
  await context.close();
});
