// What a message list's compactor returns passes the provider's own schema (#78): lists of the
// AI SDK's shape generated with what apps send (parallel calls, calls that share an id, images
// and files, results as text, JSON, content arrays and errors, tool approvals in their own
// messages, a call still waiting for its result, words over several lines, fields of the
// providers' own), compacted in Chromium with the built package (a clearing, then a summary),
// rolled back and recalled; every list that comes back is checked in Node by the real `ai`
// package's `modelMessageSchema`. The same for OpenAI chat, Anthropic Messages and Gemini
// contents, type-checked as the official SDKs' request messages (`openai`,
// `@anthropic-ai/sdk`, `@google/genai`), which ship types and no validator.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { modelMessageSchema } from "ai";
import { z } from "zod";
import { launch } from "./browser.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
let env;
let page;
before(async () => {
  env = await launch();
  page = await (await env.browser.newContext()).newPage();
  await page.goto(`${env.baseUrl}pkg/package.json`);
  await page.evaluate(async () => {
    const pkg = await import("/pkg/context_compactor.js");
    await pkg.default();
    window.pkg = pkg;
  });
});
after(async () => {
  await env?.close();
});

/** `count` lists of the AI SDK's `ModelMessage[]`, from `seed` (in the page). */
function generate(seed, count) {
  let state = seed;
  const below = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const rows = (turn, n) => Array.from({ length: n }, (_, r) => `r${r % 12},${turn},${1000 + r * 7 + turn}`).join("\n");
  const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const output = (turn) => {
    switch (below(5)) {
      case 0: return { type: "text", value: `page ${turn}\n${rows(turn, 120)}` };
      case 1: return { type: "json", value: { page: turn, rows: rows(turn, 120).split("\n") } };
      case 2: return { type: "content", value: [{ type: "text", text: `page ${turn}\n${rows(turn, 120)}` }, { type: "text", text: "end of page" }] };
      case 3: return { type: "error-text", value: `fetch failed for page ${turn}: 503` };
      default: return { type: "json", value: `${turn}` };
    }
  };
  const lists = [];
  for (let n = 0; n < count; n++) {
    const list = [];
    if (below(2)) list.push({ role: "system", content: "You are a careful analyst." });
    list.push(below(3)
      ? { role: "user", content: "Which regions missed the Q3 target?\nRead the sales pages.\nLeave region 7 out." }
      : { role: "user", content: [{ type: "text", text: "Which regions missed the target in this chart?" }, { type: "image", image: png, mediaType: "image/png" }, { type: "file", data: "cmVnaW9uLHRhcmdldAo=", mediaType: "text/csv", filename: "targets.csv" }] });
    const turns = 4 + below(6);
    for (let turn = 0; turn < turns; turn++) {
      if (below(4) === 0) list.push({ role: "user", content: `Also look at region ${turn}.\nAnd say which file you read.` });
      const calls = Array.from({ length: 1 + below(3) }, (_, k) => ({
        type: "tool-call",
        toolCallId: below(3) === 0 ? "call_0" : `call_${turn}_${k}`,
        toolName: "fetch_page",
        input: { page: turn, part: k },
        ...(below(2) ? { providerOptions: { google: { thoughtSignature: "c2lnbmF0dXJl" } } } : {}),
      }));
      const last = turn === turns - 1;
      const approval = !last && below(4) === 0;
      const assistant = [{ type: "text", text: `Step ${turn}: reading page ${turn}.\nThen the next one.` }, ...calls];
      if (approval) assistant.push({ type: "tool-approval-request", approvalId: `approve_${turn}`, toolCallId: calls[0].toolCallId });
      list.push({ role: "assistant", content: assistant });
      if (last && below(2)) break; // the newest call still waits for its result
      if (approval) list.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: `approve_${turn}`, approved: true }] });
      const results = calls.map((call) => ({ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, output: output(turn) }));
      if (below(2)) list.push({ role: "tool", content: results });
      else for (const result of results) list.push({ role: "tool", content: [result] });
    }
    lists.push(list);
  }
  return lists;
}

