// Type-checked with `tsc --strict --noEmit` against the shipped .d.ts: a compile error fails the test.
import init, {
  LogStore,
  Compactor,
  estimateTokens,
  validateSummary,
  requiredSections,
  REQUIRED_SECTIONS,
} from "../../pkg/context_compactor.js";
import type {
  Archive,
  ArchiveInfo,
  CanCompactResult,
  CompactionMetrics,
  CompactionPlan,
  CompactionResult,
  CompactorEventMap,
  CompactorOptions,
  ContextCompactorError,
  ErrorCode,
  ExecutionEntry,
  GenerationSettings,
  Phase,
  ToolActivityEntry,
  ValidationResult,
} from "../../pkg/context_compactor.js";

export async function useTheLogStore(): Promise<number> {
  await init();
  const logs = new LogStore({ prefix: "app_" });
  const n: number = logs.startIteration();
  logs.appendReasoning(`iteration ${n}`);
  const exec: ExecutionEntry = logs.appendExecution({ success: true, code: "1+1", result: 2 });
  const tool: ToolActivityEntry = logs.appendToolActivity({ type: "vfs", action: "write", status: "success" });
  logs.finishIteration();
  logs.markIterationRunning();
  logs.finishIteration();
  const recent: string[] = logs.recentReasoning(3);
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
    const code: ErrorCode = (err as ContextCompactorError).code;
    console.log(code);
  }
  const total: number = logs.estimateTokens() + estimateTokens("text");
  return exec.iteration + tool.iteration + current + reasoning.length + executions.length + tools.length + total + (running ? 1 : 0);
}

function on<K extends keyof CompactorEventMap>(target: EventTarget, type: K, handler: (detail: CompactorEventMap[K]) => void): void {
  target.addEventListener(type, (event) => handler((event as CustomEvent<CompactorEventMap[K]>).detail));
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
  new Compactor(logs, { provider: { type: "offline" } });
  new Compactor(logs, { provider: { type: "gemini", apiKey: "k", model: "gemini-2.5-flash-lite", baseUrl: "http://127.0.0.1:1" } });
  on(compactor.events, "compaction_progress", (d) => console.log(d.percent.toFixed(0), d.phase, d.message, d.elapsedMs));
  on(compactor.events, "compaction_error", (d) => console.log(d.code, d.message, d.phase));
  on(compactor.events, "compaction_complete", (d) => console.log(d.result.tokensSaved));
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
    const infos: ArchiveInfo[] = compactor.archives();
    const archive: Archive = compactor.readArchive(result.archiveKey);
    console.log(infos[0]?.bytes, archive.data.executionLog.length);
    await compactor.rollback(result.archiveKey);
    compactor.deleteArchive(result.archiveKey);
    const purged: number = compactor.purgeExpiredArchives();
    const metrics: CompactionMetrics = compactor.metrics();
    console.log(purged, metrics.averageReductionRatio);
    return result;
  } catch (err) {
    const e = err as ContextCompactorError;
    if (e.code === "invalid_summary" || e.code === "llm_http") return null;
    throw err;
  }
}
