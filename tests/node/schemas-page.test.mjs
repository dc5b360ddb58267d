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

/** `count` lists of `shape` from `seed` (run in the page), with only what the provider's request
 * schema names: the goal (with an image, and for the AI SDK a file, now and then), turns of one to
 * three calls whose ids are often shared (`call_0`, made apart within a turn, where results name
 * them), results as text, content arrays of text parts and objects (the AI SDK: every output
 * type, a tool approval answered in its own message or beside the results), the user's words over several lines between
 * turns where the shape's roles allow it, and a newest call still waiting for its result. */
function generate(shape, seed, count) {
  let state = seed;
  const below = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const rows = (turn, n) => Array.from({ length: n }, (_, r) => `r${r % 12},${turn},${1000 + r * 7 + turn}`).join("\n");
  const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  const aiSdk = shape === "ai-sdk";
  const user = (text, image) => {
    if (shape === "gemini") return { role: "user", parts: [{ text }, ...(image ? [{ inlineData: { mimeType: "image/png", data } }] : [])] };
    if (!image) return { role: "user", content: text };
    const picture = {
      openai: { type: "image_url", image_url: { url: `data:image/png;base64,${data}` } },
      anthropic: { type: "image", source: { type: "base64", media_type: "image/png", data } },
      "ai-sdk": { type: "image", image: `data:image/png;base64,${data}`, mediaType: "image/png" },
    }[shape];
    const file = aiSdk ? [{ type: "file", data: "cmVnaW9uLHRhcmdldAo=", mediaType: "text/csv", filename: "targets.csv" }] : [];
    return { role: "user", content: [{ type: "text", text }, picture, ...file] };
  };
  const model = (text, calls) => {
    if (shape === "gemini") return { role: "model", parts: [{ text }, ...calls.map((c, k) => ({ functionCall: { id: c.id, name: "fetch_page", args: c.args }, ...(k === 0 ? { thoughtSignature: "c2lnbmF0dXJl" } : {}) }))] };
    if (shape === "openai") return { role: "assistant", content: text, tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: "fetch_page", arguments: JSON.stringify(c.args) } })) };
    if (shape === "anthropic") return { role: "assistant", content: [{ type: "text", text }, ...calls.map((c) => ({ type: "tool_use", id: c.id, name: "fetch_page", input: c.args }))] };
    const parts = calls.map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: "fetch_page", input: c.args, ...(below(2) ? { providerOptions: { google: { thoughtSignature: "c2lnbmF0dXJl" } } } : {}) }));
    return { role: "assistant", content: [{ type: "text", text }, ...parts] };
  };
  const body = (turn) => {
    const text = `page ${turn}\n${rows(turn, 120)}`;
    switch (below(aiSdk ? 5 : 3)) {
      case 0: return aiSdk ? { type: "text", value: text } : text;
      case 1: return aiSdk ? { type: "content", value: [{ type: "text", text }, { type: "text", text: "end of page" }] } : [{ type: "text", text }, { type: "text", text: "end of page" }];
      case 2: return aiSdk ? { type: "json", value: { page: turn, rows: text.split("\n") } } : { page: turn, rows: text.split("\n") };
      case 3: return { type: "error-text", value: `fetch failed for page ${turn}: 503` };
      default: return { type: "json", value: `${turn}` };
    }
  };
  const asText = (b) => (typeof b === "object" && !Array.isArray(b) ? JSON.stringify(b) : b);
  // The results of `calls`, as the shape groups them: OpenAI a message each; Anthropic and
  // Gemini every result of a turn in one user message; the AI SDK either.
  const results = (turn, calls) => {
    if (shape === "openai") return calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: asText(body(turn)) }));
    if (shape === "gemini") return [{ role: "user", parts: calls.map((c) => { const b = body(turn); return { functionResponse: { id: c.id, name: "fetch_page", response: typeof b === "object" && !Array.isArray(b) ? b : { output: b } } }; }) }];
    if (shape === "anthropic") return [{ role: "user", content: calls.map((c, k) => ({ type: "tool_result", tool_use_id: c.id, content: asText(body(turn)), ...(k === 1 ? { is_error: true } : {}) })) }];
    const parts = calls.map((c) => ({ type: "tool-result", toolCallId: c.id, toolName: "fetch_page", output: body(turn) }));
    return below(2) ? [{ role: "tool", content: parts }] : parts.map((part) => ({ role: "tool", content: [part] }));
  };
  const lists = [];
  for (let n = 0; n < count; n++) {
    const list = [];
    if ((shape === "openai" || aiSdk) && below(2)) list.push({ role: "system", content: "You are a careful analyst." });
    list.push(user("Which regions missed the Q3 target?\nRead the sales pages.\nLeave region 7 out.", below(3) === 0));
    const turns = 4 + below(6);
    for (let turn = 0; turn < turns; turn++) {
      // Anthropic and Gemini take alternating roles: no user message between a result and the
      // next model turn.
      if ((shape === "openai" || aiSdk) && below(4) === 0) list.push(user(`Also look at region ${turn}.\nAnd say which file you read.`, false));
      const calls = Array.from({ length: 1 + below(3) }, (_, k) => ({ id: below(3) === 0 ? "call_0" : `call_${turn}_${k}`, args: { page: turn, part: k } }));
      for (const [k, c] of calls.entries()) if (calls.findIndex((d) => d.id === c.id) !== k) c.id = `${c.id}_${k}`;
      const last = turn === turns - 1;
      const message = model(`Step ${turn}: reading page ${turn}.\nThen the next one.`, calls);
      const approval = aiSdk && !last && below(4) === 0;
      if (approval) message.content.push({ type: "tool-approval-request", approvalId: `approve_${turn}`, toolCallId: calls[0].id });
      list.push(message);
      if (last && below(2)) break; // the newest call still waits for its result
      const answered = results(turn, calls);
      if (approval) {
        // The approval answered in a tool message of its own, or beside the results.
        const response = { type: "tool-approval-response", approvalId: `approve_${turn}`, approved: true };
        if (below(2)) list.push({ role: "tool", content: [response] });
        else answered[0].content.unshift(response);
      }
      list.push(...answered);
    }
    lists.push(list);
  }
  return lists;
}

