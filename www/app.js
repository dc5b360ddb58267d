// The demo page: a simulated reasoning session over LogStore, compacted by Compactor.
// Log and model text only ever reaches the page through textContent — never as HTML.
import init, { LogStore, Compactor } from "/pkg/context_compactor.js";
import { GDRS_KEYS, simulateGdrsSession, simulateIteration } from "./simulate.js";

const $ = (id) => document.getElementById(id);
const KEY_STORAGE = "context-compactor-demo:gemini-key";
const SEED = 20261122;
const ITERATION_MS = 600;
const AUTO_INTERVAL_MS = 900;

/** The phases a person sees in the progress checklist, in order. */
const PHASES = [
  ["waiting", "Wait for the running iteration"],
  ["freezing", "Freeze the logs"],
  ["gathering", "Gather iterations 1…N-1"],
  ["building_prompt", "Build the compaction prompt"],
  ["compacting", "Ask the model for a summary"],
  ["validating", "Check the required sections"],
  ["retrying", "Retry once"],
  ["archiving", "Archive the originals"],
  ["replacing", "Swap the summary in"],
  ["recording_metrics", "Record metrics"],
  ["unfreezing", "Unfreeze the logs"],
];

const state = {
  logs: null,
  compactor: null,
  apiKey: "",
  compacting: false,
  iterating: false,
  autoTimer: null,
  lastResult: null,
  /** Usage per iteration, with compactions and restores marked (kept for this tab). */
  timeline: JSON.parse(sessionStorage.getItem("context-compactor-demo:timeline") ?? "[]"),
};

/** Creates an element with a class and text; text is never parsed as HTML. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const fmt = (n) => Math.round(n).toLocaleString("en-US");
const pct = (x) => `${(x * 100).toFixed(0)}%`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function showMessage(text, kind = "info") {
  const box = $("message");
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = false;
}

/** What a person should read for each error code. */
function explain(err) {
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
    default: return ["Something went wrong", ""];
  }
}

function showError(err) {
  const [title, hint] = explain(err);
  showMessage(`${title}. ${hint} (${err?.message ?? err})`, "error");
}

/** Runs a store operation under the logs' cross-tab lock (so another tab's writes are not
 * lost), shows its error in the page, and re-renders. */
async function act(operation) {
  try {
    await state.logs.withLock(operation);
    $("message").hidden = true;
  } catch (err) {
    showError(err);
  }
  render();
}

// ---------------------------------------------------------------- settings and compactor

function settings() {
  return {
    provider: $("set-provider").value,
    window: Math.max(1000, Number($("set-window").value) || 4000),
    model: $("set-model").value.trim(),
    baseUrl: $("set-base").value.trim(),
  };
}

function buildCompactor() {
  const s = settings();
  const provider =
    s.provider === "gemini"
      ? { type: "gemini", apiKey: state.apiKey, model: s.model, baseUrl: s.baseUrl }
      : { type: "offline" };
  $("gemini-fields").hidden = s.provider !== "gemini";
  $("settings-summary").textContent =
    s.provider === "gemini" ? `Gemini · ${s.model} · ${fmt(s.window)}-token window` : `offline provider · ${fmt(s.window)}-token window`;
  if (s.provider === "gemini" && !state.apiKey) {
    state.compactor = null;
    showMessage("Enter your Gemini API key in Settings to compact with Gemini.", "info");
    return;
  }
  try {
    state.compactor = new Compactor(state.logs, { provider, contextWindowTokens: s.window, retryDelayMs: 1000 });
    listen(state.compactor.events);
    $("message").hidden = true;
  } catch (err) {
    state.compactor = null;
    showError(err);
  }
}

function wireSettings() {
  const remembered = sessionStorage.getItem(KEY_STORAGE);
  if (remembered) {
    state.apiKey = remembered;
    $("set-key").value = remembered;
    $("set-remember").checked = true;
  }
  const rebuild = () => {
    state.apiKey = $("set-key").value.trim();
    if ($("set-remember").checked && state.apiKey) sessionStorage.setItem(KEY_STORAGE, state.apiKey);
    else sessionStorage.removeItem(KEY_STORAGE);
    buildCompactor();
    render();
  };
  for (const id of ["set-provider", "set-window", "set-key", "set-model", "set-base", "set-remember"]) {
    $(id).addEventListener("change", rebuild);
  }
}

