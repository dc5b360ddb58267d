// The TypeScript vocabulary of context-compactor: wasm-bindgen appends this file to the
// generated .d.ts. Every interface of a record is tied to its Rust table by tests/native/name_lists.rs.

export interface LogStore {
  /**
   * Runs `work` while this tab holds the lock every tab of the origin takes before it changes
   * these logs (a compaction's swap, rollback and recovery take it too), with this tab's view
   * of localStorage up to date; resolves to what `work` returns, awaited. Appends made inside
   * it, by the package or by the app itself, are never lost to another tab's write. Calls
   * nest: a compaction started inside `work` shares the hold.
   */
  withLock<T>(work: () => T | PromiseLike<T>): Promise<T>;
}

/** Options of `new LogStore()`. */
export interface LogStoreOptions {
  /** Prefix of every localStorage key; default `"gdrs_"`. */
  prefix?: string;
}

/** One code execution, as stored in `<prefix>execution_log`. */
export interface ExecutionEntry {
  id: string;
  /** ISO-8601 time of the append. */
  timestamp: string;
  /** Stated by the entry, or inferred from `context.iteration` or its position. */
  iteration: number;
  success: boolean;
  code: string;
  result?: unknown;
  error?: { message: string } | null;
  /** Milliseconds. */
  executionTime: number;
  source: string;
  metadata?: Record<string, unknown>;
  /** Fields written by other code are kept as they are. */
  [field: string]: unknown;
}

/** What `appendExecution` takes; id, timestamp and iteration are added. */
export interface ExecutionInput {
  success: boolean;
  code: string;
  result?: unknown;
  /** A message string is stored as `{ message }`. */
  error?: { message: string } | string | null;
  /** Milliseconds; default 0. */
  executionTime?: number;
  /** Default `"auto"`. */
  source?: string;
  metadata?: Record<string, unknown>;
  [field: string]: unknown;
}

/** One tool operation, as stored in `<prefix>tool_activity_log`. */
export interface ToolActivityEntry {
  id: string;
  timestamp: string;
  iteration: number;
  type: string;
  action: string;
  status: string;
  details?: unknown;
  [field: string]: unknown;
}

/** What `appendToolActivity` takes; id, timestamp and iteration are added. */
export interface ToolActivityInput {
  type: string;
  action: string;
  status: string;
  details?: unknown;
  [field: string]: unknown;
}

/** Where a compaction is. */
export type Phase =
  | "idle" | "waiting" | "freezing" | "gathering" | "clearing" | "building_prompt" | "compacting"
  | "validating" | "retrying" | "archiving" | "replacing" | "recording_metrics"
  | "unfreezing" | "complete" | "error" | "rolling_back";

/** What started a compaction. */
export type Trigger = "user" | "auto" | "context_limit_error";
/** Why another attempt follows a failed one: a rejected or cut-off answer, a retryable HTTP status, a time-out, the network, or a custom provider that threw. */
export type RetryReason = "invalid_summary" | "missing_facts" | "unverified" | "injection" | "http_408" | "http_429" | "http_500" | "http_502" | "http_503" | "http_504" | "timeout" | "network" | "provider";

/** What a provider is told besides the prompt. */
export interface GenerationSettings {
  model: string;
  temperature: number;
  maxOutputTokens: number;
  timeoutMs: number;
  /** Aborted when the call is no longer awaited (time-out, `abort()`, the caller's signal): pass it to your `fetch`. */
  signal: AbortSignal;
}

/** Where summaries come from. */
export type ProviderOptions =
  /** Gemini over fetch; the key stays in memory and travels only in the x-goog-api-key header. */
  | { type: "gemini"; apiKey: string; model?: string; baseUrl?: string }
  /** Built in, no network: a deterministic summary drawn from the logs. */
  | { type: "offline" }
  /** Your own model call; resolve to the summary text. */
  | { type: "custom"; generate(prompt: string, settings: GenerationSettings): Promise<string>; model?: string };

