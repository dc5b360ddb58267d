// The same pipeline a user could write in plain JavaScript, as the baseline: read the three
// keys, gather iterations 1..N-1, build a prompt of the same shape, validate, write the archive
// and the logs. And the floor: the same bytes through localStorage and JSON alone.
const KEYS = ["gdrs_reasoning_log", "gdrs_execution_log", "gdrs_tool_activity_log"];
const HEADER = /^=== ITERATION (\d+) ===/;

function gather() {
  const [reasoning, execution, tools] = KEYS.map((k) => JSON.parse(localStorage.getItem(k) ?? "[]"));
  let current = 0;
  const reasoningIterations = reasoning.map((entry) => {
    const m = HEADER.exec(entry);
    if (m) current = Number(m[1]);
    return current;
  });
  const split = (entries, iterations) => {
    const old = [];
    const kept = [];
    entries.forEach((e, i) => (iterations[i] < current ? old : kept).push(e));
    return [old, kept];
  };
  return {
    current,
    reasoning: split(reasoning, reasoningIterations),
    execution: split(execution, execution.map((e) => e.iteration ?? current)),
    tools: split(tools, tools.map((e) => e.iteration ?? current)),
  };
}

function buildPrompt(g) {
  const out = [`# CONTEXT COMPACTION\n\nCompact iterations 1-${g.current - 1}.\n\n## REASONING HISTORY`];
  for (const r of g.reasoning[0]) out.push(HEADER.test(r) ? `\n--- ${r.slice(4, -4)} ---` : r.replace(/^#/gm, "\\#"));
  out.push("\n## EXECUTION HISTORY");
  g.execution[0].forEach((e, i) => {
    out.push(`\n[${i + 1}] Iteration ${e.iteration} · ${e.success ? "SUCCESS" : "FAILED"} · ${e.executionTime} ms · source: ${e.source}`);
    out.push("```js\n" + e.code + "\n```");
    out.push(e.error ? `Error: ${e.error.message}` : `Result: ${JSON.stringify(e.result)}`);
  });
  out.push("\n## TOOL ACTIVITY");
  const byType = new Map();
  for (const t of g.tools[0]) byType.set(t.type, [...(byType.get(t.type) ?? []), t]);
  for (const [type, items] of byType) {
    out.push(`\n${type} (${items.length} operations)`);
    for (const t of items) out.push(`- Iteration ${t.iteration} · ${t.action} · ${t.status} · ${JSON.stringify(t.details)}`);
  }
  return out.join("\n");
}

function validate(summary) {
  const titles = ["OBJECTIVE ACHIEVED", "KEY DISCOVERIES", "SUCCESSFUL SOLUTIONS"];
  const found = summary.split("\n").filter((l) => l.startsWith("###")).map((l) => l.replace(/^###[^A-Za-z]*/, "").trim().toUpperCase());
  return titles.every((t) => found.includes(t)) && summary.length >= 100;
}

/** The JS baseline: one compaction with a provider that answers at once. */
export async function jsCompaction(generate) {
  const g = gather();
  const prompt = buildPrompt(g);
  const summary = await generate(prompt);
  if (!validate(summary)) throw new Error("invalid");
  const now = Date.now();
  localStorage.setItem(
    `gdrs_archived_logs_${now}`,
    JSON.stringify({ timestamp: now, iterations: [], data: { reasoningLog: g.reasoning[0], executionLog: g.execution[0], toolActivityLog: g.tools[0] } }),
  );
  localStorage.setItem("gdrs_execution_log", JSON.stringify(g.execution[1]));
  localStorage.setItem("gdrs_tool_activity_log", JSON.stringify(g.tools[1]));
  localStorage.setItem("gdrs_reasoning_log", JSON.stringify([`=== COMPACTED SUMMARY (Iterations 1-${g.current - 1}) ===\n${summary}\n=== END COMPACTED SUMMARY ===`, ...g.reasoning[1]]));
  return prompt.length;
}

/** The floor: read the same keys, parse, serialise, write the archive and the logs back. */
export function floor() {
  const texts = KEYS.map((k) => localStorage.getItem(k) ?? "[]");
  const values = texts.map((t) => JSON.parse(t));
  const now = Date.now();
  localStorage.setItem(`gdrs_archived_logs_${now}`, JSON.stringify(values));
  KEYS.forEach((k, i) => localStorage.setItem(k, JSON.stringify(values[i])));
}