// ---------------------------------------------------------------- rendering the logs

/** `text` with its `inline code` and **bold** spans as elements: text nodes only, never HTML. */
function inline(text) {
  const nodes = [];
  for (const [i, part] of text.split("`").entries()) {
    if (i % 2 === 1) {
      nodes.push(el("code", "", part));
      continue;
    }
    for (const [j, piece] of part.split("**").entries()) {
      if (piece) nodes.push(j % 2 === 1 ? el("strong", "", piece) : document.createTextNode(piece));
    }
  }
  return nodes;
}

/** A summary as formatted text: headings, lists, code blocks, inline code — built from nodes. */
function renderSummaryEntry(text) {
  const item = el("li", "entry summary");
  const lines = text.split("\n");
  item.append(el("p", "entry-title", lines[0].replace(/^=+\s*|\s*=+$/g, "")));
  let list = null;
  let code = null;
  for (const line of lines.slice(1)) {
    if (code) {
      if (line.trim().startsWith("```")) {
        item.append(code);
        code = null;
      } else code.textContent += (code.textContent ? "\n" : "") + line;
      continue;
    }
    if (/^=== END COMPACTED SUMMARY ===$/.test(line)) continue;
    if (line.trim().startsWith("```")) {
      list = null;
      code = el("pre", "code", "");
      continue;
    }
    const bullet = /^\s*[-*]\s+(.*)$/.exec(line);
    if (bullet) {
      if (!list) {
        list = el("ul", "summary-list");
        item.append(list);
      }
      const li = el("li");
      li.append(...inline(bullet[1]));
      list.append(li);
      continue;
    }
    list = null;
    if (line.startsWith("### ")) item.append(el("h3", "", line.slice(4)));
    else if (line.trim() !== "") {
      const p = el("p", "entry-text");
      p.append(...inline(line));
      item.append(p);
    }
  }
  if (code) item.append(code);
  return item;
}

/** One reasoning entry as a list item: a summary formatted, a header marked, text as text. */
function reasoningItem(text) {
  if (text.startsWith("=== COMPACTED SUMMARY")) return renderSummaryEntry(text);
  const item = el("li", /^=== ITERATION \d+ ===/.test(text) ? "entry header" : "entry");
  item.append(el("p", "entry-text", text));
  return item;
}

function renderReasoning(entries) {
  $("log-reasoning").replaceChildren(...entries.map(reasoningItem));
  $("count-reasoning").textContent = String(entries.length);
}

const valueText = (value) => (typeof value === "string" ? value : JSON.stringify(value));

function renderExecution(entries) {
  $("log-execution").replaceChildren(
    ...entries.map((entry) => {
      const item = el("li", "entry");
      const meta = el("div", "entry-meta");
      meta.append(
        el("span", `badge ${entry.success ? "ok" : "bad"}`, entry.success ? "success" : "failed"),
        el("span", "", `iteration ${entry.iteration}`),
        el("span", "", `${entry.executionTime ?? 0} ms`),
        el("span", "", entry.source ?? ""),
      );
      item.append(meta, el("pre", "code", entry.code ?? ""));
      if (entry.error?.message) item.append(el("p", "entry-text", `Error: ${entry.error.message}`));
      else if (entry.result !== undefined) item.append(el("p", "entry-text", `→ ${valueText(entry.result)}`));
      return item;
    }),
  );
  $("count-execution").textContent = String(entries.length);
}

function renderTools(entries) {
  $("log-tool").replaceChildren(
    ...entries.map((entry) => {
      const item = el("li", "entry");
      const meta = el("div", "entry-meta");
      const ok = entry.status === "success";
      meta.append(
        el("span", `badge ${ok ? "ok" : entry.status === "error" ? "bad" : "neutral"}`, entry.status ?? ""),
        el("span", "", `iteration ${entry.iteration}`),
      );
      item.append(meta, el("p", "entry-text", `${entry.type} · ${entry.action}`));
      if (entry.details !== undefined) item.append(el("p", "entry-text", valueText(entry.details)));
      return item;
    }),
  );
  $("count-tool").textContent = String(entries.length);
}