/** Options of `new Compactor()`; every number has the default shown, and an option left out, `undefined` or `null` takes its default (`clearing: false`, not `null`, turns the clearing off). */
export interface CompactorOptions {
  provider: ProviderOptions;
  /** The context window of the app's model, in tokens. Range: between 1 and 1000000000. @default 32768 */ contextWindowTokens?: number;
  /** Tokens of the app's own prompt parts (system prompt, tools), counted in the usage. Range: at most 1000000000. @default 0 */ baseTokens?: number;
  /** Completed iterations needed before a compaction is allowed. @default 3 */ minIterations?: number;
  /** Usage (0..1) below which `canCompact()` says no. Given, it is also the usage after a clearing at which the loop's compaction goes on to summarise (as 0.1 did); absent, the loop's compaction summarises after a clearing when the summary would cut what every later turn reads by at least two thirds, or usage is still at 0.6. Range: between 0 and 1. @default 0.6 */ recommendedUsage?: number;
  /** Usage (0..1) at which `shouldAutoCompact()` says yes. Range: between 0 and 1. @default 0.85 */ autoTriggerUsage?: number;
  /** Temperature of the summary call; yours wins when you set it. Range: between 0 and 2. @default 0.1 (1.0 for Gemini 3 and later, the model's own for `-latest` aliases) */ temperature?: number;
  /** Output budget of the summary call. Range: at least 1. @default 4000 */ maxOutputTokens?: number;
  /** Time limit of one provider call, in ms. Range: between 1 and 1800000. @default 30000 */ timeoutMs?: number;
  /** Further attempts after a failed or incomplete one. Range: at most 10. @default 1 */ maxRetries?: number;
  /** Wait before a retry, in ms (a 429's RetryInfo wins, up to 60 s). Range: at most 600000. @default 2000 */ retryDelayMs?: number;
  /** Archives kept at most in localStorage (5 MB for the whole origin); older ones go after the next successful compaction. IndexedDB archives, and a clearing's archives (the bodies its placeholders stand for), are not counted: they leave by expiry, by `deleteArchive`, `purgeExpiredArchives` (`Archives.delete`, `Archives.purgeExpired`), or by the browser (`archives_lost`), so that `recall` answers for every compacted iteration. Range: at least 1. @default 10 */ maxArchives?: number;
  /** Days an archive is kept. Range: greater than 0. @default 30 */ archiveExpiryDays?: number;
  /** Extra guidance appended to the prompt. */ instructions?: string;
  /** The app's own measure: tokens of the prompt it would send now (an app whose prompt holds only part of the logs). Usage is then this over `contextWindowTokens`; return undefined to fall back to the package's count. */ promptTokens?: () => number | undefined;
  /** Key prefix of the archives. Range: not empty. @default `${prefix}archived_logs_` */ archivePrefix?: string;
  /** Where the archives are kept: `"indexedDB"` (off the app's localStorage; archives found in localStorage move there on first open, under the store lock, each read back before its key goes) or `"localStorage"` (beside the logs, for apps whose own code reads them there). A compactor and an `Archives` over the same logs must agree. @default "indexedDB" where the browser has it, else "localStorage" */ archiveStore?: "indexedDB" | "localStorage";
  /** Key of the metrics; fields other code keeps there survive. Range: not empty. @default `${prefix}compaction_metrics` */ metricsKey?: string;
  /** Ledger facts the model's answer lacks: "repair" adds each in the ledger's words under its section (no further call); "retry" asks once more naming them, then repairs; "fail" asks again while retries allow, then fails `invalid_summary` naming them. @default "repair" */ missingFacts?: "repair" | "retry" | "fail";
  /** Lines naming a number (three digits or more, or with a decimal point), id, file name or URL found nowhere in the compacted originals, earlier summaries, pins or ledger (digit grouping and a rounding of a real number are not new): "mark" ends each with " [unverified]"; "retry" asks once more naming them, then marks; "fail" asks again while retries allow, then fails `invalid_summary` naming them. @default "mark" */ unverified?: "mark" | "retry" | "fail";
  /** No stored summary is larger, in tokens, whatever the provider wrote: the goal, the pins, open failures and the identifiers the current iteration refers to stay, with the newest results the budget holds; older results, resolved failures and identifiers no longer referred to leave for the summary's index lines (`coverage.demoted`), which name the archive and the `recall` range that bring them back. Range: between 200 and 1000000000. @default the smaller of maxOutputTokens and 15% of contextWindowTokens */ summaryBudgetTokens?: number;
  /** Take the summary from the cache when the exact input was summarised before (the same prompt to the same model: a rollback followed by the same compaction, a retry after a storage failure), with no provider call. Kept in localStorage under the logs' prefix (`{prefix}summary_cache`, the newest 4), each expiring with the archives; the offline provider is never cached. @default true */ summaryCache?: boolean;
  /** A summary line that gives the user a request, an instruction or a permission, or states an imperative, whose content only data holds (tool output, execution results, fetched text) and the user's words (the goal, the pins) do not: `"mark"` ends it with " [from tool output]" and lists it in `result.injections`; `"retry"` asks once more naming it, then marks; `"fail"` refuses the summary (`invalid_summary`). The model's text is never deleted. @default "mark" */ injections?: "mark" | "retry" | "fail";
  /** The ladder's clearing rung: before a compaction the loop asks for (`auto`, `context_limit_error`) summarises, the execution results and tool bodies larger than `aboveTokens`, outside the newest `keepIterations` iterations, move to an archive of their own and a placeholder of the same JSON type takes each one's place (its id, tool, size, the names and figures it held, and `recall(n)`); no model call. `shouldAutoCompact()` says yes once clearing would free `atLeastTokens` (5% of the window), whatever the usage. A summary follows the clearing only when it would cut what every later turn reads by at least two thirds (or usage is still at 0.6; with `recommendedUsage` given, when usage is still at it); else none is made (`result.rung` "clear"). `recall`, the recall tool and `rehydrate` return the originals, also after a summary archived the placeholders; `rollback(key)` puts them back byte for byte. `false` turns it off. Range: false, or an object whose keepIterations is at least 1. @default `{ aboveTokens: 400 }`, the newest iterations whole by tokens */ clearing?: false | ClearingOptions;
  /** Finished iterations kept verbatim besides the running one: the newest this many stay whole while the ones before them are compacted, and a clearing keeps its `keepIterations` before them: the two add up (3 and 3 clear nothing in the newest 6 finished iterations; for bulky tool output in a small window, 1 with `clearing: { keepIterations: 1 }`) (`plan().verbatim` names them). 0 keeps only the running iteration, as GDRS does. Range: any. @default 0 */ keepRecentIterations?: number;
  /** The ladder's last rung: when every attempt of the model fails (HTTP, time-out, network, blocked, an invalid answer), the package stores its own summary instead of refusing: the offline summariser's, under the same budget, checks, index lines and archive as any summary (`result.rung` "fallback", `result.fallback` says why, `compaction_fallback` tells the UI). "loop" does so for the compactions the loop asks for ("auto", "context_limit_error"), so that a full window never stays full; "always" for the user's as well; `false` never. A compaction the user asks for reports the error as before, and a refused one leaves the logs byte for byte as they were. Range: any. @default "loop" */ fallback?: false | "loop" | "always";
  /** Input budget of one summary call, in tokens: a larger prompt is summarised in parts under it (whole iterations each), then merged. Range: at least 2 × maxOutputTokens + 2000, at most 1000000000. @default the model's input limit less maxOutputTokens for Gemini models (1,048,576 − 4,000); none for custom providers, Gemma and unknown model names */ maxPromptTokens?: number;
}

