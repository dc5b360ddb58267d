// What every panel of the demo shares: the page's state, element helpers, the settings form,
// and the message line. Text only ever reaches the page through textContent — never as HTML.

export const $ = (id) => document.getElementById(id);

/** The page's state; `render` is set by app.js (panels call `rerender()`, which resolves once
 * every panel is drawn). */
export const state = {
  logs: null,
  compactor: null,
  archives: null,
  apiKey: "",
  compacting: false,
  iterating: false,
  autoTimer: null,
  lastResult: null,
  render: () => Promise.resolve(),
  /** Usage per iteration, with compactions and restores marked (kept for this tab). */
  timeline: JSON.parse(sessionStorage.getItem("context-compactor-demo:timeline") ?? "[]"),
};

export const rerender = () => state.render();

/** Creates an element with a class and text; text is never parsed as HTML. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export const fmt = (n) => Math.round(n).toLocaleString("en-US");
export const pct = (x) => `${(x * 100).toFixed(0)}%`;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Settings form: provider, context window, model, base URL. */
export function settings() {
  return {
    provider: $("set-provider").value,
    window: Math.max(1000, Number($("set-window").value) || 4000),
    model: $("set-model").value.trim(),
    baseUrl: $("set-base").value.trim(),
    pages: $("set-pages").checked,
    fallback: { loop: "loop", always: "always", off: false }[$("set-fallback").value] ?? "loop",
  };
}

export function showMessage(text, kind = "info") {
  const box = $("message");
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = false;
}

/** What a person should read for an error: a title and a hint, and, when the summary failed
 * after the clearing of the same compaction had written, that the clearing stands. */
export function explain(err) {
  const [title, hint] = explainCode(err);
  if (!err?.archiveKey) return [title, hint];
  const bodies = err.cleared?.length ?? 0;
  const stands = `The clearing that ran first stands: ${bodies} bulky ${bodies === 1 ? "body is" : "bodies are"} in archive ${err.archiveKey} (Rollback in Archives undoes it).`;
  if (err.code === "aborted") return ["Cancelled after the clearing, before a summary", stands];
  return [title, `${hint} ${stands}`.trim()];
}

/** What a person should read for each error code: a title and a hint. */
function explainCode(err) {
  // The error carries the HTTP status as a field; its message is for people, not for parsing.
  const status = typeof err?.status === "number" ? err.status : 0;
  switch (err?.code) {
    case "llm_http":
      if (status === 429 && err.retryable === false) return ["The model's quota is used up for today", "Wait for the daily reset, choose another model in Settings, or enable billing."];
      if (status === 429) {
        const wait = err.retryAfterMs ? (err.retryAfterMs / 1000).toFixed(0) : null;
        return ["Rate-limited by the model's API", wait ? `Try again in ${wait} s.` : "Wait a moment and try again."];
      }
      if (status === 404) return ["The model id is unknown or retired", "Pick a current model in Settings (for example gemini-3.5-flash-lite)."];
      if (status === 400 || status === 401 || status === 403) return ["Your API key was rejected", "Check the key in Settings."];
      return [`The model's API failed (HTTP ${status || "error"})`, "Try again in a moment."];
    case "llm_timeout": return ["The model did not answer in time", "Try again, or raise timeoutMs."];
    case "llm_network": return ["The model could not be reached", "Check the network or the base URL."];
    case "llm_blocked": return ["The model refused to summarise this content", "The safety filter stopped it; nothing was changed."];
    case "invalid_summary": return ["The model's summary could not be used", "It left out required sections or refused, even after a retry."];
    case "aborted": return ["Cancelled before anything was written", "Nothing was changed: the logs are as they were and no archive was made."];
    case "not_allowed": return ["Compaction is not possible right now", ""];
    case "busy": return ["Another compaction is running", "Wait for it to finish."];
    case "storage_quota": return ["Browser storage is full", "Delete old archives and try again."];
    case "storage_corrupt": return ["Stored log data is damaged", "The damaged key was left untouched."];
    case "invalid_input": return ["A setting is not valid", ""];
    case "archive_missing": return ["That archive is gone", "It was deleted, expired or evicted by the browser; the summary that replaced its originals stays."];
    default: return ["Something went wrong", ""];
  }
}

export function showError(err) {
  const [title, hint] = explain(err);
  showMessage(`${title}. ${hint} (${err?.message ?? err})`, "error");
}

/** Runs a store operation under the logs' cross-tab lock (so another tab's writes are not
 * lost), shows its error in the page, and re-renders. */
export async function act(operation) {
  try {
    await state.logs.withLock(operation);
    $("message").hidden = true;
  } catch (err) {
    showError(err);
  }
  rerender();
}