test("every list compact, rollback and recall return over generated AI SDK lists passes the ai package's modelMessageSchema", async () => {
  const seen = await page.evaluate(async ({ source }) => {
    const generate = new Function(`return (${source})`)();
    const { MessageCompactor } = window.pkg;
    const out = [];
    for (const [n, list] of generate(7, 60).entries()) {
      const compactor = new MessageCompactor({ provider: { type: "offline" }, shape: "ai-sdk", conversation: `schemas-${n}`, contextWindowTokens: 16_000 });
      const entry = { n, given: list, lists: [], errors: [] };
      try {
        const cleared = await compactor.compact(list, { trigger: "user", rung: "clear" });
        entry.lists.push(["clear", cleared.messages]);
        const summarised = await compactor.compact(cleared.messages, { trigger: "user" });
        entry.lists.push(["summarize", summarised.messages]);
        if (summarised.archiveKey) entry.lists.push(["rollback", await compactor.rollback(summarised.archiveKey, summarised.messages)]);
        for (let turn = 0; turn < 10; turn++) entry.lists.push([`recall ${turn}`, await compactor.recall(turn)]);
      } catch (err) {
        entry.errors.push(`${err.code}: ${err.message}`);
      }
      out.push(entry);
    }
    return out;
  }, { source: generate.toString() });
  const schema = z.array(modelMessageSchema);
  let checked = 0;
  for (const entry of seen) {
    assert.equal(schema.safeParse(entry.given).success, true, `list ${entry.n} as given: ${JSON.stringify(schema.safeParse(entry.given).error?.issues?.[0])}`);
    for (const error of entry.errors) assert.match(error, /^not_allowed/, `list ${entry.n}: ${error}`);
    for (const [what, list] of entry.lists) {
      const parsed = schema.safeParse(list);
      assert.ok(parsed.success, `list ${entry.n}, ${what}: ${JSON.stringify(parsed.error?.issues?.[0])}\n${JSON.stringify(list).slice(0, 600)}`);
      checked++;
    }
  }
  assert.ok(checked >= 200, `${checked} lists checked`);
});

/** `count` lists of `shape` (OpenAI chat, Anthropic Messages, Gemini contents), from `seed`,
 * with only the fields the providers' request types name (in the page). */
function generateOf(shape, seed, count) {
  let state = seed;
  const below = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const rows = (turn, n) => Array.from({ length: n }, (_, r) => `r${r % 12},${turn},${1000 + r * 7 + turn}`).join("\n");
  const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const user = (text, image) => {
    if (shape === "gemini") return { role: "user", parts: [{ text }, ...(image ? [{ inlineData: { mimeType: "image/png", data } }] : [])] };
    if (!image) return { role: "user", content: text };
    if (shape === "openai") return { role: "user", content: [{ type: "text", text }, { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } }] };
    return { role: "user", content: [{ type: "text", text }, { type: "image", source: { type: "base64", media_type: "image/png", data } }] };
  };
  const model = (text, calls) => {
    if (shape === "gemini") return { role: "model", parts: [{ text }, ...calls.map((c, k) => ({ functionCall: { id: c.id, name: "fetch_page", args: c.args }, ...(k === 0 ? { thoughtSignature: "c2lnbmF0dXJl" } : {}) }))] };
    if (shape === "openai") return { role: "assistant", content: text, tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: "fetch_page", arguments: JSON.stringify(c.args) } })) };
    return { role: "assistant", content: [{ type: "text", text }, ...calls.map((c) => ({ type: "tool_use", id: c.id, name: "fetch_page", input: c.args }))] };
  };
  const body = (turn) => {
    const text = `page ${turn}\n${rows(turn, 120)}`;
    switch (below(3)) {
      case 0: return text;
      case 1: return [{ type: "text", text }, { type: "text", text: "end of page" }];
      default: return { page: turn, rows: text.split("\n") };
    }
  };
  // The results of `calls`, as the shape groups them: OpenAI a message each; Anthropic and
  // Gemini every result of a turn in one user message.
  const results = (turn, calls) => {
    if (shape === "openai") return calls.map((c) => { const b = body(turn); return { role: "tool", tool_call_id: c.id, content: typeof b === "object" && !Array.isArray(b) ? JSON.stringify(b) : b }; });
    if (shape === "gemini") return [{ role: "user", parts: calls.map((c) => { const b = body(turn); return { functionResponse: { id: c.id, name: "fetch_page", response: typeof b === "object" && !Array.isArray(b) ? b : { output: b } } }; }) }];
    return [{ role: "user", content: calls.map((c, k) => { const b = body(turn); return { type: "tool_result", tool_use_id: c.id, content: typeof b === "object" && !Array.isArray(b) ? JSON.stringify(b) : b, ...(k === 1 ? { is_error: true } : {}) }; }) }];
  };
  const lists = [];
  for (let n = 0; n < count; n++) {
    const list = [];
    if (shape === "openai" && below(2)) list.push({ role: "system", content: "You are a careful analyst." });
    list.push(user("Which regions missed the Q3 target?\nRead the sales pages.\nLeave region 7 out.", below(3) === 0));
    const turns = 4 + below(6);
    for (let turn = 0; turn < turns; turn++) {
      // Anthropic and Gemini take alternating roles: the user's words stand between a result
      // and the next model turn only as a message of their own after a model's answer.
      if (shape === "openai" && below(4) === 0) list.push(user(`Also look at region ${turn}.\nAnd say which file you read.`, false));
      const calls = Array.from({ length: 1 + below(3) }, (_, k) => ({ id: below(3) === 0 ? "call_0" : `call_${turn}_${k}`, args: { page: turn, part: k } }));
      // Parallel calls with one id are told apart only where results name no id (Gemini's
      // older models): give each its own in a turn.
      for (const [k, c] of calls.entries()) if (calls.findIndex((d) => d.id === c.id) !== k) c.id = `${c.id}_${k}`;
      list.push(model(`Step ${turn}: reading page ${turn}.\nThen the next one.`, calls));
      if (turn === turns - 1 && below(2)) break; // the newest call still waits for its result
      list.push(...results(turn, calls));
    }
    lists.push(list);
  }
  return lists;
}

