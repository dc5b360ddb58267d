// The fidelity benchmark (not a test): how many of the facts the next iteration needs survive
// three chained compactions, in Chromium with the built package, on seeded sessions of the
// demo's simulator and of its GDRS mode. Two providers: the built-in offline summary, and a
// custom provider that drops a random fifth of what it is given. `node bench/fidelity.mjs`
// prints the table; bench/run.mjs includes it.
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer } from "../scripts/serve.mjs";

const SEEDS = [1, 2, 3, 4, 5];

/** Runs in the page: every session, both providers, three compactions each. */
async function inPage(seeds) {
  const { default: init, LogStore, Compactor } = await import("/pkg/context_compactor.js");
  // The demo page initialises the module too, but may not have finished yet.
  await init();
  const { simulateIteration, simulateGdrsSession, memoryStorage, GDRS_KEYS, seeded } = await import("/simulate.js");

  // A provider that copies what it is given (the facts the prompt lists, the first line of each
  // iteration's reasoning) under the six headings, dropping each line with probability 1/5.
  const lossy = (seed) => {
    const rand = seeded(seed);
    return async (prompt) => {
      const block = prompt.split("## FACTS THE SUMMARY MUST KEEP\n")[1];
      const facts = block ? block.split("\n## ")[0].split("\n").filter((l) => l.startsWith("- ")) : [];
      const history = [...prompt.matchAll(/^--- Iteration (\d+) ---\n(.{1,160})/gm)].map((m) => `- Iteration ${m[1]}: ${m[2]}`);
      const kept = [...facts, ...history].filter(() => rand() >= 0.2);
      return [
        "### 🎯 OBJECTIVE ACHIEVED\n- The session's work so far, as given.",
        `### 📊 KEY DISCOVERIES\n${kept.join("\n")}`,
        "### ✅ SUCCESSFUL SOLUTIONS\n- The last working code of each task is in the archive.",
      ].join("\n");
    };
  };

  /** Numbers of four digits or more and ids in a fact, which must be in the summary verbatim. */
  const anchors = (fact) => [...fact.replace(/(\d),(?=\d)/g, "$1").matchAll(/[A-Za-z0-9_.\/:-]*\d{4,}[A-Za-z0-9_.\/-]*|[a-z]+_[a-z0-9_]*\d[a-z0-9_]*/g)].map((m) => m[0].replace(/[.:]+$/, ""));
  const silentLosses = (result) =>
    result.coverage.kept.filter((fact) => anchors(fact).some((a) => !result.summary.replace(/(\d),(?=\d)/g, "$1").includes(a))).length;

  const tally = () => ({ sessions: 0, compactions: 0, succeeded: 0, namedFailures: 0, required: 0, kept: 0, silent: 0, retried: 0, failureNamesAll: true });
  const add = (t, outcome) => {
    t.compactions += 1;
    if (outcome.result) {
      t.succeeded += 1;
      t.required += outcome.result.coverage.required.length;
      t.kept += outcome.result.coverage.kept.length;
      t.silent += silentLosses(outcome.result);
      if (outcome.result.attempts > 1) t.retried += 1;
    } else if (outcome.error.code === "invalid_summary") {
      t.namedFailures += 1;
      t.failureNamesAll &&= outcome.missing.every((fact) => outcome.error.message.includes(fact));
    } else {
      throw new Error(`unexpected ${outcome.error.code}: ${outcome.error.message}`);
    }
  };
  const compactOnce = async (compactor) => {
    const ledger = compactor.plan().ledger;
    try {
      // The usage rule is not what this measures: compact as an app does after a context-limit error.
      return { result: await compactor.compact({ trigger: "context_limit_error" }) };
    } catch (err) {
      return { error: { code: err.code, message: err.message }, missing: ledger.filter((f) => err.message.includes(f)) };
    }
  };

  const provider = (kind, seed) => (kind === "offline" ? { type: "offline" } : { type: "custom", generate: lossy(seed) });
  const rows = {};
  for (const kind of ["offline", "lossy"]) {
    // The demo's loop: 6 iterations, then 5 more before each of the next two compactions.
    const demo = (rows[`demo · ${kind}`] = tally());
    for (const seed of seeds) {
      localStorage.clear();
      const logs = new LogStore({ prefix: `fid_` });
      const compactor = new Compactor(logs, { provider: provider(kind, seed), contextWindowTokens: 3000, retryDelayMs: 0 });
      demo.sessions += 1;
      for (const grow of [6, 5, 5]) {
        for (let i = 0; i < grow; i++) {
          const n = logs.startIteration();
          simulateIteration(logs, n, seed);
          logs.finishIteration();
        }
        add(demo, await compactOnce(compactor));
      }
    }
    // GDRS mode: an 18-iteration session written the way GDRS writes it, fed in three stages.
    const gdrs = (rows[`GDRS · ${kind}`] = tally());
    for (const seed of seeds) {
      localStorage.clear();
      const scratch = memoryStorage();
      const truth = simulateGdrsSession(scratch, { seed, iterations: 18 });
      const logs = new LogStore();
      const compactor = new Compactor(logs, { provider: provider(kind, seed), contextWindowTokens: 6000, retryDelayMs: 0 });
      gdrs.sessions += 1;
      const stage = (from, to) => {
        for (const [key, iterations] of [[GDRS_KEYS.reasoning, truth.reasoning], [GDRS_KEYS.execution, truth.execution], [GDRS_KEYS.tools, truth.tools]]) {
          const all = JSON.parse(scratch.getItem(key) ?? "[]");
          const live = JSON.parse(localStorage.getItem(key) ?? "[]");
          live.push(...all.filter((_, i) => iterations[i] > from && iterations[i] <= to));
          localStorage.setItem(key, JSON.stringify(live));
        }
      };
      let from = 0;
      for (const to of [6, 12, 18]) {
        stage(from, to);
        from = to;
        add(gdrs, await compactOnce(compactor));
      }
    }
  }
  return rows;
}

/** The fidelity table over a running browser and a server of the demo mounts. */
export async function measureFidelity(browser, baseUrl) {
  const page = await browser.newPage();
  try {
    await page.goto(baseUrl);
    return await page.evaluate(inPage, SEEDS);
  } finally {
    await page.close();
  }
}

/** The table in markdown. */
export function fidelityTable(rows) {
  const lines = [
    "| sessions · provider | compactions | succeeded | of them retried | facts required | facts kept | retention | silent losses | named failures (`invalid_summary`) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  for (const [name, t] of Object.entries(rows)) {
    const retention = t.required === 0 ? "–" : `${((t.kept / t.required) * 100).toFixed(1)}%`;
    lines.push(`| ${name} (${t.sessions} seeds) | ${t.compactions} | ${t.succeeded} | ${t.retried} | ${t.required} | ${t.kept} | ${retention} | ${t.silent} | ${t.namedFailures}${t.failureNamesAll ? "" : " (some unnamed!)"} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(0);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  try {
    const rows = await measureFidelity(browser, `http://127.0.0.1:${server.address().port}/`);
    console.log(fidelityTable(rows));
  } finally {
    await browser.close();
    server.close();
  }
}