/** What compact (a clearing, then a summary), rollback and recall return over `lists` of
 * `shape` (run in the page): every list, the given ones first. */
async function compacted(shape, lists) {
  const { MessageCompactor } = window.pkg;
  const out = [];
  // Each step on its own: a summary of too little is refused (not_allowed), the rest go on.
  const step = async (work) => {
    try {
      return await work();
    } catch (err) {
      if (err.code !== "not_allowed") throw err;
      return null;
    }
  };
  for (const [n, list] of lists.entries()) {
    const compactor = new MessageCompactor({ provider: { type: "offline" }, shape, conversation: `schemas-${shape}-${n}`, contextWindowTokens: 16_000 });
    out.push(list);
    const cleared = await step(() => compactor.compact(list, { trigger: "user", rung: "clear" }));
    if (cleared) out.push(cleared.messages);
    const summarised = await step(() => compactor.compact(cleared?.messages ?? list, { trigger: "context_limit_error" }));
    if (summarised) out.push(summarised.messages);
    if (summarised?.archiveKey) out.push(await compactor.rollback(summarised.archiveKey, summarised.messages));
    // A recall answer is the archived results of a turn, not a list to send: marked.
    for (let turn = 0; turn < 10; turn++) {
      const recalled = await compactor.recall(turn);
      recalled.recalled = true;
      out.push(recalled);
    }
  }
  return out.filter((list) => list.length > 0).map((list) => ({ list, recalled: list.recalled === true }));
}

/** Each of `lists` of `shape` summarised (run in the page), a message appended, then rolled
 * back: `[given, back]` for each list a summary took. */
async function summarisedAndBack(shape, lists) {
  const { MessageCompactor } = window.pkg;
  const pairs = [];
  for (const [n, list] of lists.entries()) {
    const compactor = new MessageCompactor({ provider: { type: "offline" }, shape, conversation: `back-${shape}-${n}`, contextWindowTokens: 16_000, clearing: false });
    const done = await compactor.compact(list, { trigger: "context_limit_error" }).catch((err) => {
      if (err.code !== "not_allowed") throw err;
      return null;
    });
    if (!done?.compacted) continue;
    const later = shape === "gemini" ? { role: "user", parts: [{ text: "And now?" }] } : { role: "user", content: "And now?" };
    const back = await compactor.rollback(done.archiveKey, [...done.messages, later]);
    pairs.push([[...list, later], back]);
  }
  return pairs;
}

/** `shape`'s lists generated, compacted, rolled back and recalled in the page. */
function run(shape, seed, count) {
  return page.evaluate(async ({ shape, seed, count, generate, compacted }) => {
    const made = new Function(`return (${generate})`)()(shape, seed, count);
    return await new Function(`return (${compacted})`)()(shape, made);
  }, { shape, seed, count, generate: generate.toString(), compacted: compacted.toString() });
}