/** The rules of the clearing rung (`CompactorOptions.clearing`). */
export interface ClearingOptions {
  /** The newest iterations keep their bodies whole (the running one always does), counted before the `keepRecentIterations` a summary keeps verbatim: the two add up; an entry of the recall tool, or one a later iteration names by id, one iteration longer. At least 1. @default by tokens: the newest iteration, and the two before it while their entries larger than `aboveTokens` take together at most `atLeastTokens` (5% of the window) */
  keepIterations?: number;
  /** A body (an execution's `result`, a tool entry's `details`) larger than this, in tokens, is cleared. @default 400 */
  aboveTokens?: number;
  /** By tool type or name (an execution's `source`, a tool entry's `type` or `action`, a message list's function name): "keep" never clears it, "clear" clears it whole once old enough, whatever its size, but for a body shorter than the placeholder that would replace it (a few words stay: clearing them would free nothing). Or the durability of what the tool returns: "ephemeral" (of no use once read: cleared whole, as "clear"), "anchoring" (later steps stand on it: cleared by size, its `keepFields` and short fields inline), "replayable" (can be fetched again: cleared whole, the placeholder says the call can be made again), "non-replayable" (cleared by size, the placeholder says the archive holds the only copy). */
  tools?: Record<string, ToolRule>;
  /** By tool type or name: fields of the body that stay inline when it is cleared. */
  keepFields?: Record<string, string[]>;
  /** The loop's compaction is due (`shouldAutoCompact()` says yes, whatever the usage) once clearing would free this many tokens. @default 5% of contextWindowTokens */
  atLeastTokens?: number;
}

/** A body the clearing rung moved to its archive. */
export interface ClearedBody {
  iteration: number;
  /** The entry's id ("" when it has none). */
  entryId: string;
  /** Tokens the live logs lost: the entry's, less its placeholder's. */
  tokens: number;
}

/** Options of `compact()`. */
export interface CompactOptions {
  /** Run this rung only: "clear" moves bulky bodies to an archive with no model call (refused `not_allowed` when there is none to clear or `clearing` is false); "summarize" summarises without clearing. By default a compaction the loop asks for ("auto", "context_limit_error") clears first and summarises only when a summary would cut what every later turn reads by two thirds or usage is still at `recommendedUsage`; the user's summarises. */
  rung?: "clear" | "summarize";
  /** Default "user"; "context_limit_error" skips the usage rule. */
  trigger?: Trigger;
  /** Cancels the compaction (code "aborted", logs unchanged) until its archive is written. */
  signal?: AbortSignal;
  /** `true` resolves as the summary is asked for (`CompactionStarted`, see `BackgroundCompactOptions`); `false` or absent, once the compaction ended. */
  background?: boolean;
}

/** `compact()` in the background: it resolves as the summary is asked for (`CompactionStarted`), not once it is swapped in; the loop goes on appending meanwhile, the logs are not frozen, and the summary is swapped in as this page's running iteration finishes (`finishIteration()`; at once when none runs), replacing exactly the iterations it summarised. `Compactor` only. */
export interface BackgroundCompactOptions extends CompactOptions {
  background: true;
}

/** `compact()` that waits for the end (`background` false or absent). */
export interface ForegroundCompactOptions extends CompactOptions {
  background?: false;
}

/** What `compact({ background: true })` resolves to as the summary is asked for (or, for a compaction that ended before it asked, a clearing, as it ended). A compaction that fails before it asks rejects `compact()` itself. */
export interface CompactionStarted {
  started: true;
  /** First and last iteration the summary replaces. */
  iterations: [number, number];
  /** The compaction's end: its result once the summary is swapped in; rejects as `compact()` would (a failure, a cancel), the logs as the loop left them; `compaction_error` tells it too (an app that only listens to events hears no unhandled rejection). */
  done: Promise<CompactionResult>;
}

/** `compact()` by its options: in the background, or waiting for the end. */
export interface Compactor {
  /**
   * Starts a compaction and resolves as its summary is asked for: the loop goes on; `done` resolves once the summary is swapped in at the next iteration boundary.
   * @example
   * if (compactor.shouldAutoCompact()) {
   *   const { done } = await compactor.compact({ trigger: "auto", background: true });
   *   done.catch(() => {}); // compaction_error tells it too
   * }
   */
  compact(options: BackgroundCompactOptions): Promise<CompactionStarted>;
  compact(options?: ForegroundCompactOptions | null): Promise<CompactionResult>;
  compact(options?: CompactOptions | null): Promise<CompactionResult | CompactionStarted>;
}

/** Entries per log. */
export interface EntryCounts { reasoning: number; execution: number; toolActivity: number }