test("every list compact, rollback and recall return over generated OpenAI, Anthropic and Gemini lists type-checks as the official SDKs' request messages", async () => {
  const seen = await page.evaluate(async ({ source }) => {
    const generateOf = new Function(`return (${source})`)();
    const { MessageCompactor } = window.pkg;
    const out = {};
    for (const shape of ["openai", "anthropic", "gemini"]) {
      out[shape] = [];
      for (const [n, list] of generateOf(shape, 11, 30).entries()) {
        const compactor = new MessageCompactor({ provider: { type: "offline" }, shape, conversation: `types-${shape}-${n}`, contextWindowTokens: 16_000 });
        out[shape].push(list);
        // Each step on its own: a summary of too little is refused (not_allowed), the rest go on.
        const step = async (work) => {
          try {
            return await work();
          } catch (err) {
            if (err.code !== "not_allowed") throw err;
            return null;
          }
        };
        const cleared = await step(() => compactor.compact(list, { trigger: "user", rung: "clear" }));
        if (cleared) out[shape].push(cleared.messages);
        const summarised = await step(() => compactor.compact(cleared?.messages ?? list, { trigger: "context_limit_error" }));
        if (summarised) out[shape].push(summarised.messages);
        if (summarised?.archiveKey) out[shape].push(await compactor.rollback(summarised.archiveKey, summarised.messages));
        for (let turn = 0; turn < 10; turn++) out[shape].push(await compactor.recall(turn));
      }
    }
    return out;
  }, { source: generateOf.toString() });
  const dir = mkdtempSync(join(here, ".schemas-"));
  try {
    const lists = (shape) => seen[shape].filter((list) => list.length > 0).map((list) => JSON.stringify(list)).join(",\n");
    writeFileSync(join(dir, "lists.ts"), [
      'import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";',
      'import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";',
      'import type { Content } from "@google/genai";',
      `export const openai: ChatCompletionMessageParam[][] = [\n${lists("openai")}];`,
      `export const anthropic: MessageParam[][] = [\n${lists("anthropic")}];`,
      `export const gemini: Content[][] = [\n${lists("gemini")}];`,
    ].join("\n"));
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ES2022", moduleResolution: "bundler", lib: ["ESNext", "DOM"], skipLibCheck: true, types: [] },
      files: ["lists.ts"],
    }));
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    try {
      execFileSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
    } catch (err) {
      assert.fail(`the lists do not type-check:\n${String(err.stdout).slice(0, 3000)}`);
    }
    for (const shape of ["openai", "anthropic", "gemini"]) {
      const nonEmpty = seen[shape].filter((list) => list.length > 0).length;
      assert.ok(nonEmpty >= 150, `${shape}: ${nonEmpty} lists checked`);
    }
    // What the types cannot say and the APIs require: Anthropic and Gemini answer every call of
    // a model message in the one user message right after it (a 400 otherwise).
    for (const shape of ["anthropic", "gemini"]) {
      for (const list of seen[shape]) {
        for (const [at, message] of list.entries()) {
          const calls = shape === "gemini"
            ? (message.role === "model" ? message.parts.filter((p) => p.functionCall).map((p) => p.functionCall.id) : [])
            : (message.role === "assistant" && Array.isArray(message.content) ? message.content.filter((b) => b.type === "tool_use").map((b) => b.id) : []);
          if (calls.length === 0 || at === list.length - 1) continue;
          const next = list[at + 1];
          const answers = shape === "gemini"
            ? (next.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse.id)
            : (Array.isArray(next.content) ? next.content : []).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
          assert.deepEqual(answers, calls, `${shape}: the results of message ${at} all in the next one\n${JSON.stringify(list).slice(0, 800)}`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
