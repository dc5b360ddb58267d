// The demo page: appends to the three logs through LogStore and shows them.
// Every piece of log text goes into the page through textContent, never as HTML.
import init, { LogStore } from "/pkg/context_compactor.js";

const $ = (id) => document.getElementById(id);

/** Creates an element with a class and text; text is never parsed as HTML. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showMessage(text, kind = "info") {
  const box = $("message");
  box.textContent = text;
  box.className = `message ${kind}`;
  box.hidden = false;
}

function describeError(err) {
  const hints = {
    storage_corrupt: "A log key holds data that is not valid JSON; it was left untouched.",
    storage_quota: "localStorage is full; nothing was changed.",
    storage_unavailable: "This browser does not allow localStorage here.",
    invalid_input: "That entry is missing something.",
  };
  const hint = hints[err?.code];
  return hint ? `${hint} (${err.message})` : String(err?.message ?? err);
}

/** Runs a store operation, shows its error in the page, and re-renders. */
function act(operation) {
  try {
    operation();
    $("message").hidden = true;
  } catch (err) {
    showMessage(describeError(err), "error");
  }
  render();
}

function renderReasoning(entries) {
  const list = $("log-reasoning");
  list.replaceChildren(
    ...entries.map((text) => {
      const header = /^=== (ITERATION \d+|COMPACTED SUMMARY .*) ===/.test(text);
      const item = el("li", header ? "entry header" : "entry");
      item.append(el("p", "entry-text", text));
      return item;
    }),
  );
  $("count-reasoning").textContent = String(entries.length);
}

function valueText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

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

let logs;

function render() {
  try {
    renderReasoning(logs.reasoningLog());
    renderExecution(logs.executionLog());
    renderTools(logs.toolActivityLog());
    $("stat-iteration").textContent = String(logs.currentIteration);
    $("stat-tokens").textContent = logs.estimateTokens().toLocaleString("en-US");
  } catch (err) {
    showMessage(describeError(err), "error");
  }
  const running = logs.iterationRunning;
  const state = $("stat-state");
  state.textContent = running ? "iteration running" : "idle";
  state.className = `stat-value ${running ? "running" : "idle"}`;
  $("btn-start").disabled = running;
  $("btn-finish").disabled = !running;
  $("btn-clear").disabled = false;
  for (const button of document.querySelectorAll(".entry-form button")) button.disabled = false;
}

function wireTabs() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => {
      for (const other of document.querySelectorAll(".tab")) {
        other.setAttribute("aria-selected", String(other === tab));
        $(other.dataset.form).hidden = other !== tab;
      }
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

function wireForms() {
  $("form-reasoning").addEventListener("submit", (event) => {
    event.preventDefault();
    act(() => logs.appendReasoning($("reasoning-text").value));
    $("reasoning-text").value = "";
  });
  $("form-execution").addEventListener("submit", (event) => {
    event.preventDefault();
    const failed = $("execution-failed").checked;
    act(() =>
      logs.appendExecution({
        success: !failed,
        code: $("execution-code").value,
        result: failed ? undefined : parseLoose($("execution-result").value),
        error: failed ? { message: $("execution-error").value || "Error" } : null,
        executionTime: Number($("execution-time").value) || 0,
        source: "manual",
      }),
    );
  });
  $("form-tool").addEventListener("submit", (event) => {
    event.preventDefault();
    act(() =>
      logs.appendToolActivity({
        type: $("tool-type").value,
        action: $("tool-action").value,
        status: $("tool-status").value,
        details: parseLoose($("tool-details").value),
      }),
    );
  });
  $("btn-start").addEventListener("click", () => act(() => logs.startIteration()));
  $("btn-finish").addEventListener("click", () => act(() => logs.finishIteration()));
  $("btn-clear").addEventListener("click", () => {
    if (confirm("Remove the three logs from localStorage? Archives are kept.")) act(() => logs.clear());
  });
  // Another tab wrote to the logs: show its entries.
  window.addEventListener("storage", (event) => {
    if (event.key === null || event.key.startsWith(logs.prefix)) render();
  });
}

async function main() {
  try {
    await init();
    logs = new LogStore();
  } catch (err) {
    $("stat-state").textContent = "unavailable";
    showMessage(`The package could not start: ${describeError(err)}`, "error");
    return;
  }
  wireTabs();
  wireForms();
  render();
  document.body.dataset.ready = "true";
}

main();