/** What `compact()` would do now (no provider call). */
export interface CompactionPlan {
  iterations: [number, number];
  /** First and last iteration that would stay verbatim: the running one, and the finished ones `keepRecentIterations` keeps. */
  verbatim: [number, number];
  entries: EntryCounts;
  tokensToCompact: number;
  promptTokens: number;
  estimatedTokensAfter: number;
  /** Why `compact()` (trigger "user") would be refused now, before any provider call; absent when it would go ahead. */
  refused?: string;
  /** The facts the summary will have to keep (goal, final results, open failures, identifiers iteration N uses, pins, and what earlier summaries kept). */
  ledger: string[];
  /** The running iteration a compaction would wait for, and which triggers wait; absent when none is running. */
  waitsFor?: IterationWait;
  /** No summary is larger (the option `summaryBudgetTokens`, or its default). */
  summaryBudgetTokens: number;
  /** The facts that would leave the summary for its index now, with the archive the compaction would write. */
  demoted: DemotedFact[];
  /** The rung the loop's own compaction ("auto") would run now: "clear" when no summary would follow the clearing (see `clearing`). */
  rung: "clear" | "summarize";
  /** The bodies a clearing would move to its archive now (none when `clearing` is false). */
  cleared: ClearedBody[];
  /** The user's items every summary will have to keep now: an earlier summary's, then each statement the user's words since (`The user wrote: …` lines, a message list's user messages) make, later ones on the same subject replacing earlier ones. */
  userItems: UserItem[];
}

/** What kind of statement of the user an item is: "rule" (never/always/must/do not …), "limit" (a number with at most, no more than, under, budget, by …), "preference" (prefer, answer in …), "task" (done, next is, move on …) or "fact" (anything else with a value, or more than four words; statements in other languages land here, kept whole). */
export type UserItemKind = "rule" | "limit" | "preference" | "fact" | "task";

/** One statement of the user, which every later summary holds word for word under the heading "### 👤 WHAT THE USER SAID" (written by the package after the model's sections), until a later statement on the same subject that says it updates it ("Change of plan: …", "… now …", "instead") replaces it. */
export interface UserItem {
  kind: UserItemKind;
  /** The user's own words. */
  text: string;
  /** Where the user said it: "turn 12" (a message list), "iteration 4" (a LogStore). */
  source: string;
  /** The earlier statement this one replaced, in the compaction that replaced it. */
  replaces?: string;
}

/** A fact that left the summary for one of its index lines ("- Iterations 1–40 (archive …): 38 results of …; recall(1..40)"), and where it is: `recall(iterations[0])` returns its originals. */
export interface DemotedFact {
  /** The fact, as the ledger words it. */
  fact: string;
  /** First and last iteration whose originals hold it. */
  iterations: [number, number];
  /** The archive of the compaction it left with: it holds the fact (in the originals, or in the earlier summary that kept it). */
  archiveKey: string;
}

/** A running iteration a compaction waits for before it gathers. One this page started (`runningHere`) holds back only a compaction the user asks for: the loop's own (`"auto"`, `"context_limit_error"`) goes ahead and keeps it verbatim, since the loop finishes it only after the await. */
export interface IterationWait {
  iteration: number;
  runningHere: boolean;
  /** The triggers whose compaction would wait. */
  triggers: Trigger[];
  message: string;
}

/** Which of the ledger's facts a summary kept. After a successful compaction `missing` is empty: a fact the answer lacks is added in the ledger's words (`repaired`), or, with `missingFacts: "fail"`, the compaction fails `invalid_summary` naming it. */
export interface Coverage {
  required: string[];
  /** Kept by the model's own answer. */
  kept: string[];
  /** Added by the package, in the ledger's words, under the section each belongs to. */
  repaired: string[];
  missing: string[];
  /** Facts that left the summary for its index lines with this compaction (the budget, `summaryBudgetTokens`, holds the newest results; failures a later iteration resolved and identifiers no longer referred to leave too). */
  demoted: DemotedFact[];
}

/** A summary line that gives the user words only tool output said (`result.injections`). */
export interface Injection {
  /** The line, without its " [from tool output]" mark. */
  line: string;
  /** The entry its content came from: "tool activity tool_… (iteration 2)", "execution exec_… (iteration 3)". */
  source: string;
}

/** A line of the summary that names what no source holds; it ends with " [unverified]" in the summary. */
export interface UnverifiedLine {
  /** The line as the model wrote it. */
  line: string;
  /** The numbers, ids, file names and URLs it names that the compacted originals, earlier summaries, pins and ledger do not hold. */
  items: string[];
}

/** One reasoning-log entry, described (`LogStore.reasoningEntries()`): what it is and where it
 * belongs, so that an app need not parse the package's header lines. */
export interface ReasoningEntry {
  /** The entry as stored. */
  text: string;
  /** `"header"`: `=== ITERATION n ===`; `"summary"`: a compacted summary; `"text"`: anything
   * else (the model's reasoning, markers such as `=== ITERATION n ERROR ===`). */
  kind: "header" | "summary" | "text";
  /** The iteration a header starts or a text belongs to (absent for a summary, and for text
   * before any iteration). */
  iteration?: number;
  /** The iterations a summary replaced, first and last. */
  iterations?: [number, number];
  /** The archive holding the originals a summary replaced (absent for a summary the package
   * did not write). */
  archiveKey?: string;
  /** A summary's own text (markdown): without its header line, the line naming its archive
   * and its end line. */
  summary?: string;
}

/** Options of `new Archives(logs, options)`: the archive settings of the compactor that wrote
 * the archives (the same names and defaults as in `CompactorOptions`). */
export interface ArchivesOptions {
  /** Key prefix of the archives. @default `${prefix}archived_logs_` */ archivePrefix?: string;
  /** Where the archives are kept: `"indexedDB"` (off the app's localStorage; archives found in localStorage move there on first open, under the store lock, each read back before its key goes) or `"localStorage"` (beside the logs, for apps whose own code reads them there). A compactor and an `Archives` over the same logs must agree. @default "indexedDB" where the browser has it, else "localStorage" */ archiveStore?: "indexedDB" | "localStorage";
  /** Archives kept at most. @default 10 */ maxArchives?: number;
  /** Days an archive is kept. @default 30 */ archiveExpiryDays?: number;
}

