// The AI SDK chat agent of bench/ai-sdk-agent.mjs, one user message at a time, so that the
// same agent runs in Node and, bundled by esbuild, in a Chromium page that reloads between
// user messages: `generateText` of the real `ai` package with the SDK's own mock model
// (`MockLanguageModelV3`, which calls `fetch_page` at every step and answers in words at the
// last) and `prepareStep` sending what `MessageCompactor.compact(messages)` returns.
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";

/** The agent's context window, in tokens. */
export const WINDOW = 1_000_000;

/** A table of about `rows` rows, distinct for `turn`: a page the agent fetched. */
export function table(turn, rows) {
  let out = `region,quarter,revenue,target (page ${turn})\n`;
  for (let row = 0; row < rows; row++) out += `r${row % 12},${turn},${1000 + row * 7 + turn},${1200 + row}\n`;
  return out;
}

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };

/** An agent before its first user message: what it carries from one to the next (plain data,
 * so that a page can hand it to the next load). */
export function newAgent() {
  return { message: 0, turn: 0, history: [], requests: [], made: [], slowest: 0 };
}

/** The agent's next user message, `steps` steps, over `compactor` (a `MessageCompactor` of the
 * shape "ai-sdk"); the history carried to the next `way` ("own": the app's uncompacted
 * history and the SDK's `responseMessages`; "carried": the list the last `prepareStep`
 * returned, then the answer). Returns `agent`, updated. */
export async function userMessage(agent, compactor, estimateTokens, { steps, way }) {
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      agent.requests.push(estimateTokens(JSON.stringify(options.prompt)));
      const last = options.prompt.at(-1);
      const step = options.prompt.filter((m) => m.role === "tool").length;
      // The last step of a user message answers in words; every other calls the tool.
      if (last.role === "tool" && agent.turn % steps === 0) {
        return { content: [{ type: "text", text: `Pages up to ${agent.turn - 1} read; the totals are in the tables above.` }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      const id = `call_${agent.turn}`;
      agent.turn += 1;
      return {
        content: [{ type: "text", text: `Step ${agent.turn}: reading page ${agent.turn} (${step} results so far).` }, { type: "tool-call", toolCallId: id, toolName: "fetch_page", input: JSON.stringify({ page: agent.turn }) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
  const tools = {
    fetch_page: tool({
      description: "Fetches one page of the sales report.",
      inputSchema: jsonSchema({ type: "object", properties: { page: { type: "number" } }, required: ["page"] }),
      execute: async ({ page }) => table(page, 225 + ((page * 37) % 300)),
    }),
  };
  const n = agent.message;
  agent.history.push({ role: "user", content: n === 0 ? "Find which regions missed the Q3 target in the sales report and write a short report." : `Now also pages ${n * steps} to ${(n + 1) * steps - 1}; leave region ${n % 12} out.` });
  let sent = agent.history;
  const result = await generateText({
    model,
    tools,
    messages: agent.history,
    stopWhen: stepCountIs(steps + 1),
    prepareStep: async ({ messages }) => {
      const t0 = performance.now();
      const done = await compactor.compact(messages);
      agent.slowest = Math.max(agent.slowest, performance.now() - t0);
      if (done.compacted) agent.made.push({ rung: done.rung, cleared: done.cleared.map((c) => c.callId), turns: done.turns ?? null });
      sent = done.messages;
      return { messages: done.messages };
    },
  });
  agent.history = way !== "carried" ? [...agent.history, ...result.responseMessages] : [...sent, ...result.responseMessages.slice(-1)];
  agent.message += 1;
  return agent;
}

/** The figures of a finished run: compactions, results cleared and cleared again, summaries
 * that fold a turn folded before, the slowest `compact()`, the requests' mean and peak. */
export function figures(agent) {
  const { made, requests } = agent;
  const cleared = made.flatMap((done) => done.cleared);
  let foldedTo = -1;
  let refolded = 0;
  for (const done of made) {
    if (!done.turns) continue;
    if (done.turns[0] <= foldedTo) refolded += 1;
    foldedTo = Math.max(foldedTo, done.turns[1]);
  }
  return {
    turns: agent.turn,
    clearings: made.filter((d) => d.rung === "clear").length,
    summaries: made.filter((d) => d.rung === "summarize" || d.rung === "fallback").length,
    cleared: cleared.length,
    again: cleared.length - new Set(cleared).size,
    refolded,
    slowest: Math.round(agent.slowest),
    mean: Math.round(requests.reduce((a, b) => a + b, 0) / requests.length),
    peak: Math.max(...requests),
  };
}