test("a summary of a generated list of every shape rolls back to the app's list, deep-equal (images, ids, every field)", async () => {
  for (const shape of ["ai-sdk", "openai", "anthropic", "gemini"]) {
    const pairs = await page.evaluate(async ({ shape, generate, summarisedAndBack }) => {
      const made = new Function(`return (${generate})`)()(shape, 5, 30);
      return await new Function(`return (${summarisedAndBack})`)()(shape, made);
    }, { shape, generate: generate.toString(), summarisedAndBack: summarisedAndBack.toString() });
    assert.ok(pairs.length >= 15, `${shape}: ${pairs.length} lists summarised`);
    for (const [n, [given, back]] of pairs.entries()) {
      assert.deepEqual(back, given, `${shape} list ${n}`);
    }
  }
});

test("every list compact, rollback and recall return over generated AI SDK lists passes the ai package's modelMessageSchema", async () => {
  const lists = await run("ai-sdk", 7, 60);
  const schema = z.array(modelMessageSchema);
  for (const [n, { list, recalled }] of lists.entries()) {
    const parsed = schema.safeParse(list);
    assert.ok(parsed.success, `list ${n}: ${JSON.stringify(parsed.error?.issues?.[0])}\n${JSON.stringify(list).slice(0, 600)}`);
    // What the schema cannot say and every provider the SDK sends to requires: each result
    // answers a call made before it in the list (an approval's turn kept whole).
    const called = new Set();
    for (const message of recalled ? [] : list) {
      for (const part of Array.isArray(message.content) ? message.content : []) {
        if (part.type === "tool-call") called.add(part.toolCallId);
        if (part.type === "tool-result") assert.ok(called.has(part.toolCallId), `list ${n}: the result of ${part.toolCallId} without its call\n${JSON.stringify(list).slice(0, 1500)}`);
      }
    }
  }
  assert.ok(lists.length >= 200, `${lists.length} lists checked`);
});

test("every list compact, rollback and recall return over generated OpenAI, Anthropic and Gemini lists, and the recall tool as the README wires it, type-check as the official SDKs' request types", async () => {
  const seen = {};
  for (const shape of ["openai", "anthropic", "gemini"]) seen[shape] = (await run(shape, 11, 30)).map(({ list }) => list);
  // The recall tool as the README wires it into each SDK, from the package's own declarations.
  const declared = await page.evaluate(async () => {
    const tool = new window.pkg.MessageCompactor({ provider: { type: "offline" }, shape: "openai", conversation: "schemas-tool" }).recallTool();
    const { execute, ...aiSdk } = tool.aiSdkTool;
    const args = { query: "nothing archived yet" };
    const executes = typeof execute === "function" && (await execute(args)) === (await tool.call(args));
    return { json: tool.declarationJsonSchema, openai: tool.openaiTool, anthropic: tool.anthropicTool, aiSdk, executes, parameters: tool.parameters };
  });
  assert.ok(declared.executes, "aiSdkTool.execute answers as call");
  // Each SDK's tool is the JSON Schema declaration in that SDK's own fields.
  assert.deepEqual(declared.openai, { type: "function", function: declared.json });
  assert.deepEqual(declared.anthropic, { name: declared.json.name, description: declared.json.description, input_schema: declared.json.parameters });
  assert.deepEqual(declared.aiSdk, { description: declared.json.description, inputSchema: declared.json.parameters });
  assert.deepEqual(declared.parameters, declared.json.parameters);
  const dir = mkdtempSync(join(here, ".schemas-"));
  try {
    const lists = (shape) => seen[shape].map((list) => JSON.stringify(list)).join(",\n");
    writeFileSync(join(dir, "lists.ts"), [
      'import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";',
      'import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";',
      'import type { Content } from "@google/genai";',
      `export const openai: ChatCompletionMessageParam[][] = [\n${lists("openai")}];`,
      `export const anthropic: MessageParam[][] = [\n${lists("anthropic")}];`,
      `export const gemini: Content[][] = [\n${lists("gemini")}];`,
      'import type { ChatCompletionTool } from "openai/resources/chat/completions";',
      'import type { Tool } from "@anthropic-ai/sdk/resources/messages";',
      `const json = ${JSON.stringify(declared.json)} as const;`,
      `export const openaiTools: ChatCompletionTool[] = [${JSON.stringify(declared.openai)}];`,
      `export const anthropicTool: Tool = ${JSON.stringify(declared.anthropic)};`,
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
      assert.ok(seen[shape].length >= 150, `${shape}: ${seen[shape].length} lists checked`);
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
