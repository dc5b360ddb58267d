// Type-checked with `tsc --strict --noEmit` against the shipped .d.ts: a compile error fails the test.
import init, {
  LogStore,
  Compactor,
  Archives,
  estimateTokens,
  validateSummary,
  requiredSections,
  REQUIRED_SECTIONS,
  ContextCompactorError,
  MessageCompactor,
} from "../../pkg/context_compactor.js";
import type {
  MessageCompaction,
  MessagePlan,
  RecallToolAnthropic,
  RecallToolJsonSchemaDeclaration,
  RecallToolOpenAi,
  RecallToolParameters,
  ArchiveData,
  StorageEstimate,
  UnverifiedLine,
  Archive,
  ArchiveInfo,
  CanCompactResult,
  CompactionMetrics,
  CompactionPlan,
  CompactionResult,
  CompactionStarted,
  CompactorEvents,
  Coverage,
  Fact,
  Pin,
  CompactorOptions,
  ErrorCode,
  ExecutionEntry,
  GenerationSettings,
  Phase,
  ToolActivityEntry,
  ValidationResult,
  Rehydrated,
} from "../../pkg/context_compactor.js";

export async function useTheLogStore(): Promise<number> {
  await init();
  const logs = new LogStore({ prefix: "app_" });
  const n: number = logs.startIteration();
  logs.appendReasoning(`iteration ${n}`);
  logs.appendUserMessage("Cap the spend at $900.");
  const exec: ExecutionEntry = logs.appendExecution({ success: true, code: "1+1", result: 2 });
  const tool: ToolActivityEntry = logs.appendToolActivity({ type: "vfs", action: "write", status: "success" });
  logs.finishIteration();
  logs.markIterationRunning();
  logs.finishIteration();
  const recent: string[] = logs.recentReasoning(3);
  for (const entry of logs.reasoningEntries()) {
    const kind: "header" | "summary" | "text" = entry.kind;
    const range: [number, number] | undefined = entry.iterations;
    const archive: string | undefined = entry.archiveKey;
    console.log(kind, entry.text.length, entry.iteration, range, archive);
  }
  const locked: ExecutionEntry = await logs.withLock(() => logs.appendExecution({ success: true, code: "2+2" }));
  const later: number = await logs.withLock(async () => logs.currentIteration);
  console.log(locked.id, later);
  const running: boolean = logs.iterationRunning;
  const current: number = logs.currentIteration;
  const reasoning: string[] = logs.reasoningLog();
  void recent;
  const executions: ExecutionEntry[] = logs.executionLog();
  const tools: ToolActivityEntry[] = logs.toolActivityLog();
  try {
    logs.clear();
  } catch (err) {
    // A type guard, no cast.
    if (ContextCompactorError.isInstance(err)) {
      const code: ErrorCode = err.code;
      console.log(code, err.status, err.retryable, err.retryAfterMs, err.model, err.key);
    }
  }
  const total: number = logs.estimateTokens() + estimateTokens("text");
  return exec.iteration + tool.iteration + current + reasoning.length + executions.length + tools.length + total + (running ? 1 : 0);
}

