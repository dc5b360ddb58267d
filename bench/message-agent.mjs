// A research agent whose state is a message list, in each of the four shapes the package
// takes: a goal, 60 model turns that each call a tool and read a bulky result (a CSV table of
// 225–525 rows, one of 800 at turn 40, about 8,000 tokens), a later instruction of the user at
// turn 12. Its loop asks `shouldCompact(list)` before each request, sends what `compact(list)`
// returns, and records what it sent. Runs in a page: the package's classes are given to it.
// Used by tests/node/messages-page.test.mjs and bench/messages.mjs.

export const GOAL = "Find which regions missed the Q3 target in sales_q3.csv and write a short report.";
export const LATER = "Leave region 7 out of the report, ticket DQ-2291.";
export const SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1jYWxs";
export const BIG_TURN = 40;

/** The messages of `shape`: the user's words, a model turn with one call, the call's result. */
export const shapes = {
  gemini: {
    user: (text) => ({ role: "user", parts: [{ text }] }),
    call: (text, id, name, args) => ({ role: "model", parts: [{ text }, { functionCall: { id, name, args }, thoughtSignature: SIGNATURE }] }),
    result: (id, name, body) => ({ role: "user", parts: [{ functionResponse: { id, name, response: { content: body } } }] }),
  },
  openai: {
    user: (text) => ({ role: "user", content: text }),
    call: (text, id, name, args) => ({ role: "assistant", content: text, tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }),
    result: (id, name, body) => ({ role: "tool", tool_call_id: id, content: body }),
  },
  anthropic: {
    user: (text) => ({ role: "user", content: text }),
    call: (text, id, name, input) => ({ role: "assistant", content: [{ type: "text", text }, { type: "tool_use", id, name, input }] }),
    result: (id, name, body) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: body }] }),
  },
  "ai-sdk": {
    user: (text) => ({ role: "user", content: text }),
    call: (text, toolCallId, toolName, input) => ({ role: "assistant", content: [{ type: "text", text }, { type: "tool-call", toolCallId, toolName, input }] }),
    result: (toolCallId, toolName, value) => ({ role: "tool", content: [{ type: "tool-result", toolCallId, toolName, output: { type: "text", value } }] }),
  },
};

/** A table of `rows` rows, distinct for `turn`. */
export function table(turn, rows) {
  let out = `region,quarter,revenue,target (page ${turn})\n`;
  for (let row = 0; row < rows; row++) out += `r${row % 12},${turn},${1000 + row * 7 + turn},${1200 + row}\n`;
  return out;
}

/** The ids of the calls `list` makes and of the results it answers with, each sorted. */
export function callsAndResults(list) {
  const calls = [];
  const results = [];
  for (const m of list) {
    for (const c of m.tool_calls ?? []) calls.push(c.id);
    if (m.tool_call_id) results.push(m.tool_call_id);
    for (const p of m.parts ?? (Array.isArray(m.content) ? m.content : [])) {
      if (p.functionCall) calls.push(p.functionCall.id);
      if (p.functionResponse) results.push(p.functionResponse.id);
      if (p.type === "tool_use") calls.push(p.id);
      if (p.type === "tool-call") calls.push(p.toolCallId);
      if (p.type === "tool_result") results.push(p.tool_use_id);
      if (p.type === "tool-result") results.push(p.toolCallId);
    }
  }
  return { calls: calls.sort(), results: results.sort() };
}

/** Runs the agent of `shape` over `compactor` (a MessageCompactor of that shape); returns what
 * it sent and what the compactions did. With `ownList`, the agent keeps its own list whole and
 * sends what `compact` returns for one request only, as the AI SDK 7 does across calls; every
 * third turn takes a second step, before which it compacts the list it sent grown by the first
 * step, as `prepareStep` does within a call. With `until`, it stops before that turn and
 * returns its state too (`list`), which `resume` takes up again: a page reloaded in between,
 * the app's own list kept by the app. */
export async function runAgent(compactor, estimateTokens, shape, { turns = 60, ownList = false, until = turns, resume } = {}) {
  const make = shapes[shape];
  let list = resume?.list ?? [make.user(GOAL)];
  const run = resume?.run ?? { requests: [], rungs: [], summaries: [], turns: [], cleared: 0, clearedIds: [], unpaired: 0, kept: 0, sameWhenDue: 0 };
  for (let turn = resume?.turn ?? 0; turn < until; turn++) {
    let sent = list;
    if (compactor.shouldCompact(list)) {
      const before = list;
      const done = await compactor.compact(list);
      run.rungs.push(done.rung);
      run.cleared += done.cleared.length;
      run.clearedIds.push(...done.cleared.map((c) => c.callId));
      if (done.summary) run.summaries.push(done.summary);
      if (done.turns) run.turns.push(done.turns);
      run.kept += done.messages.filter((m) => before.includes(m)).length;
      sent = done.messages;
    } else {
      const done = await compactor.compact(list);
      if (done.messages === list && done.rung === "none") run.sameWhenDue++;
      sent = done.messages;
    }
    if (!ownList) list = sent;
    const sentNow = sent.slice(); // `sent` may be `list` itself, which grows below
    run.requests.push(estimateTokens(JSON.stringify(sent)));
    const { calls, results } = callsAndResults(sent);
    if (JSON.stringify(calls) !== JSON.stringify(results)) run.unpaired++;
    const id = `call_${turn}`;
    list.push(make.call(`Step ${turn}: fetching page ${turn}.`, id, "fetch_page", { url: `https://example.com/sales/${turn}` }));
    list.push(make.result(id, "fetch_page", table(turn, turn === BIG_TURN ? 800 : 225 + (turn % 5) * 75)));
    if (ownList && turn % 3 === 1) {
      // A second step within the call: `prepareStep` gets the list sent, with both steps'
      // calls and results after it.
      const second = `call_${turn}b`;
      list.push(make.call(`Step ${turn}b: fetching page ${turn}b.`, second, "fetch_page", { url: `https://example.com/sales/${turn}b` }));
      list.push(make.result(second, "fetch_page", table(turn, 225)));
      const within = await compactor.compact([...sentNow, ...list.slice(-4)]);
      if (within.rung !== "none") {
        run.rungs.push(within.rung);
        run.cleared += within.cleared.length;
        run.clearedIds.push(...within.cleared.map((c) => c.callId));
        if (within.summary) run.summaries.push(within.summary);
        if (within.turns) run.turns.push(within.turns);
      }
    }
    if (turn === 12) list.push(make.user(LATER));
  }
  if (until < turns) return { run, list, turn: until };
  run.last = ownList ? (await compactor.compact(list)).messages : list;
  return run;
}