/** `Archives.estimate()`: the origin's storage as the browser reports it, and localStorage's. */
export interface StorageEstimate {
  /** Bytes the origin uses in IndexedDB, Cache and OPFS (`navigator.storage.estimate()`; 0 where unknown). */
  usage: number;
  /** Bytes the browser lets the origin use there (0 where unknown). */
  quota: number;
  /** Whether the browser keeps that storage from eviction (`navigator.storage.persisted()`). */
  persisted: boolean;
  /** Bytes of localStorage's 5 MiB the package finds unused (every script's keys and values counted). */
  localStorageFree: number;
}

/** A fact the app pinned with `LogStore.pin()`. */
export interface Pin {
  id: string;
  text: string;
}

/** One fact of a ledger, as an archive records it. */
export interface Fact {
  id: string;
  kind: "goal" | "result" | "failure" | "identifier" | "pin";
  text: string;
  /** Numbers and identifiers that must appear exactly. */
  exact: string[];
  /** Key words of a text fact; at least half must appear. */
  words: string[];
  /** First and last iteration whose originals hold it, where known: what `recall` is asked for once it has left the summary. */
  iterations?: [number, number];
}

/** Options of `rehydrate()`. */
export interface RehydrateOptions {
  /** The tokens the originals take at most (whole iterations, newest first). @default 2000 */
  budgetTokens?: number;
}

/** What `rehydrate()` found: the archived originals a text refers to, for the next prompt only. */
export interface Rehydrated {
  /** The iterations whose originals `text` holds, newest first (none offered by the last two calls). */
  iterations: number[];
  /** Their entries, one a line (`[iteration 3 · execution] {…}`); empty when nothing is referred to. */
  text: string;
  /** The estimated tokens of `text`, at most `budgetTokens`. */
  tokens: number;
  /** The iterations referred to whose originals did not fit in `budgetTokens` (with what is already in `text`), newest first, with their tokens: `recall(iteration)` or a larger budget brings them. */
  tooLarge: { iteration: number; tokens: number }[];
}

/** Options of `recallTool()`. */
export interface RecallToolOptions {
  /** The tokens an answer of `call` takes at most (a longer one ends with how to call again). @default 4000 */
  maxTokens?: number;
}

/** The Gemini `FunctionDeclaration` of the recall tool: put it in `tools: [{ functionDeclarations: [declaration] }]`. */
export interface RecallToolDeclaration {
  name: "recall_archived_iterations";
  description: string;
  /** A JSON schema (Gemini's OpenAPI subset): `from`, `to`, `part` (INTEGER), `query` (STRING), none required. */
  parameters: { type: "OBJECT"; properties: Record<string, { type: string; description: string }> };
}

/** The recall tool's declaration with its parameters in JSON Schema: OpenAI's `{ type: "function", function: declarationJsonSchema }`, Anthropic's `{ name, description, input_schema: parameters }`, the AI SDK's `jsonSchema(parameters)`. */
export interface RecallToolJsonSchemaDeclaration {
  name: "recall_archived_iterations";
  description: string;
  parameters: RecallToolParameters;
}

/** The recall tool's arguments as JSON Schema (`from`, `to`, `part`: integer; `query`: string; none required). */
export interface RecallToolParameters {
  type: "object";
  properties: Record<string, { type: string; description: string }>;
}

/** The recall tool as OpenAI's Chat Completions `tools` take it. */
export interface RecallToolOpenAi {
  type: "function";
  function: RecallToolJsonSchemaDeclaration;
}

/** The recall tool as Anthropic's Messages `tools` take it. */
export interface RecallToolAnthropic {
  name: "recall_archived_iterations";
  description: string;
  input_schema: RecallToolParameters;
}

/** The recall tool as the AI SDK's `tool()` takes it, once `inputSchema` is wrapped: `tool({ ...aiSdkTool, inputSchema: jsonSchema(aiSdkTool.inputSchema) })`. `execute` is `call`. */
export interface RecallToolAiSdk {
  description: string;
  inputSchema: RecallToolParameters;
  execute(args: RecallToolArgs): Promise<string>;
}

/** What the model passes to the recall tool (`functionCall.args`). */
export interface RecallToolArgs {
  /** The first iteration, from 1. */
  from?: number;
  /** The last iteration (default: `from`). */
  to?: number;
  /** Words, an id, a file name or a number every entry found contains (ASCII case ignored). */
  query?: string;
  /** The part to read, from 1, of an answer longer than `maxTokens` (an entry larger than one answer comes in parts, each naming the next). */
  part?: number;
}

