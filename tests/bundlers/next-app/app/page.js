"use client";
// A Next.js client component: the package imported as any other (Next also renders this
// component on the server, where the Node entry serves the import), init() in an effect.
import { useEffect, useState } from "react";
import init, { LogStore, Compactor, ContextCompactorError } from "context-compactor";

async function compact() {
  await init();
  const logs = new LogStore({ prefix: "demo_" });
  for (let n = 1; n <= 4; n++) {
    logs.startIteration();
    logs.appendReasoning(`Step ${n}: counted the rows of shard_${n}.csv and compared them with the report.`);
    logs.appendExecution({ success: true, code: `return count("shard_${n}.csv");`, result: { rows: 1000 * n } });
    logs.finishIteration();
  }
  const compactor = new Compactor(logs, { provider: { type: "offline" } });
  const result = await compactor.compact({ trigger: "context_limit_error" });
  return `iterations ${result.iterations.join("-")} compacted: ${result.tokensSaved} tokens saved`;
}

export default function Page() {
  const [status, setStatus] = useState("");
  useEffect(() => {
    compact().then(setStatus, (err) => setStatus(ContextCompactorError.isInstance(err) ? `${err.code}: ${err.message}` : String(err)));
  }, []);
  return <output>{status}</output>;
}
