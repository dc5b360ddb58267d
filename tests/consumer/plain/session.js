// What both no-bundler pages do once the module is initialised: five iterations appended under
// the cross-tab lock, one offline compaction; resolves to the iterations it compacted.
export async function compactASession({ LogStore, Compactor }, prefix) {
  const logs = new LogStore({ prefix });
  logs.clear();
  for (let i = 1; i <= 5; i++) {
    await logs.withLock(() => {
      logs.startIteration();
      logs.appendReasoning(`Step ${i}: loaded orders.csv with ${1000 * i} rows and checked the totals against the report of the finance team.`);
      logs.appendExecution({ success: true, code: `const rows = load("orders.csv");\nreturn rows.length * ${i};`, result: 1000 * i });
      logs.finishIteration();
    });
  }
  const compacted = await new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 800 }).compact();
  return compacted.iterations;
}

/** Writes `result` where the test reads it and marks the page done. */
export function report(result) {
  document.getElementById("out").textContent = JSON.stringify(result);
  document.body.dataset.done = "true";
}