/** The compactor that lists, reads and deletes archives: that needs no provider, so the list
 * stays while Gemini is chosen without a key yet. */
function archivist() {
  state.archivist ??= new Compactor(state.logs, { provider: { type: "offline" } });
  return state.compactor ?? state.archivist;
}

/** The live summary that replaced an archive's originals, if it is still in `reasoning` (only
 * then can they be put back). */
/** The live summary entry that replaced `archive`'s originals, to show beside them: the one
 * whose second line names the archive (summaries written before that line: by their range). */
function liveSummaryOf(archive, key, reasoning) {
  const named = reasoning.find((entry) => entry.startsWith("=== COMPACTED SUMMARY") && entry.split("\n", 2)[1]?.includes(`archive ${key};`));
  if (named || !archive.iterations.length) return named;
  const last = Math.max(...archive.iterations);
  return reasoning.find((entry) => entry.startsWith(`=== COMPACTED SUMMARY (Iterations 1-${last}) ===\n`) && !entry.split("\n", 2)[1]?.startsWith("(Originals of"));
}

function renderArchives() {
  const rows = $("archive-rows");
  const archives = archivist().archives();
  $("archive-empty").hidden = archives.length > 0;
  rows.replaceChildren(
    ...archives.map((info) => {
      const tr = el("tr");
      const first = info.iterations[0];
      const last = info.iterations[info.iterations.length - 1];
      // By date, iterations and size; the storage key is a detail under the date.
      const created = el("td", "", new Date(info.timestamp).toLocaleString());
      created.append(el("span", "archive-key mono", info.key));
      const counts = info.entries ?? { reasoning: 0, execution: 0, toolActivity: 0 };
      tr.append(
        created,
        el("td", "", first === last ? `${first}` : `${first}–${last}`),
        el("td", "", `${counts.reasoning + counts.execution + counts.toolActivity}`),
        el("td", "", `${(info.bytes / 1024).toFixed(1)} KB`),
        el("td", "", new Date(info.expiresAt).toLocaleDateString()),
      );
      const actions = el("td");
      const view = el("button", "", "View");
      view.addEventListener("click", () => viewArchive(info.key));
      const restore = el("button", "", "Restore originals");
      restore.addEventListener("click", () => rollback(info.key));
      if (!info.restorable) {
        // A later compaction folded this summary into its own: restore that one first.
        restore.disabled = true;
        restore.title = "A later summary replaced this one: restore the newer archive first.";
        restore.setAttribute("aria-description", restore.title);
      }
      const remove = el("button", "danger", "Delete");
      remove.addEventListener("click", () => {
        if (confirm(`Delete ${info.key}? Its originals cannot be restored afterwards.`)) act(() => archivist().deleteArchive(info.key));
      });
      actions.append(view, restore, remove);
      tr.append(actions);
      return tr;
    }),
  );
}

function viewArchive(key, opener = document.activeElement) {
  try {
    const archive = archivist().readArchive(key);
    const first = archive.iterations[0];
    const last = archive.iterations[archive.iterations.length - 1];
    $("archive-panel-title").textContent = `Archive of iterations ${first}–${last} (${new Date(archive.timestamp).toLocaleString()})`;
    $("archive-view").textContent = JSON.stringify(archive, null, 2);
    // What was compacted, beside what replaced it.
    const data = archive.data;
    $("originals-title").textContent = `Originals: iterations ${first}–${last}, ${data.reasoningLog.length + data.executionLog.length + data.toolActivityLog.length} entries`;
    $("archive-originals").replaceChildren(
      ...data.reasoningLog.map(reasoningItem),
      ...data.executionLog.map((entry) => {
        const item = el("li", "entry");
        item.append(el("p", "entry-meta", `execution · iteration ${entry.iteration ?? "?"} · ${entry.success === false ? "failed" : "success"}`));
        item.append(el("pre", "code", String(entry.code ?? "")));
        return item;
      }),
    );
    const live = liveSummaryOf(archive, key, state.logs.reasoningLog());
    $("archive-replacement").replaceChildren(live ? renderSummaryEntry(live) : el("li", "entry", "A later compaction folded this summary into its own."));
    $("archive-panel").hidden = false;
    $("archive-panel").dataset.key = key;
    state.archiveOpener = opener;
    $("archive-panel").scrollIntoView({ block: "nearest" });
    $("btn-close-archive").focus();
  } catch (err) {
    showError(err);
  }
}

