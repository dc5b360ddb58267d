// The demo page: a simulated reasoning session over LogStore, compacted by Compactor. This
// module builds the compactor from the Settings and renders every panel; each panel is a
// module of its own. Log and model text only ever reaches the page through textContent.
import init, { LogStore, Compactor } from "/pkg/context_compactor.js";
import { $, fmt, state, settings, showError, showMessage } from "./ui.js";
import { renderExecution, renderReasoning, renderTools } from "./entries-view.js";
import { renderCompactButton, renderPins, renderUsage } from "./usage-view.js";
import { renderArchives } from "./archives-view.js";
import { recallIteration, renderRecall, wireRecall } from "./recall-view.js";
import { listen } from "./compaction-view.js";
import { wireControls, wireTabs } from "./controls.js";

const KEY_STORAGE = "context-compactor-demo:gemini-key";

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
    state.compactor = new Compactor(state.logs, { provider, contextWindowTokens: s.window, retryDelayMs: 1000, fallback: s.fallback });
    listen(state.compactor.events);
    $("message").hidden = true;
  } catch (err) {
    state.compactor = null;
    showError(err);
  }
}

/** The key stays in memory; in sessionStorage only when the person asks. */
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
  for (const id of ["set-provider", "set-window", "set-fallback", "set-key", "set-model", "set-base", "set-remember", "set-pages"]) {
    $(id).addEventListener("change", rebuild);
  }
}

/** Renders every panel; resolves once the archive list (read asynchronously) is drawn too. */
function render() {
  const logs = state.logs;
  let archivesDrawn = Promise.resolve();
  try {
    renderReasoning(logs.reasoningEntries());
    renderExecution(logs.executionLog(), recallIteration);
    renderTools(logs.toolActivityLog(), recallIteration);
    $("stat-iteration").textContent = String(logs.currentIteration);
    renderUsage();
    renderCompactButton(logs.iterationRunning || state.iterating);
    archivesDrawn = renderArchives().catch(showError);
    renderRecall();
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
  return archivesDrawn;
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
  state.render = render;
  wireTabs();
  wireSettings();
  wireControls();
  wireRecall();
  buildCompactor();
  render();
  document.body.dataset.ready = "true";
}

main();
