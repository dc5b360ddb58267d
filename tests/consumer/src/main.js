// What a user's app with a bundler does: import the names it needs (no init: the bundler entry
// is initialised on import), compact with the offline provider.
import { LogStore, Compactor } from "context-compactor";

const out = document.getElementById("out");
try {
  const logs = new LogStore({ prefix: "consumer_" });
  logs.clear();
  for (let i = 1; i <= 5; i++) {
    logs.startIteration();
    logs.appendReasoning(`Step ${i}: loaded orders.csv with ${1000 * i} rows and checked the totals against the report.`);
    logs.appendExecution({ success: true, code: `const rows = load("orders.csv");\nreturn rows.length * ${i};`, result: 1000 * i });
    logs.appendToolActivity({ type: "vfs", action: "write", status: "success", details: `notes/${i}.md` });
    logs.finishIteration();
  }
  const compactor = new Compactor(logs, { provider: { type: "offline" }, contextWindowTokens: 1200 });
  const result = await compactor.compact();
  out.textContent = JSON.stringify({ ok: true, iterations: result.iterations, saved: result.tokensSaved });
} catch (err) {
  out.textContent = JSON.stringify({ ok: false, code: err.code, message: String(err.message ?? err) });
}
document.body.dataset.done = "true";