/** What one compaction did. */
export interface CompactionResult {
  iterations: [number, number];
  tokensBefore: number;
  tokensAfter: number;
  tokensSaved: number;
  /** tokensSaved / tokensBefore */
  reduction: number;
  contextUsageBefore: number;
  contextUsageAfter: number;
  /** Provider calls made. */
  attempts: number;
  durationMs: number;
  archiveKey: string;
  /** The validated summary, headings canonical. */
  summary: string;
  /** Tokens the provider reported over all attempts, failed ones included; null when no answer reported any. */
  usage: TokenUsage | null;
  /** The model that answered (Gemini's modelVersion), when the provider says. */
  model?: string;
  /** The facts the summary had to keep, which the model kept and which the package added. */
  coverage: Coverage;
  /** The lines marked " [unverified]". */
  unverified: UnverifiedLine[];
  /** Parts the selection was summarised in before they were merged: 1 unless its prompt exceeded `maxPromptTokens`. */
  chunks: number;
  /** "json" when the answer was a JSON object of the sections (Gemini 2.5 and 3.x are asked for
   * structured output; any provider may answer so), rendered as the six sections; else "markdown". */
  answerFormat: "json" | "markdown";
  /** The lines marked " [from tool output]": each gives the user a request, an instruction or a permission, or states an imperative, that only data (an execution's result, a tool's details, fetched text) said, not the user's own words (the goal, the pins); `source` names the entry it came from. */
  injections: Injection[];
  /** The summary came from the cache (`summaryCache`): its exact input (the same prompt to the same model) was summarised before, so no call was made (`attempts` 0, `usage` null). */
  cached: boolean;
  /** The rung that ran last: "clear" (bulky bodies moved to `archiveKey`, no model call, `summary` empty), "summarize" (the model's summary), or "fallback" (every attempt of the model failed and `fallback` covered the trigger: the package's own summary, made by the offline summariser under the same budget, checks, index lines and archive; the next compaction whose model answers replaces it). */
  rung: "clear" | "summarize" | "fallback";
  /** The bodies this compaction's clearing moved to its archive before any summary. */
  cleared: ClearedBody[];
  /** Why the model's summary could not be used, when `rung` is "fallback": the code and message the compaction would have failed with. */
  fallback?: { code: ErrorCode; message: string };
  /** The model's answer was cut at its output limit (Gemini's `MAX_TOKENS`, or a JSON answer left open) and the summary keeps what it held whole: complete sections and lines, the cut line dropped, the ledger's facts repaired in. */
  salvaged: boolean;
  /** The model's summary replaced a summary the fallback rung had stored (`metrics().upgrades` counts them). */
  upgraded: boolean;
  /** The user's items: `kept`, every one the summary holds in its section of the user's words; `repaired`, those of them the model's own sections did not state; `demoted`, those that left for a line naming them and their source (over their share: see `user_items_over_budget`); `replaced`, earlier ones a later statement replaced, no longer shown. */
  userItems: { kept: UserItem[]; repaired: UserItem[]; demoted: UserItem[]; replaced: UserItem[] };
}

/** Token counts a provider reports (Gemini's usageMetadata). */
export interface TokenUsage {
  promptTokens: number;
  outputTokens: number;
  thinkingTokens: number;
  /** Prompt tokens served from Gemini's context cache (part of promptTokens). */
  cachedTokens: number;
}

/** The originals an archive keeps, exactly as stored. */
export interface ArchiveData {
  reasoningLog: string[];
  executionLog: ExecutionEntry[];
  toolActivityLog: ToolActivityEntry[];
}

/** `<prefix>archived_logs_<ms>` */
export interface Archive {
  timestamp: number;
  expiresAt: number;
  iterations: number[];
  trigger: Trigger;
  data: ArchiveData;
  metadata: ArchiveMetadata;
  /** Where each archived entry stood in its log (0-based), log by log: a rollback puts it back there (absent in archives of early 0.1 builds). */
  positions?: PerEntry<number>;
  /** The iteration of each archived entry, log by log (absent in archives of 0.1 builds before the ledger). */
  entryIterations?: PerEntry<number>;
  /** The facts the summary that replaced these entries had to keep; a later compaction requires them again. */
  ledger?: Fact[];
  /** The index lines of that summary, when it had any; a line naming no archive means this one. */
  index?: IndexLine[];
  /** In a clearing's archive: the hash of the placeholder that took each original's place, beside it. */
  placeholders?: PerEntry<string>;
  /** In the archive of a `MessageCompactor`'s summary: the messages it folded, exactly as the app gave them, each `[turn, message]` (turn `0`: an earlier summary message); its rollback gives them back. */
  originals?: [number, object][];
}

/** One value per archived entry, log by log, in the order of `data`. */
export interface PerEntry<T> { reasoningLog: T[]; executionLog: T[]; toolActivityLog: T[] }

/** The usage an archive's compaction started from. */
export interface ArchiveMetadata { contextUsageBefore: number; totalTokensBefore: number }

/** One index line of a summary: a range of iterations whose facts left the summary, the archive that holds them, and what is there. */
export interface IndexLine {
  first: number;
  last: number;
  /** The archive that holds them; absent in an archive's own record (that archive). */
  archive?: string;
  /** The newest archive of a line folded from several (the oldest is `archive`). */
  lastArchive?: string;
  /** Results that left. */
  results: number;
  /** Failures a later iteration resolved. */
  failuresResolved: number;
  /** Failures still open that the budget could not hold. */
  failuresOpen: number;
  /** Identifiers the current iteration no longer refers to. */
  identifiers: number;
  /** Other facts that left. */
  others: number;
  /** What the first and the last of them name (a task's label such as `compare(shard_001)`, an id). */
  names: string[];
  /** The runs of iterations whose facts it counts, `[first, last]` each, when they are not the one run `first..last` (empty then): its recall asks for these and no other. */
  spans: [number, number][];
  /** The open failures it names, each with its iteration: `readMetrics(shard_0040) (40)`. */
  open: string[];
}