function closeArchive() {
  $("archive-panel").hidden = true;
  delete $("archive-panel").dataset.key;
  const back = state.archiveOpener;
  (back && document.contains(back) && !back.disabled ? back : $("btn-continue")).focus();
}

const SVG = "http://www.w3.org/2000/svg";

/** Adds a point (or a mark) to the usage timeline and draws it. */
function track(usage, mark) {
  const iteration = state.logs.currentIteration;
  const last = state.timeline[state.timeline.length - 1];
  if (!mark && last && !last.mark && last.iteration === iteration && Math.abs(last.usage - usage) < 0.005) return;
  state.timeline.push({ iteration, usage: Math.round(usage * 1000) / 1000, ...(mark ? { mark } : {}) });
  state.timeline = state.timeline.slice(-120);
  sessionStorage.setItem("context-compactor-demo:timeline", JSON.stringify(state.timeline));
  drawTimeline();
}

/** The sawtooth: usage per point as a line, thresholds dashed, compactions and restores marked. */
function drawTimeline() {
  const svg = $("usage-timeline");
  const points = state.timeline;
  const x = (i) => (points.length < 2 ? 300 : 10 + (i * 580) / (points.length - 1));
  const y = (u) => 95 - Math.min(u, 1.2) * 75;
  const node = (tag, attrs, title) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (title) {
      const t = document.createElementNS(SVG, "title");
      t.textContent = title;
      n.append(t);
    }
    return n;
  };
  const children = [0.6, 0.85].map((u) => node("line", { x1: 0, x2: 600, y1: y(u), y2: y(u), class: "threshold" }, `${pct(u)}`));
  children.push(node("polyline", { points: points.map((p, i) => `${x(i).toFixed(1)},${y(p.usage).toFixed(1)}`).join(" "), class: "usage-line" }));
  points.forEach((p, i) => {
    if (!p.mark) return;
    const compaction = p.mark === "compaction";
    const mark = node("text", { x: x(i), y: compaction ? 10 : 99, class: `mark-${p.mark}`, "text-anchor": "middle" }, `${compaction ? "Compacted" : "Restored"} at iteration ${p.iteration}: ${pct(p.usage)}`);
    mark.prepend(document.createTextNode(compaction ? "▼" : "▲"));
    children.push(mark);
  });
  svg.setAttribute("aria-label", `Context usage over ${points.length} points; ${points.filter((p) => p.mark === "compaction").length} compactions`);
  svg.replaceChildren(...children);
}

function renderUsage() {
  const tokens = state.logs.estimateTokens();
  const window = settings().window;
  const usage = tokens / window;
  const fill = $("usage-fill");
  fill.style.width = `${Math.min(100, usage * 100)}%`;
  fill.className = `meter-fill${usage >= 0.85 ? " bad" : usage >= 0.6 ? " warn" : ""}`;
  $("usage-meter").setAttribute("aria-valuenow", String(Math.round(usage * 100)));
  $("stat-tokens").textContent = `${fmt(tokens)} / ${fmt(window)} tokens · ${pct(usage)}`;
  track(usage);
}

function renderCompactButton(running) {
  const host = $("compact-host");
  const button = $("btn-compact");
  host.hidden = state.logs.currentIteration < 3;
  let reason = "";
  if (!state.compactor) reason = "Choose a provider in Settings first.";
  else if (state.compacting) reason = "A compaction is running.";
  else if (running) reason = "Wait for the running iteration to finish.";
  else {
    const verdict = state.compactor.canCompact();
    if (!verdict.ok) reason = verdict.reason;
  }
  button.disabled = reason !== "";
  if (reason) {
    $("compact-tooltip").textContent = reason;
    button.setAttribute("aria-description", reason);
    return;
  }
  const plan = state.compactor.plan();
  const entries = plan.entries.reasoning + plan.entries.execution + plan.entries.toolActivity;
  const text =
    `Save ~${pct(Math.max(0, 1 - plan.estimatedTokensAfter / Math.max(1, state.logs.estimateTokens())))} context\nCompacts iterations ${plan.iterations[0]}–${plan.iterations[1]}: ${entries} entries, ` +
    `~${fmt(plan.tokensToCompact)} tokens → ~${fmt(plan.estimatedTokensAfter)} tokens in all`;
  $("compact-tooltip").textContent = text;
  button.setAttribute("aria-description", text);
}

