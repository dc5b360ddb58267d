// The real-model benchmark (#64; not a test: what the summaries say is the model's). A
// data-pipeline agent runs in Chromium with the built package's own Gemini provider pointed at
// the repository's Gemini mock, whose answers come from a real small model on the CPU
// (SmolLM2-135M-Instruct through node-llama-cpp; structured output through a JSON-schema
// grammar, as Gemini's `responseSchema` constrains it). The agent compacts by its own rhythm
// (`shouldAutoCompact()`, then `context_limit_error` once the window is full) in a 5,000-token
// window, under a Gemma model name (plain text) and a Gemini 2.5 one (structured output).
// Per run: iterations, compactions by rung, model calls, answers cut at their limit and
// salvaged, fallbacks and their codes, upgrades, whether the loop was ever stuck, seconds.
// `bash bench/real-model/setup.sh && bash scripts/build.sh pkg && node bench/real-model/run.mjs [iterations]`
import { fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { getLlama, LlamaChatSession } from "node-llama-cpp";
import { startMock } from "../../tests/gemini-mock/server.mjs";
import { freshPage, withBenchBrowser } from "../browser.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const MODEL = join(here, "model/SmolLM2-135M-Instruct.Q4_1.gguf");
const ITERATIONS = Number(process.argv[2] ?? 40);
/** The output limit the compactor asks for: what the small model writes in 20–40 s here. */
const MAX_OUTPUT_TOKENS = 600;

/** Gemini's schema (OpenAPI types in capitals) as the JSON schema a grammar takes. */
function jsonSchema(schema) {
  if (Array.isArray(schema)) return schema.map(jsonSchema);
  if (!schema || typeof schema !== "object") return schema;
  const out = {};
  for (const [name, value] of Object.entries(schema)) {
    if (name === "propertyOrdering") continue;
    out[name] = name === "type" ? String(value).toLowerCase() : name === "properties" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchema(v)])) : jsonSchema(value);
  }
  return out;
}

/** The model behind the mock: one request at a time, each on a cleared context. */
async function modelAnswerer() {
  const llama = await getLlama({ gpu: false, build: "never" });
  const model = await llama.loadModel({ modelPath: MODEL });
  const context = await model.createContext({ contextSize: 8192, threads: 2 });
  const sequence = context.getSequence();
  let queue = Promise.resolve();
  const stats = { calls: 0, seconds: [], cut: 0 };
  const answer = async (body) => {
    const started = performance.now();
    await sequence.clearHistory();
    const system = body.systemInstruction?.parts?.map((p) => p.text).join("") ?? "";
    const prompt = body.contents.map((c) => c.parts.map((p) => p.text ?? "").join("")).join("\n");
    const config = body.generationConfig ?? {};
    const maxTokens = Math.min(config.maxOutputTokens ?? MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS);
    const session = new LlamaChatSession({ contextSequence: sequence, systemPrompt: system || undefined });
    const grammar = config.responseSchema ? await llama.createGrammarForJsonSchema(jsonSchema(config.responseSchema)) : undefined;
    const promptTokens = model.tokenize(`${system}\n${prompt}`).length;
    // A prompt longer than the context is cut from its head, as a serving stack would refuse it.
    const room = 8192 - maxTokens - 64;
    const tokens = model.tokenize(prompt);
    const fitted = tokens.length > room ? model.detokenize(tokens.slice(tokens.length - room)) : prompt;
    const { responseText: text, stopReason } = await session.promptWithMeta(fitted, { maxTokens, grammar, temperature: config.temperature ?? 0.1 });
    session.dispose({ disposeSequence: false });
    const cut = stopReason === "maxTokens";
    stats.calls += 1;
    stats.cut += cut ? 1 : 0;
    stats.seconds.push((performance.now() - started) / 1000);
    return { text, finishReason: cut ? "MAX_TOKENS" : "STOP", promptTokens, outputTokens: model.tokenize(text).length };
  };
  return {
    stats,
    answer: (body) => {
      const turn = queue.then(() => answer(body));
      queue = turn.catch(() => {});
      return turn;
    },
    close: () => llama.dispose(),
  };
}