/** An archive without its data, plus its key, stored size (bytes, UTF-16) and entry counts. */
export interface ArchiveInfo extends Omit<Archive, "data" | "positions" | "entryIterations" | "ledger" | "index" | "placeholders" | "originals"> {
  key: string;
  bytes: number;
  entries: EntryCounts;
  /** Whether `rollback(key)` can put the originals back now: the summary that replaced them is in the reasoning log (a later compaction may have folded it into its own; roll that one back first), or for a clearing's archive, a placeholder it wrote is in the live logs. */
  restorable: boolean;
  /** The rung that wrote it: "clear" (the bodies a clearing took) or "summarize" (a summary: the model's, or the package's own when the fallback rung ran; its summary entry says which). */
  rung: "clear" | "summarize";
}

/** Running totals, persisted under `<prefix>compaction_metrics`. */
export interface CompactionMetrics {
  totalCompactions: number;
  successfulCompactions: number;
  failedCompactions: number;
  averageReductionRatio: number;
  averageExecutionTime: number;
  totalTokensSaved: number;
  totalAttempts: number;
  totalPromptTokens: number;
  totalOutputTokens: number;
  totalThinkingTokens: number;
  lastCompactionAt: string | null;
  lastErrorCode: string | null;
  /** Ledger facts the package added to summaries (the models' answers lacked them). */
  totalRepairedFacts: number;
  /** Summary lines marked " [unverified]". */
  totalUnverifiedLines: number;
  /** What the last compaction cost and mended, successful or not; null before the first. */
  lastCompaction: CompactionCost | null;
  /** Compactions whose clearing rung ran (with or without a summary after it). */
  clearings: number;
  /** Tokens the clearings took out of the live logs. */
  tokensCleared: number;
  /** Compactions the clearing rung completed alone: model calls a summary would have made. */
  callsSaved: number;
  /** Compactions that stored the package's own summary because every attempt of the model failed (the fallback rung). */
  fallbacks: number;
  /** Compactions whose model summary replaced a fallback summary. */
  upgrades: number;
}

/** What one compaction cost and mended. */
export interface CompactionCost { calls: number; repairedFacts: number; unverifiedLines: number }

/** `canCompact()` */
export interface CanCompactResult {
  ok: boolean;
  /** Why not, and what would change it. */
  reason?: string;
  /** The running iteration a compaction the user asks for would wait for first. */
  waitsFor?: IterationWait;
}

/** `validateSummary()` */
export interface ValidationResult { valid: boolean; errors: string[] }

/** The `detail` of each event dispatched on `compactor.events`. */
export interface CompactorEventMap {
  compaction_start: { trigger: Trigger; iteration: number; contextUsage: number };
  compaction_phase_change: { phase: Phase; previous: Phase };
  compaction_progress: { phase: Phase; percent: number; message: string; elapsedMs: number };
  compaction_archived: { archiveKey: string; timestamp: number };
  compaction_complete: { result: CompactionResult };
  compaction_error: { code: ErrorCode; message: string; phase: Phase };
  /** An attempt failed and another follows: why, which attempt, after how long. */
  compaction_retry: { reason: RetryReason; attempt: number; waitMs: number; message: string };
  compaction_rolled_back: { archiveKey: string };
  /** Archives the live summaries name that are no longer stored (deleted, expired, or evicted
   * by the browser), reported when a compactor is created; their originals cannot be read back. */
  archives_lost: { keys: string[] };
  /** A key of the package's own did not read (`reason`): the journal an interrupted compaction left (set aside rather than obeyed: its archive key must not be guessed; its archive, if written, keeps the originals) or the pins (later summaries no longer keep them: pin them again). Its text is kept under `keptAs` (`null` when storage had no room), and compactions go on instead of failing `storage_corrupt` until the key is removed by hand. */
  key_set_aside: { key: string; keptAs: string | null; reason: string };
  /** The origin's storage (`navigator.storage.estimate()`) was at least 80% full as a compaction began: the expired archives were purged first (`purged`, never an unexpired one), the figures are those after, and that compaction writes no summary cache. */
  storage_pressure: { usage: number; quota: number; share: number; purged: string[] };
  /** Every attempt of the model failed on a compaction `fallback` covers: the package stores its own summary instead (`result.rung` "fallback"); `code` and `message` say why. */
  compaction_fallback: { code: ErrorCode; message: string };
  /** The user's items (`result.userItems`) outgrew their share of the summary (`budget`, the summary's budget beside it): the oldest facts and preferences left first, rules last, each for a line that names it and its source (`recall` brings it back); the compaction went on. */
  user_items_over_budget: { tokens: number; budget: number; message: string };
}

