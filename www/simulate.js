// Seeded simulations of a reasoning loop, so the same session can be replayed: the demo's loop
// (realistic reasoning, code executions, some failing then fixed, and tool operations, written
// through LogStore), and a GDRS mode that writes the three logs the way the GDRS app does.

/** Mulberry32: a small deterministic PRNG. */
export function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const DATASETS = ["sales_2026.csv", "customers.json", "web_events.log", "inventory.xlsx", "support_tickets.csv"];
const QUESTIONS = [
  "which region grew fastest quarter over quarter",
  "why the March totals disagree with the finance report",
  "how many customers churned after the price change",
  "which product lines are overstocked",
  "what drives the spike in ticket volume on Mondays",
];

const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const int = (rand, lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

/** Appends the entries of iteration `n` (already started) to `logs`. */
export function simulateIteration(logs, n, seed) {
  const rand = seeded(seed * 7919 + n);
  const dataset = DATASETS[(n - 1) % DATASETS.length];
  const question = QUESTIONS[(n - 1) % QUESTIONS.length];
  const rows = int(rand, 8_000, 120_000);
  const columns = int(rand, 6, 28);
  logs.appendReasoning(
    `Goal for this step: find out ${question}. I will load ${dataset} (${rows.toLocaleString("en-US")} rows, ` +
      `${columns} columns), check the date range ${2026}-0${int(rand, 1, 3)}-01 to 2026-0${int(rand, 4, 9)}-30, ` +
      `and aggregate by ${pick(rand, ["region", "month", "product line", "customer segment"])}. ` +
      `Previous totals were off by ${int(rand, 2, 19)}.${int(rand, 0, 9)}%, so I suspect ${pick(rand, [
        "duplicated order ids after the merge",
        "a timezone shift in the event timestamps",
        "returns being counted as sales",
        "a missing currency conversion for EUR rows",
      ])}.`,
  );
  const total = int(rand, 100_000, 9_000_000);
  if (rand() < 0.45) {
    logs.appendExecution({
      success: false,
      code: `const data = await vfs.read("${dataset}");\nconst grouped = data.rows.groupBy(r => r.region);\nreturn grouped;`,
      error: { message: "TypeError: data.rows.groupBy is not a function" },
      executionTime: int(rand, 3, 40),
      metadata: { task: `aggregate ${dataset}` },
    });
    logs.appendReasoning("Array.prototype.groupBy does not exist here; Object.groupBy or a plain loop works instead.");
  }
  logs.appendExecution({
    success: true,
    code:
      `const data = await vfs.read("${dataset}");\nconst totals = {};\nfor (const row of data.rows) {\n` +
      `  const key = row.region ?? "unknown";\n  totals[key] = (totals[key] ?? 0) + Number(row.amount);\n}\nreturn totals;`,
    result: { north: Math.round(total * 0.41), south: Math.round(total * 0.33), west: Math.round(total * 0.26), rows },
    executionTime: int(rand, 20, 900),
    metadata: { task: `aggregate ${dataset}` },
  });
  logs.appendToolActivity({
    type: n % 3 === 0 ? "fetch" : "vfs",
    action: n % 3 === 0 ? "get" : "write",
    status: "success",
    details: n % 3 === 0 ? `https://data.example/${dataset}` : `notes/step-${n}.md`,
  });
  logs.appendReasoning(
    `Conclusion of step ${n}: north leads with ${Math.round(total * 0.41).toLocaleString("en-US")} ` +
      `(${(41 + rand() * 3).toFixed(1)}% of ${total.toLocaleString("en-US")}); next I will verify the result against the reference report.`,
  );
  return `Iteration ${n}: ${question}`;
}

/** A fetched page of about 6,000 characters (1,500 tokens) whose one figure is `revenue`. */
export function fetchedPage(n, revenue) {
  const rows = Array.from({ length: 110 }, (_, i) => `<p>Row ${i}: the region moved as expected this week.</p>`);
  return `<html><head><title>Regional report ${n}</title></head><body>${rows.join("")}<p>Net revenue ${revenue} in report_${n}.csv</p></body></html>`;
}

/** The bulky output of an agent that reads a web page in iteration `n`: an execution whose
 * result is the page (a string), and the browser tool's entry with the URL and the page. */
export function simulateFetch(logs, n, seed) {
  const rand = seeded(seed * 104729 + n);
  const revenue = `${int(rand, 1_000, 99_000)}.${int(rand, 0, 9)}`;
  const url = `https://reports.example/region/${n}`;
  const page = fetchedPage(n, revenue);
  logs.appendExecution({ success: true, code: `return await fetchPage("${url}");`, result: page, source: "fetch", executionTime: int(rand, 80, 900) });
  logs.appendToolActivity({ type: "browser", action: "fetch", status: "success", details: { url, html: page } });
  return revenue;
}

// GDRS mode: a seeded simulation of a session of GDRS ("Gemini Deep Research System"), the app this
// package was made for, writing its three logs the way that app does (its code at commit
// aed6a04): a SESSION START entry with the query; `=== ITERATION n ===` only when the model
// wrote reasoning text (a tools-only iteration writes no header); `=== JAVASCRIPT EXECUTION ===`
// per successful run; `=== VAULT READ ===` with content cut by `.slice` (a lone surrogate);
// `=== ITERATION n OPERATION WARNINGS ===` for failed operations; `=== ITERATION n ERROR ===`
// labelled with the last completed n, after which the next iteration skips a number.
// Executions carry no iteration; every run has a `js_execute` tool entry with the same id;
// vault and memory ids repeat across iterations. Results include 2^70, 0.1 + 0.2 and 1e-7.
//
// It also returns the truth: the iteration each entry was written in, and which failures a
// later iteration resolved, so tests can check what the package infers.

export const GDRS_KEYS = {
  reasoning: "gdrs_reasoning_log",
  execution: "gdrs_execution_log",
  tools: "gdrs_tool_activity_log",
};

const QUERIES = [
  "Which suppliers caused the Q3 margin drop, and by how much?",
  "Find the 🚀 launch week with the highest conversion and explain why",
  "Reconcile the March invoices against the bank export",
];
const VAULT = [
  { id: "supplier_notes", content: "Supplier review 🚀 notes: Acme raised prices 12% in July; Borealis held." },
  { id: "bank_export", content: "Bank export 2026-03 — 412 rows 💶, 3 unmatched transfers." },
];

const read = (storage, key) => JSON.parse(storage.getItem(key) ?? "[]");
const write = (storage, key, log) => storage.setItem(key, JSON.stringify(log));
const pretty = (value) => (value === undefined ? "undefined" : JSON.stringify(value, null, 2));

/**
 * Writes a GDRS session of `iterations` iterations into `storage` (anything with getItem and
 * setItem: localStorage, or a Map-backed shim). Returns the truth about what was written.
 */
export function simulateGdrsSession(storage, { seed = 1, iterations = 8, startMs = Date.UTC(2025, 10, 11, 16, 0, 0) } = {}) {
  const rand = seeded(seed);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  let now = startMs + int(0, 999);
  const iso = () => {
    now += int(40, 900);
    return new Date(now).toISOString();
  };
  const truth = { reasoning: [], execution: [], tools: [], results: [], failures: [], query: "" };
  const pushReasoning = (text, n) => {
    const log = read(storage, GDRS_KEYS.reasoning);
    log.push(text);
    write(storage, GDRS_KEYS.reasoning, log);
    truth.reasoning.push(n);
  };
  const pushTool = (activity, n) => {
    const log = read(storage, GDRS_KEYS.tools);
    log.push({ timestamp: iso(), iteration: n, ...activity });
    write(storage, GDRS_KEYS.tools, log);
    truth.tools.push(n);
  };
  const run = (n, { code, value, error, blockIndex }) => {
    const id = `exec_${now}_${Math.floor(rand() * 36 ** 6).toString(36).padStart(6, "0")}`;
    const success = error === undefined;
    const submittedAt = iso();
    const executionTime = int(2, 60);
    const entry = {
      timestamp: iso(),
      id,
      code,
      source: "auto",
      context: { blockIndex },
      metadata: {},
      submittedAt,
      success,
      result: success ? value : undefined,
      resolvedCode: code,
      logs: success ? [{ type: "log", message: `rows: ${int(10, 900)}` }] : [],
      error: success ? undefined : { message: error, name: "Error" },
      executionTime,
    };
    const log = read(storage, GDRS_KEYS.execution);
    log.push(entry);
    write(storage, GDRS_KEYS.execution, log);
    truth.execution.push(n);
    pushTool(
      {
        type: "js_execute",
        action: "auto_run",
        status: success ? "success" : "error",
        executionTime,
        codeSize: code.length,
        vaultRefsUsed: 0,
        queueLengthOnFinish: 0,
        error: success ? undefined : error,
        id,
      },
      n,
    );
    if (success) {
      pushReasoning(
        [
          "=== JAVASCRIPT EXECUTION ===",
          `ID: ${id}`,
          "SOURCE: auto",
          `TIME: ${executionTime}ms`,
          `CODE:\n${code}`,
          `CONSOLE OUTPUT:\n[log] rows: ${int(10, 900)}`,
          `RETURN VALUE:\n${pretty(value)}`,
        ].join("\n"),
        n,
      );
    }
    return id;
  };

  truth.query = QUERIES[seed % QUERIES.length];
  pushReasoning(
    `=== SESSION START ===\nTimestamp: ${iso()}\nQuery: ${truth.query}\nInitiating intelligent analysis...`,
    0,
  );
  const toolsOnly = Math.min(3, iterations - 1);
  const errorAfter = iterations >= 6 ? 4 : 0;
  const openTask = `const unmatched = reconcile(bank, ledger, { strict: true }); // iteration-${seed}`;
  let n = 0;
  while (n < iterations) {
    n += 1;
    if (n === errorAfter + 1 && errorAfter > 0) {
      // The model failed: the entry names the last completed iteration; this number is skipped.
      pushReasoning(`=== ITERATION ${n - 1} ERROR ===\nError: Empty response from model\nConsecutive: 1/3`, n - 1);
      truth.failures.push({ iteration: n - 1, subject: "iteration", resolved: true });
      n += 1;
    }
    const warnings = [];
    if (n !== toolsOnly) {
      pushReasoning(
        `=== ITERATION ${n} ===\nStep ${n}: I compare the supplier ledger against ${int(3, 40)} invoices; ` +
          `the gap so far is ${int(1, 19)}.${int(0, 9)}%. Next I check ${rand() < 0.5 ? "the July price list" : "the freight surcharges"}.`,
        n,
      );
    }
    const task = `const rows = await vault.read("ledger_${n % 3}");`;
    if (rand() < 0.4 || n === 2) {
      const id = run(n, {
        code: `${task}\nreturn rows.groupBy((r) => r.supplier);`,
        error: "TypeError: rows.groupBy is not a function",
        blockIndex: 0,
      });
      warnings.push(`- [execution] ${id}: TypeError: rows.groupBy is not a function`);
      truth.failures.push({ iteration: n, subject: id, resolved: true });
    }
    const values = [
      { supplier: "Acme", gap: 2 ** 70, share: 0.1 + 0.2 },
      { unmatched: int(1, 9), tolerance: 1e-7 },
      [int(100, 999), int(100, 999), "Ab\ud83d".slice(0, 3)],
      int(10_000, 99_999),
    ];
    const value = values[(n + seed) % values.length];
    const id = run(n, { code: `${task}\nconst out = summarise(rows, ${n});\nreturn out;`, value, blockIndex: 1 });
    truth.results.push({ iteration: n, id, json: JSON.stringify(value) });
    if (n === 2) {
      const failed = run(n, { code: openTask, error: "ReferenceError: reconcile is not defined", blockIndex: 2 });
      warnings.push(`- [execution] ${failed}: ReferenceError: reconcile is not defined`);
      truth.failures.push({ iteration: n, subject: failed, resolved: false });
    }
    const vault = VAULT[n % VAULT.length];
    const limit = vault.content.indexOf("🚀") >= 0 ? vault.content.indexOf("🚀") + 1 : 24;
    pushTool({ type: "vault", action: "read", id: vault.id, status: "success", dataSize: limit, limit: String(limit) }, n);
    pushReasoning(`=== VAULT READ ===\nEntry: ${vault.id}\nLimit: ${limit}\nContent:\n${vault.content.slice(0, limit)}`, n);
    pushTool({ type: "memory", action: "update", id: "memory_findings", status: "success", note: `after ${n}` }, n);
    if (n === 5) {
      pushTool({ type: "vault", action: "read", id: "missing_entry", status: "error", error: "Vault entry not found" }, n);
      warnings.push("- [vault] missing_entry: Vault entry not found: missing_entry");
      truth.failures.push({ iteration: n, subject: "vault:missing_entry", resolved: false });
    }
    if (warnings.length > 0) {
      pushReasoning(
        [`=== ITERATION ${n} OPERATION WARNINGS ===`, ...warnings, `Operation bundle duration: ${int(5, 90)}ms`].join("\n"),
        n,
      );
    }
  }
  return { ...truth, current: n };
}

/** A Map-backed stand-in for localStorage (for Node). */
export function memoryStorage() {
  const map = new Map();
  return {
    getItem: (key) => (map.has(key) ? map.get(key) : null),
    setItem: (key, value) => map.set(key, String(value)),
    removeItem: (key) => map.delete(key),
    entries: () => Object.fromEntries(map),
  };
}