/** The facts the app pinned, each with its Unpin button. */
function renderPins() {
  const pins = state.logs.pins();
  $("pin-count").textContent = String(pins.length);
  $("pin-list").replaceChildren(
    ...pins.map((pin) => {
      const unpin = el("button", "", "Unpin");
      unpin.type = "button";
      unpin.setAttribute("aria-label", `Unpin: ${pin.text}`);
      unpin.addEventListener("click", () => act(() => state.logs.unpin(pin.id)));
      const item = el("li", "pin");
      item.append(el("span", "pin-text", pin.text), unpin);
      return item;
    }),
  );
}

function render() {
  const logs = state.logs;
  try {
    renderReasoning(logs.reasoningLog());
    renderExecution(logs.executionLog());
    renderTools(logs.toolActivityLog());
    $("stat-iteration").textContent = String(logs.currentIteration);
    renderUsage();
    renderCompactButton(logs.iterationRunning || state.iterating);
    renderArchives();
    renderPins();
  } catch (err) {
    showError(err);
  }
  const running = logs.iterationRunning || state.iterating;
  const stateLabel = $("stat-state");
  stateLabel.textContent = state.compacting ? "compacting" : running ? "iteration running" : state.autoTimer ? "auto" : "idle";
  stateLabel.className = `stat-value ${running || state.compacting ? "running" : "idle"}`;
  $("btn-continue").disabled = running || state.iterating;
  $("btn-pause").disabled = !state.autoTimer;
  $("btn-start").disabled = running;
  $("btn-finish").disabled = !running;
  $("btn-clear").disabled = state.compacting;
  $("btn-gdrs").disabled = state.compacting;
  for (const button of document.querySelectorAll(".entry-form button")) button.disabled = false;
}

// ---------------------------------------------------------------- the reasoning loop

async function continueReasoning() {
  if (state.iterating) return;
  const hadFocus = document.activeElement === $("btn-continue");
  state.iterating = true;
  render();
  try {
    const n = await state.logs.withLock(() => state.logs.startIteration());
    render();
    await sleep(ITERATION_MS);
    await state.logs.withLock(() => simulateIteration(state.logs, n, SEED));
  } catch (err) {
    showError(err);
  } finally {
    await state.logs.withLock(() => state.logs.finishIteration()).catch(showError);
    state.iterating = false;
    render();
    // The button was disabled meanwhile, which drops focus: give it back.
    if (hadFocus && document.activeElement === document.body) $("btn-continue").focus();
  }
}

function startAuto() {
  if (state.autoTimer) return;
  const tick = async () => {
    if (!state.autoTimer) return;
    if (!state.compacting && !state.iterating) {
      if (state.compactor?.shouldAutoCompact()) await compact("auto");
      else await continueReasoning();
    }
    if (state.autoTimer) state.autoTimer = setTimeout(tick, AUTO_INTERVAL_MS);
  };
  state.autoTimer = setTimeout(tick, 0);
  render();
}

function stopAuto() {
  clearTimeout(state.autoTimer);
  state.autoTimer = null;
  $("toggle-auto").checked = false;
  render();
}

// ---------------------------------------------------------------- compaction UI

function resetProgress() {
  $("progress-view").hidden = false;
  $("success-view").hidden = true;
  $("error-view").hidden = true;
  $("retry-notice").hidden = true;
  $("dialog-title").textContent = "Compacting context";
  $("progress-fill").style.width = "0%";
  $("progress-message").textContent = "Starting…";
  $("progress-elapsed").textContent = "0.0 s";
  $("phase-list").replaceChildren(
    ...PHASES.map(([phase, label]) => {
      const item = el("li", "", label);
      item.dataset.phase = phase;
      if (phase === "retrying" || phase === "waiting") item.hidden = true;
      return item;
    }),
  );
}