/** `compactor.events`: an `EventTarget` whose listeners get typed `CustomEvent`s. Only the names of `CompactorEventMap` compile: a misspelt name is a type error, not a listener that never fires. */
export interface CompactorEvents extends Omit<EventTarget, "addEventListener" | "removeEventListener"> {
  addEventListener<K extends keyof CompactorEventMap>(type: K, listener: ((event: CustomEvent<CompactorEventMap[K]>) => void) | { handleEvent(event: CustomEvent<CompactorEventMap[K]>): void } | null, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof CompactorEventMap>(type: K, listener: ((event: CustomEvent<CompactorEventMap[K]>) => void) | { handleEvent(event: CustomEvent<CompactorEventMap[K]>): void } | null, options?: boolean | EventListenerOptions): void;
}

/** Codes of the errors the package throws (`error.code`). */
export type ErrorCode =
  | "not_allowed" | "busy" | "llm_http" | "llm_timeout" | "llm_network" | "llm_blocked"
  | "invalid_summary" | "storage_quota" | "storage_corrupt" | "storage_unavailable"
  | "invalid_input" | "aborted" | "not_initialized" | "archive_missing";

/** Every error the package throws or rejects with: a real `Error` with `name` "ContextCompactorError". */
export declare class ContextCompactorError extends Error {
  private constructor();
  readonly name: "ContextCompactorError";
  /** What went wrong, stable across versions (switch on it). */
  readonly code: ErrorCode;
  /** The localStorage key concerned, for storage errors. */
  key?: string;
  /** The HTTP status the model's API answered with. */
  status?: number;
  /** Whether trying again later can succeed (false for a daily quota, a bad key, a block). */
  retryable?: boolean;
  /** How long the API asked to wait, in ms. */
  retryAfterMs?: number;
  /** The model whose call failed. */
  model?: string;
  /** Set when the summary rung failed (or was cancelled) after the clearing rung of the same compaction had written: the clearing stands, under this archive key (`rollback(archiveKey)` undoes it). Without it, the logs are exactly as before the call. */
  archiveKey?: string;
  /** The bodies the clearing that stands moved to `archiveKey`, as `CompactionResult.cleared` lists them. */
  cleared?: ClearedBody[];
  /** Whether `value` is an error of this package, also one from another copy of it (two bundles, an iframe). */
  static isInstance(value: unknown): value is ContextCompactorError;
}

/** What `clearing.tools` gives a tool: keep or clear, or the durability of what it returns. */
export type ToolRule = "keep" | "clear" | "ephemeral" | "anchoring" | "replayable" | "non-replayable";

/** The shape of an agent's message list: Gemini `contents`, OpenAI chat messages, Anthropic Messages, the AI SDK's `ModelMessage[]`. */
export type MessageShape = "gemini" | "openai" | "anthropic" | "ai-sdk";

/** Options of `new MessageCompactor()`: those of `Compactor`, the list's shape, and the name its archives go under. `clearing` defaults to `{ keepIterations: 1 }` here: the newest turn's tool results stay whole, older bulky ones become placeholders the recall tool brings back. */
export interface MessageCompactorOptions extends CompactorOptions {
  shape: MessageShape;
  /** Names this list's archives (IndexedDB, under `cc_messages_{conversation}_`). @default "default" */
  conversation?: string;
}

/** A tool result a clearing moved to an archive. Turns count from 0 at the list's first turn. */
export interface ClearedCall { turn: number; callId: string | null; tokens: number }

/** The methods of `MessageCompactor` that take the app's list, typed by its message type `M` (the class's other members are declared with it). */
export interface MessageCompactor {
  /** Share (0..1, can exceed 1) of `contextWindowTokens` the list would take once the last compaction's result stands in for what it was given. */
  usage(messages: readonly unknown[]): number;
  /** Whether the loop should compact the list now (false while a compaction runs). */
  shouldCompact(messages: readonly unknown[]): boolean;
  /** What `compact(messages)` would do now: no provider call, nothing written. */
  plan(messages: readonly unknown[]): MessagePlan;
  /**
   * The list to send: `messages` itself when nothing is due (`rung` `"none"`), else the ladder's: old bulky tool results cleared, then the older turns folded into one summary message after the first user message; the newest turns as the app wrote them. The trigger is `"auto"` unless `options.trigger` says otherwise. A list that begins with the whole list a compaction was given last (the AI SDK's `prepareStep`) is worked on as what that compaction gave back, followed by the rest.
   * @example
   * const done = await compactor.compact(messages);
   * messages = done.messages; // send these
   */
  compact<M>(messages: M[], options?: CompactOptions | null): Promise<MessageCompaction<M>>;
  /** The archived results of a call (its id, or the id a cleared call's report names) or of a turn (from 0): the messages that held them, exactly as the app gave them (from the oldest archive that keeps them, so a cleared body comes back whole); empty when the list still holds them. */
  recall<M = unknown>(callIdOrTurn: string | number): Promise<M[]>;
  /** Undoes the compaction that wrote `archiveKey`, in `messages` (the list it gave, perhaps grown since): resolves to the list with the originals back, deep-equal to the app's, plus what it appended since (each placeholder's body spliced back in, byte for byte; the messages a summary folded as the app gave them, kept in its archive: images, signatures, fields of the app's own). Refused `busy` while a compaction runs. */
  rollback<M>(archiveKey: string, messages: M[]): Promise<M[]>;
}

/** What `MessageCompactor.compact()` did, and the list to send. */
export interface MessageCompaction<M = unknown> {
  /** The list to send next: the input array itself when nothing was due; else the app's own message objects wherever nothing changed. */
  messages: M[];
  /** Whether this call compacted anything new; `false` when the list came back as it was given or as the last compaction left it (then `rung` is `"none"`, `archiveKey` `null` and `tokensBefore` equals `tokensAfter`). */
  compacted: boolean;
  rung: "none" | "clear" | "summarize" | "fallback";
  /** The summary message's text, when one was written. */
  summary: string | null;
  cleared: ClearedCall[];
  /** First and last turn folded into the summary (0-based). */
  turns: [number, number] | null;
  archiveKey: string | null;
  tokensBefore: number;
  tokensAfter: number;
  coverage: Coverage | null;
  injections: Injection[];
  /** What the summary did with the user's items (see `CompactionResult.userItems`): null when no summary was written. */
  userItems: CompactionResult["userItems"] | null;
}

/** What `MessageCompactor.compact(messages)` would do now: no provider call, nothing written. */
export interface MessagePlan {
  rung: "none" | "clear" | "summarize";
  turns: [number, number] | null;
  cleared: ClearedCall[];
  tokensBefore: number;
  estimatedTokensAfter: number;
}
