// Type-checked with `tsc --strict --noEmit` against the shipped .d.ts: a compile error fails the test.
import init, { LogStore, estimateTokens } from "../../pkg/context_compactor.js";
import type {
  ExecutionEntry,
  ToolActivityEntry,
  ContextCompactorError,
  ErrorCode,
} from "../../pkg/context_compactor.js";

export async function useTheApi(): Promise<number> {
  await init();
  const logs = new LogStore({ prefix: "app_" });
  const n: number = logs.startIteration();
  logs.appendReasoning(`iteration ${n}`);
  const exec: ExecutionEntry = logs.appendExecution({ success: true, code: "1+1", result: 2 });
  const tool: ToolActivityEntry = logs.appendToolActivity({ type: "vfs", action: "write", status: "success" });
  logs.finishIteration();
  const running: boolean = logs.iterationRunning;
  const current: number = logs.currentIteration;
  const reasoning: string[] = logs.reasoningLog();
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
