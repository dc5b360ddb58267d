// A seeded simulation of a reasoning loop: realistic reasoning, code executions (some failing,
// then fixed) and tool operations, so the same session can be replayed.

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