function markPhase(phase) {
  const index = PHASES.findIndex(([p]) => p === phase);
  for (const item of $("phase-list").children) {
    const i = PHASES.findIndex(([p]) => p === item.dataset.phase);
    if (item.dataset.phase === phase) {
      item.hidden = false;
      item.className = phase === "waiting" ? "waiting" : "running";
    } else if (index >= 0 && i < index && !item.hidden) {
      item.className = "done";
    } else if (phase === "complete") {
      if (!item.hidden) item.className = "done";
    }
  }
}

function listen(events) {
  events.addEventListener("compaction_phase_change", (e) => {
    const { phase } = e.detail;
    if (phase === "error") {
      const running = $("phase-list").querySelector(".running");
      if (running) running.className = "failed";
      return;
    }
    markPhase(phase);
  });
  // Why an attempt is repeated, in the package's words (rate limit, time-out, incomplete summary…).
  events.addEventListener("compaction_retry", (e) => {
    $("retry-notice").textContent = e.detail.message;
    $("retry-notice").hidden = false;
  });
  // A compaction that a closed tab left half done is settled when the page loads.
  events.addEventListener("compaction_rolled_back", (e) => {
    if (!state.compacting) showMessage(`Restored the logs of ${e.detail.archiveKey}; nothing was lost.`, "info");
    render();
  });
  events.addEventListener("compaction_complete", (e) => {
    track(e.detail.result.contextUsageAfter, "compaction");
    if (!state.compacting) render();
  });
  events.addEventListener("compaction_progress", (e) => {
    const { percent, message, elapsedMs } = e.detail;
    $("progress-fill").style.width = `${percent}%`;
    $("progress-message").textContent = message;
    state.progressStarted = performance.now() - elapsedMs;
    $("progress-elapsed").textContent = `${(elapsedMs / 1000).toFixed(1)} s`;
  });
}

function showSuccess(result) {
  state.lastResult = result;
  // For page tests and the console: the last result, never the key or the logs.
  window.lastCompactionResult = result;
  $("progress-view").hidden = true;
  $("success-view").hidden = false;
  $("dialog-title").textContent = "Context compacted";
  $("bar-before").style.width = "100%";
  $("bar-after").style.width = `${Math.max(2, (result.tokensAfter / Math.max(1, result.tokensBefore)) * 100)}%`;
  $("tokens-before").textContent = `${fmt(result.tokensBefore)} tokens`;
  $("tokens-after").textContent = `${fmt(result.tokensAfter)} tokens`;
  $("fact-saved").textContent = `${fmt(result.tokensSaved)} (${pct(result.reduction)})`;
  $("fact-usage").textContent = `${pct(result.contextUsageBefore)} → ${pct(result.contextUsageAfter)}`;
  $("fact-time").textContent = `${(result.durationMs / 1000).toFixed(2)} s`;
  $("fact-iterations").textContent = `${result.iterations[0]}–${result.iterations[1]}`;
  $("fact-attempts").textContent = String(result.attempts);
  $("fact-archive").textContent = result.archiveKey;
  // The ledger: what this summary had to keep — kept by the model, or added by the package.
  const { required, kept, repaired = [] } = result.coverage;
  $("kept-facts-summary").textContent = repaired.length
    ? `${kept.length} of ${required.length} facts kept by the model, ${repaired.length} added from the ledger`
    : `${kept.length} of ${required.length} facts kept`;
  const added = (fact) => {
    const item = el("li", "repaired");
    item.append(el("span", "badge", "added"), " ", fact);
    return item;
  };
  $("kept-facts-list").replaceChildren(...kept.map((fact) => el("li", "", fact)), ...repaired.map(added));
  const unverified = result.unverified ?? [];
  $("unverified-lines").hidden = unverified.length === 0;
  $("unverified-summary").textContent = `${unverified.length} ${unverified.length === 1 ? "line" : "lines"} marked unverified`;
  $("unverified-list").replaceChildren(
    ...unverified.map(({ line, items }) => {
      const item = el("li");
      item.append(el("span", "", line.replace(/^[-*]\s+/, "")), el("span", "unverified-items", ` — not in the logs: ${items.join(", ")}`));
      return item;
    }),
  );
}