/** Runs in the page: the agent's session with the package's Gemini provider. */
async function inPage([baseUrl, modelName, iterations, maxOutputTokens]) {
  const { default: init, LogStore, Compactor, validateSummary } = await import("/pkg/context_compactor.js");
  await init();
  const logs = new LogStore({ prefix: "pipeline_" });
  const compactor = new Compactor(logs, {
    provider: { type: "gemini", apiKey: `scenario:model#${modelName}`, model: modelName, baseUrl },
    contextWindowTokens: 5000,
    maxOutputTokens,
    timeoutMs: 240_000,
    retryDelayMs: 0,
  });
  logs.pin("Every shard's row count goes into report.csv");
  const compactions = [];
  let stuckAt = null;
  const started = performance.now();
  for (let n = 1; n <= iterations; n++) {
    logs.startIteration();
    logs.appendReasoning(`Iteration ${n}: loading shard_${String(n).padStart(3, "0")}.parquet, checking its schema against the pipeline's contract, then counting its rows and nulls before the merge.`);
    const ok = n % 7 !== 0;
    logs.appendExecution({
      success: ok,
      code: `const t = await load("shard_${String(n).padStart(3, "0")}.parquet"); return { rows: t.rows, nulls: t.nulls("amount") };`,
      ...(ok ? { result: { rows: 40_000 + n * 113, nulls: (n * 7) % 23 } } : { error: { message: `schema mismatch in shard_${String(n).padStart(3, "0")}: column amount is string` } }),
    });
    logs.appendToolActivity({ type: "vfs", action: "write", status: "success", details: { path: `out/shard_${n}.csv` } });
    const trigger = compactor.shouldAutoCompact() ? "auto" : compactor.contextUsage() >= 1 ? "context_limit_error" : null;
    if (trigger) {
      try {
        const result = await compactor.compact({ trigger });
        compactions.push({ n, trigger, rung: result.rung, attempts: result.attempts, salvaged: result.salvaged, upgraded: result.upgraded, fallback: result.fallback?.code ?? null, valid: validateSummary(result.summary).valid, tokensAfter: result.tokensAfter });
      } catch (err) {
        compactions.push({ n, trigger, error: err.code, message: err.message });
        if (trigger === "context_limit_error") stuckAt ??= n;
      }
    }
    logs.finishIteration();
  }
  const metrics = compactor.metrics();
  return { compactions, stuckAt, metrics: { fallbacks: metrics.fallbacks, upgrades: metrics.upgrades, totalAttempts: metrics.totalAttempts }, seconds: (performance.now() - started) / 1000, usage: compactor.contextUsage() };
}

const model = await modelAnswerer();
const mock = await startMock(0, { answer: model.answer });
const runs = [];
try {
  for (const name of ["gemma-3-27b-it", "gemini-2.5-flash"]) {
    const before = { calls: model.stats.calls, cut: model.stats.cut, seconds: model.stats.seconds.length };
    const measured = await withBenchBrowser(async (browser, baseUrl) => {
      const page = await freshPage(browser, baseUrl);
      page.setDefaultTimeout(0);
      return page.evaluate(inPage, [mock.url, name, ITERATIONS, MAX_OUTPUT_TOKENS]);
    });
    const seconds = model.stats.seconds.slice(before.seconds);
    runs.push({ model: name, ...measured, calls: model.stats.calls - before.calls, cut: model.stats.cut - before.cut, secondsPerCall: seconds.reduce((a, b) => a + b, 0) / Math.max(1, seconds.length) });
  }
} finally {
  await mock.close();
  await model.close();
}

console.log(`| model name | iterations | compactions (summarize / fallback / clear / refused) | model calls | answers cut at the limit | salvaged | fallbacks (codes) | upgrades | stuck | every summary valid | s per call | s in all |`);
console.log(`| --- | ---: | --- | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | ---: |`);
for (const run of runs) {
  const count = (rung) => run.compactions.filter((c) => c.rung === rung).length;
  const refused = run.compactions.filter((c) => c.error).length;
  const codes = [...new Set(run.compactions.map((c) => c.fallback).filter(Boolean))].join(", ") || "—";
  const salvaged = run.compactions.filter((c) => c.salvaged).length;
  const valid = run.compactions.filter((c) => !c.error).every((c) => c.valid);
  console.log(`| ${run.model} | ${ITERATIONS} | ${run.compactions.length} (${count("summarize")} / ${count("fallback")} / ${count("clear")} / ${refused}) | ${run.calls} | ${run.cut} | ${salvaged} | ${run.metrics.fallbacks} (${codes}) | ${run.metrics.upgrades} | ${run.stuckAt ? `at iteration ${run.stuckAt}` : "never"} | ${valid ? "yes" : "no"} | ${run.secondsPerCall.toFixed(1)} | ${run.seconds.toFixed(0)} |`);
}
console.log(JSON.stringify(runs.map(({ model: name, compactions }) => ({ model: name, compactions })), null, 1));
