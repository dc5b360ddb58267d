//! The TypeScript vocabulary of the package, declared once, and the typed stand-ins that let
//! the generated `.d.ts` name these types instead of `any`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
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

/** Codes of the errors the package throws (`error.code`). */
export type ErrorCode =
  | "not_allowed" | "busy" | "llm_http" | "llm_timeout" | "llm_network" | "llm_blocked"
  | "invalid_summary" | "storage_quota" | "storage_corrupt" | "storage_unavailable"
  | "invalid_input";

/** Every error the package throws: a real `Error` with `name` "ContextCompactorError". */
export interface ContextCompactorError extends Error {
  code: ErrorCode;
  /** The localStorage key concerned, for storage errors. */
  key?: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `LogStoreOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "LogStoreOptions")]
    pub type LogStoreOptions;
    /// `ExecutionEntry` in TypeScript.
    #[wasm_bindgen(typescript_type = "ExecutionEntry")]
    pub type ExecutionEntryJs;
    /// `ExecutionEntry[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "ExecutionEntry[]")]
    pub type ExecutionEntryList;
    /// `ExecutionInput` in TypeScript.
    #[wasm_bindgen(typescript_type = "ExecutionInput")]
    pub type ExecutionInputJs;
    /// `ToolActivityEntry` in TypeScript.
    #[wasm_bindgen(typescript_type = "ToolActivityEntry")]
    pub type ToolActivityEntryJs;
    /// `ToolActivityEntry[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "ToolActivityEntry[]")]
    pub type ToolActivityEntryList;
    /// `ToolActivityInput` in TypeScript.
    #[wasm_bindgen(typescript_type = "ToolActivityInput")]
    pub type ToolActivityInputJs;
    /// `string[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "string[]")]
    pub type StringList;
}