function showFailure(err) {
  const [title, hint] = explain(err);
  const cancelled = err?.code === "aborted";
  $("progress-view").hidden = true;
  $("error-view").hidden = false;
  // A cancel is the person's choice, not a failure.
  $("dialog-title").textContent = cancelled ? "Compaction cancelled" : "Compaction failed";
  $("error-view").classList.toggle("cancelled", cancelled);
  $("error-title").textContent = title;
  $("error-detail").textContent = cancelled ? hint : [hint, err?.message].filter(Boolean).join(" — ");
  $("error-view").dataset.code = err?.code ?? "unknown";
}

async function compact(trigger = "user") {
  if (!state.compactor || state.compacting) return;
  state.compacting = true;
  resetProgress();
  const dialog = $("compaction-dialog");
  // A compaction the person asked for is modal; an automatic one must not block the controls.
  if (!dialog.open) {
    if (trigger === "auto") dialog.show();
    else dialog.showModal();
  }
  render();
  // The elapsed time moves on its own while the model works (events arrive only per phase).
  state.progressStarted = performance.now();
  const ticking = setInterval(() => {
    $("progress-elapsed").textContent = `${((performance.now() - state.progressStarted) / 1000).toFixed(1)} s`;
  }, 200);
  try {
    const result = await state.compactor.compact({ trigger });
    showSuccess(result);
    if (trigger === "auto") settleAuto(dialog, autoDoneMessage(result), "info");
  } catch (err) {
    showFailure(err);
    if (trigger === "auto") {
      // Each later tick would try again (and might pay again): Auto stops until the person acts.
      stopAuto();
      const [title, hint] = explain(err);
      settleAuto(dialog, `Automatic compaction failed: ${title}. ${hint} Auto is paused; the logs are unchanged.`, "error");
    }
  } finally {
    clearInterval(ticking);
    state.compacting = false;
    render();
  }
}

/** The line that replaces the automatic compaction's panel once it has finished. */
function autoDoneMessage(result) {
  return (
    `Compacted automatically at ${pct(result.contextUsageBefore)}: iterations ${result.iterations[0]}–${result.iterations[1]}, ` +
    `${fmt(result.tokensBefore)} → ${fmt(result.tokensAfter)} tokens. The originals are in Archives below.`
  );
}

/** An automatic compaction's panel must not stay over the logs: it closes, and a line under the
 * controls says what happened. */
function settleAuto(dialog, text, kind) {
  if (dialog.open && !dialog.matches(":modal")) dialog.close();
  showMessage(text, kind);
}

async function rollback(key) {
  // The summary that replaced the originals (possibly paid for) goes away: ask first.
  if (!confirm("Restore the original entries of this archive? The summary that replaced them is removed.")) return;
  try {
    await archivist().rollback(key);
    track(state.logs.estimateTokens() / settings().window, "restore");
    if ($("compaction-dialog").open) $("compaction-dialog").close();
    if ($("archive-panel").dataset.key === key) closeArchive();
    showMessage("Restored: the original entries are live again; nothing was lost.", "info");
  } catch (err) {
    showError(err);
  }
  render();
  if (document.activeElement === document.body) $("btn-continue").focus();
}

// ---------------------------------------------------------------- wiring

function wireTabs() {
  const tabs = [...document.querySelectorAll(".tab")];
  const select = (tab) => {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute("aria-selected", String(selected));
      other.tabIndex = selected ? 0 : -1;
      $(other.dataset.form).hidden = !selected;
    }
  };
  for (const tab of tabs) {
    tab.addEventListener("click", () => select(tab));
    // The keys of a tab list: arrows move between tabs, Home and End to the ends.
    tab.addEventListener("keydown", (event) => {
      const at = tabs.indexOf(tab);
      const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const target = tabs[(next + tabs.length) % tabs.length];
      select(target);
      target.focus();
    });
  }
}

