// The controls: the simulated reasoning loop (one iteration, or Auto), the forms that append
// entries and pins, the tabs, the theme, and the dialog and archive-panel buttons.
import { GDRS_KEYS, simulateFetch, simulateGdrsSession, simulateIteration } from "./simulate.js";
import { $, state, settings, act, rerender, showError, showMessage, sleep } from "./ui.js";
import { compact } from "./compaction-view.js";
import { closeArchive, rollback, viewArchive } from "./archives-view.js";

const SEED = 20261122;
const ITERATION_MS = 600;
const AUTO_INTERVAL_MS = 900;

/** One simulated iteration: started, written after a moment, finished — each under the lock. */
async function continueReasoning() {
  if (state.iterating) return;
  const hadFocus = document.activeElement === $("btn-continue");
  state.iterating = true;
  rerender();
  try {
    const n = await state.logs.withLock(() => state.logs.startIteration());
    rerender();
    await sleep(ITERATION_MS);
    const pages = settings().pages;
    await state.logs.withLock(() => {
      simulateIteration(state.logs, n, SEED);
      if (pages) simulateFetch(state.logs, n, SEED);
    });
  } catch (err) {
    showError(err);
  } finally {
    await state.logs.withLock(() => state.logs.finishIteration()).catch(showError);
    state.iterating = false;
    rerender();
    // The button was disabled meanwhile, which drops focus: give it back.
    if (hadFocus && document.activeElement === document.body) $("btn-continue").focus();
  }
}

/** Auto: iterate, and compact in the background when the compactor says it is time (the
 * iterations go on while the model works); a failed compaction pauses it (each later tick
 * would try again, and might pay again). */
function startAuto() {
  if (state.autoTimer) return;
  const tick = async () => {
    if (!state.autoTimer) return;
    if (!state.iterating) {
      if (!state.compacting && state.compactor?.shouldAutoCompact()) {
        compact("auto").then((succeeded) => succeeded || stopAuto());
      } else await continueReasoning();
    }
    if (state.autoTimer) state.autoTimer = setTimeout(tick, AUTO_INTERVAL_MS);
  };
  state.autoTimer = setTimeout(tick, 0);
  rerender();
}

function stopAuto() {
  clearTimeout(state.autoTimer);
  state.autoTimer = null;
  $("toggle-auto").checked = false;
  rerender();
}

export function wireTabs() {
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

/** A form field as JSON when it is JSON, else as the text itself (`undefined` when empty). */
function parseLoose(text) {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function wireDialogs() {
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
}

function wireForms() {
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
}

export function wireControls() {
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
  wireDialogs();
  wireForms();
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
    if (event.key === null || event.key.startsWith(state.logs.prefix)) rerender();
  });
}