export async function useTheCompactor(logs: LogStore): Promise<CompactionResult | null> {
  const custom: CompactorOptions = {
    provider: {
      type: "custom",
      generate: async (prompt: string, settings: GenerationSettings) => `${prompt.length} ${settings.model}`,
    },
    contextWindowTokens: 32768,
    instructions: "Keep ids.",
  };
  const compactor = new Compactor(logs, custom);
  new Compactor(logs, { provider: { type: "offline" }, missingFacts: "retry", unverified: "mark", maxPromptTokens: 200_000 });
  new Compactor(logs, { provider: { type: "gemini", apiKey: "k", model: "gemini-2.5-flash-lite", baseUrl: "http://127.0.0.1:1" } });
  const events: CompactorEvents = compactor.events;
  // Typed listeners, no cast: `event.detail` has the type of the event's name.
  events.addEventListener("compaction_start", (e) => console.log(e.detail.trigger, e.detail.iteration));
  compactor.events.addEventListener("compaction_progress", (e) => console.log(e.detail.percent.toFixed(0), e.detail.phase, e.detail.message, e.detail.elapsedMs));
  compactor.events.addEventListener("compaction_error", (e) => console.log(e.detail.code, e.detail.message, e.detail.phase));
  compactor.events.addEventListener("compaction_complete", (e) => console.log(e.detail.result.tokensSaved));
  compactor.events.addEventListener("compaction_retry", (e) => console.log(e.detail.reason, e.detail.attempt, e.detail.waitMs));
  // A misspelt event name must not compile (tsc fails on an unused @ts-expect-error).
  // @ts-expect-error "compaction_progres" is not an event name
  compactor.events.addEventListener("compaction_progres", (e) => console.log(e));
  // @ts-expect-error nor is "progress"
  compactor.events.removeEventListener("progress", () => {});
  const controller = new AbortController();
  compactor.compact({ signal: controller.signal }).catch(() => null);
  compactor.abort();
  // In the background: resolves as the summary is asked for; `done` once it is swapped in.
  const started: CompactionStarted = await compactor.compact({ trigger: "auto", background: true });
  const range: [number, number] = started.iterations;
  const swapped: CompactionResult = await started.done;
  console.log(started.started, range, swapped.tokensSaved);
  // @ts-expect-error a background compaction resolves to CompactionStarted, not the result
  const notAResult: CompactionResult = await compactor.compact({ background: true });
  console.log(notAResult);
  const phase: Phase = compactor.phase;
  const frozen: boolean = compactor.frozen;
  const usage: number = compactor.contextUsage();
  const verdict: CanCompactResult = compactor.canCompact();
  const auto: boolean = compactor.shouldAutoCompact();
  const prompt: string = compactor.buildPrompt();
  const plan: CompactionPlan = compactor.plan();
  const validation: ValidationResult = validateSummary(prompt);
  const sections: readonly string[] = REQUIRED_SECTIONS;
  const same: boolean = requiredSections().join() === sections.join();
  console.log(phase, frozen, usage, verdict.reason, auto, plan.tokensToCompact, plan.refused ?? "allowed", validation.errors, same);
  if (!verdict.ok) return null;
  try {
    const result: CompactionResult = await compactor.compact({ trigger: "user" });
    const infos: ArchiveInfo[] = await compactor.archives();
    const archive: Archive = await compactor.readArchive(result.archiveKey);
    console.log(infos[0]?.bytes, archive.data.executionLog.length);
    // The coverage ledger: what the summary had to keep, pins, and the originals read back.
    const coverage: Coverage = result.coverage;
    const facts: Fact[] = archive.ledger ?? [];
    const ledger: string[] = plan.ledger;
    const pinId: string = await logs.withLock(() => logs.pin("Amounts are in euros."));
    const pins: Pin[] = logs.pins();
    logs.unpin(pinId);
    const originals = await compactor.recall(result.iterations[0]);
    const firstLine: string | undefined = originals?.reasoningLog[0];
    console.log(coverage.kept.length, coverage.missing, facts[0]?.kind, ledger.length, pins.length, firstLine);
    await compactor.rollback(result.archiveKey);
    await compactor.deleteArchive(result.archiveKey);
    const purged: number = await compactor.purgeExpiredArchives();
    const metrics: CompactionMetrics = compactor.metrics();
    console.log(purged, metrics.averageReductionRatio, metrics.totalRepairedFacts, metrics.lastCompaction?.calls);
    const unverified: UnverifiedLine[] = result.unverified;
    console.log(coverage.repaired.length, unverified[0]?.items, result.chunks, result.answerFormat === "json", result.cached);
    const tool = compactor.recallTool({ maxTokens: 2000 });
    const name: "recall_archived_iterations" = tool.declaration.name;
    const answer: string = await tool.call({ from: 2, to: 3 });
    const found: string = await compactor.recallTool().call({ query: "exec_123" });
    // @ts-expect-error: an iteration is a number
    tool.call({ from: "2" });
    const back: Rehydrated = await compactor.rehydrate("look at iteration 2", { budgetTokens: 500 });
    const offered: number[] = back.iterations;
    console.log(name, answer.length, found.length, offered, back.tokens, back.text);
    return result;
  } catch (err) {
    const e = err as ContextCompactorError;
    if (e.code === "invalid_summary" || e.code === "llm_http") return null;
    throw err;
  }
}

export async function useTheArchives(logs: LogStore): Promise<number> {
  const archives = new Archives(logs, { maxArchives: 5 });
  const list: ArchiveInfo[] = await archives.list();
  const first: Archive | undefined = list[0] ? await archives.read(list[0].key) : undefined;
  const recalled: ArchiveData | null = await archives.recall(2);
  const toolText: string = await archives.recallTool().call({ query: "orders.csv" });
  console.log(toolText.length);
  const estimate: StorageEstimate = await archives.estimate();
  const kept: boolean = await archives.persist();
  const purged: number = await archives.purgeExpired();
  if (first) await archives.rollback(list[0].key);
  // @ts-expect-error: Archives options hold no provider
  new Archives(logs, { provider: { type: "offline" } });
  console.log(recalled?.reasoningLog.length, estimate.localStorageFree, kept);
  return purged;
}

/** An OpenAI chat message, as an app types its list. */
type ChatMessage =
  | { role: "user" | "system"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[] }
  | { role: "tool"; tool_call_id: string; content: string };

export async function useAMessageList(messages: ChatMessage[]): Promise<ChatMessage[]> {
  const compactor = new MessageCompactor({ shape: "openai", provider: { type: "offline" }, contextWindowTokens: 32_768, conversation: "chat" });
  const usage: number = compactor.usage(messages);
  const plan: MessagePlan = compactor.plan(messages);
  if (compactor.shouldCompact(messages)) {
    const done: MessageCompaction<ChatMessage> = await compactor.compact(messages, { trigger: "auto" });
    messages = done.messages; // the app's own message type back
    const compacted: boolean = done.compacted;
    console.log(done.rung, compacted, done.turns?.[0], done.cleared.map((c) => c.callId), done.archiveKey);
  }
  const back: ChatMessage[] = await compactor.recall<ChatMessage>("call_1");
  const recall = compactor.recallTool({ maxTokens: 2_000 });
  const schema: RecallToolJsonSchemaDeclaration = recall.declarationJsonSchema;
  const openaiTool: RecallToolOpenAi = recall.openaiTool;
  const anthropicTool: RecallToolAnthropic = recall.anthropicTool;
  const parameters: RecallToolParameters = recall.parameters;
  const answer: Promise<string> = recall.aiSdkTool.execute({ query: "call_1" });
  console.log(openaiTool.function.name, anthropicTool.input_schema.type, parameters.properties, await answer);
  // @ts-expect-error: the shape is one of the four
  new MessageCompactor({ shape: "chatml", provider: { type: "offline" } });
  console.log(usage, plan.rung, back.length, schema.parameters.type);
  return messages;
}