function parseLoose(text) {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function wireControls() {
  $("btn-continue").addEventListener("click", () => continueReasoning());
  $("btn-pause").addEventListener("click", stopAuto);
  $("toggle-auto").addEventListener("change", (e) => (e.target.checked ? startAuto() : stopAuto()));
  $("btn-compact").addEventListener("click", () => compact("user"));
  // Light or dark: the system's choice until the person picks one (kept for this tab).
  const theme = sessionStorage.getItem("context-compactor-demo:theme");
  if (theme) document.documentElement.dataset.theme = theme;
  $("btn-theme").addEventListener("click", () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    sessionStorage.setItem("context-compactor-demo:theme", document.documentElement.dataset.theme);
  });
  $("btn-cancel-compaction").addEventListener("click", () => state.compactor?.abort());
  $("btn-close-success").addEventListener("click", () => $("compaction-dialog").close());
  $("btn-close-error").addEventListener("click", () => $("compaction-dialog").close());
  // Focus goes back to a control, never to <body>.
  $("compaction-dialog").addEventListener("close", () => {
    const target = [$("btn-compact"), $("btn-continue")].find((b) => !b.disabled && b.offsetParent !== null);
    if (document.activeElement === document.body || !document.activeElement) target?.focus();
  });
  $("btn-close-archive").addEventListener("click", closeArchive);
  $("archive-panel").addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeArchive();
  });
  $("btn-view-archive").addEventListener("click", () => {
    $("compaction-dialog").close();
    if (state.lastResult) viewArchive(state.lastResult.archiveKey, $("btn-compact"));
  });
  $("btn-rollback").addEventListener("click", () => state.lastResult && rollback(state.lastResult.archiveKey));
  // Escape while compacting cancels the compaction (the dialog closes once it has stopped).
  $("compaction-dialog").addEventListener("cancel", (e) => {
    if (!state.compacting) return;
    e.preventDefault();
    state.compactor?.abort();
  });

  $("form-reasoning").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("reasoning-text").value;
    $("reasoning-text").value = "";
    act(() => state.logs.appendReasoning(text));
  });
  $("form-execution").addEventListener("submit", (event) => {
    event.preventDefault();
    const failed = $("execution-failed").checked;
    // Read before the lock is granted: the form may change meanwhile.
    const entry = {
      success: !failed,
      code: $("execution-code").value,
      result: failed ? undefined : parseLoose($("execution-result").value),
      error: failed ? { message: $("execution-error").value || "Error" } : null,
      executionTime: Number($("execution-time").value) || 0,
      source: "manual",
    };
    act(() => state.logs.appendExecution(entry));
  });
  $("form-tool").addEventListener("submit", (event) => {
    event.preventDefault();
    const entry = {
      type: $("tool-type").value,
      action: $("tool-action").value,
      status: $("tool-status").value,
      details: parseLoose($("tool-details").value),
    };
    act(() => state.logs.appendToolActivity(entry));
  });
  $("form-pin").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("pin-text").value;
    $("pin-text").value = "";
    act(() => state.logs.pin(text));
  });
  $("btn-start").addEventListener("click", () => act(() => state.logs.startIteration()));
  $("btn-finish").addEventListener("click", () => act(() => state.logs.finishIteration()));
  $("btn-clear").addEventListener("click", () => {
    if (confirm("Remove the three logs from localStorage? Archives are kept.")) act(() => state.logs.clear());
  });
  $("btn-gdrs").addEventListener("click", async () => {
    if (!confirm("Replace the three logs with a simulated GDRS session? Archives are kept.")) return;
    let truth;
    // The app's own writes go under the same lock as the package's.
    await act(() => {
      for (const key of Object.values(GDRS_KEYS)) localStorage.removeItem(key);
      truth = simulateGdrsSession(localStorage, { seed: 1 + (Date.now() % 1000), iterations: 9 });
    });
    if (truth) showMessage(`Loaded a GDRS session of ${truth.current} iterations, written the way that app writes its logs.`);
  });
  // Another tab wrote to the logs: show its entries.
  window.addEventListener("storage", (event) => {
    if (event.key === null || event.key.startsWith(state.logs.prefix)) render();
  });
}

async function main() {
  try {
    await init();
    state.logs = new LogStore();
  } catch (err) {
    $("stat-state").textContent = "unavailable";
    showError(err);
    return;
  }
  wireTabs();
  wireSettings();
  wireControls();
  buildCompactor();
  render();
  document.body.dataset.ready = "true";
}

main();
