//! The TypeScript vocabulary of the package (`types.d.ts`, appended to the generated `.d.ts`),
//! and the typed stand-ins that let the generated `.d.ts` name these types instead of `any`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("types.d.ts");

#[wasm_bindgen]
extern "C" {
    /// `ArchivesOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "ArchivesOptions")]
    pub type ArchivesOptionsJs;
    /// `RecallToolOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "RecallToolOptions")]
    pub type RecallToolOptionsJs;
    /// `RehydrateOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "RehydrateOptions")]
    pub type RehydrateOptionsJs;
    /// `LogStoreOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "LogStoreOptions")]
    pub type LogStoreOptionsJs;
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
    /// `CompactorOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "CompactorOptions")]
    pub type CompactorOptionsJs;
    /// `CompactOptions` in JavaScript; declared as the options of a compaction awaited to its
    /// end, the form `Compactor.compact`'s own declaration takes (the `Compactor` interface in
    /// `types.d.ts` adds the background's, `MessageCompactor`'s declares `CompactOptions`).
    #[wasm_bindgen(typescript_type = "ForegroundCompactOptions")]
    pub type CompactOptionsJs;
    /// `Phase` in TypeScript.
    #[wasm_bindgen(typescript_type = "Phase")]
    pub type PhaseJs;
    /// `CanCompactResult` in TypeScript.
    #[wasm_bindgen(typescript_type = "CanCompactResult")]
    pub type CanCompactJs;
    /// `CompactionPlan` in TypeScript.
    #[wasm_bindgen(typescript_type = "CompactionPlan")]
    pub type CompactionPlanJs;
    /// `CompactionMetrics` in TypeScript.
    #[wasm_bindgen(typescript_type = "CompactionMetrics")]
    pub type CompactionMetricsJs;
    /// `ValidationResult` in TypeScript.
    #[wasm_bindgen(typescript_type = "ValidationResult")]
    pub type ValidationResultJs;
    /// `string[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "string[]")]
    pub type StringList;
    /// `ReasoningEntry[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "ReasoningEntry[]")]
    pub type ReasoningEntryList;
    /// `Pin[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "Pin[]")]
    pub type PinList;
}
