// The compaction dialog: the phase checklist and progress from the compactor's events, then
// what the compaction did (tokens, facts kept or added, unverified lines) or why it failed.
import { $, el, fmt, pct, state, explain, showMessage, rerender } from "./ui.js";
import { track } from "./usage-view.js";

/** The phases a person sees in the progress checklist, in order. */
const PHASES = [
  ["waiting", "Wait for the running iteration"],
  ["freezing", "Freeze the logs"],
  ["gathering", "Gather iterations 1…N-1"],
  ["clearing", "Clear bulky tool output (no model call)"],
  ["building_prompt", "Build the compaction prompt"],
  ["compacting", "Ask the model for a summary"],
  ["validating", "Check the required sections"],
  ["retrying", "Retry once"],
  ["archiving", "Archive the originals"],
  ["replacing", "Swap the summary in"],
  ["recording_metrics", "Record metrics"],
  ["unfreezing", "Unfreeze the logs"],
];

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
      if (phase === "retrying" || phase === "waiting" || phase === "clearing") item.hidden = true;
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

/** Follows a compactor's events in the dialog and the page. */
export function listen(events) {
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
  // Every attempt of the model failed: the package summarises without it (the fallback rung).
  events.addEventListener("compaction_fallback", (e) => {
    $("retry-notice").textContent = `The model failed (${e.detail.message}): summarising without it.`;
    $("retry-notice").hidden = false;
  });
  // A compaction that a closed tab left half done is settled when the page loads.
  events.addEventListener("compaction_rolled_back", (e) => {
    if (!state.compacting) showMessage(`Restored the logs of ${e.detail.archiveKey}; nothing was lost.`, "info");
    rerender();
  });
  // A key of the package's own did not read: set aside, the compaction goes on.
  events.addEventListener("key_set_aside", (e) => {
    const { key, keptAs } = e.detail;
    const what = key.endsWith("pinned_facts")
      ? "The pinned facts were damaged and were set aside: pin them again to keep them in summaries"
      : "The record of an interrupted compaction was damaged and was set aside; its archive, if written, keeps the originals";
    showMessage(`${what}${keptAs ? ` (kept as ${keptAs})` : ""}.`, "info");
  });
  // Archives the live summaries name that the browser no longer holds.
  events.addEventListener("archives_lost", (e) => {
    const { keys } = e.detail;
    showMessage(`${keys.length === 1 ? "An archive is" : `${keys.length} archives are`} gone (deleted, expired or evicted by the browser): ${keys.join(", ")}. The summaries stay; their originals cannot be restored.`, "error");
  });
  events.addEventListener("compaction_complete", (e) => {
    track(e.detail.result.contextUsageAfter, "compaction");
    if (!state.compacting) rerender();
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
  $("fact-rung").textContent = rungText(result);
  $("fact-saved").textContent = `${fmt(result.tokensSaved)} (${pct(result.reduction)})`;
  $("fact-usage").textContent = `${pct(result.contextUsageBefore)} → ${pct(result.contextUsageAfter)}`;
  $("fact-time").textContent = `${(result.durationMs / 1000).toFixed(2)} s`;
  $("fact-iterations").textContent = `${result.iterations[0]}–${result.iterations[1]}`;
  $("fact-attempts").textContent = String(result.attempts);
  $("fact-format").textContent =
    result.rung === "clear"
      ? "no model call"
      : result.rung === "fallback"
        ? "the package's own summary (no model answer)"
        : `${result.answerFormat === "json" ? "JSON (structured output)" : "Markdown"}${result.salvaged ? ", cut at its output limit: whole lines kept" : ""}`;
  $("kept-facts").hidden = result.rung === "clear";
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
  // Bounded memory: what left the summary for its index lines, and the lines themselves.
  const demoted = result.coverage.demoted ?? [];
  const isIndexLine = (line) => (/^- Iterations? \d/.test(line) && line.includes("; recall(")) || line.startsWith("- Open failures, recall(n) each:");
  const indexLines = result.summary.split("\n").filter(isIndexLine);
  $("demoted-facts").hidden = demoted.length === 0 && indexLines.length === 0;
  $("demoted-summary").textContent = `${demoted.length} ${demoted.length === 1 ? "fact" : "facts"} left the summary · ${indexLines.length} index ${indexLines.length === 1 ? "line" : "lines"}`;
  $("index-lines").replaceChildren(...indexLines.map((line) => el("li", "index-line", line.slice(2))));
  $("demoted-list").replaceChildren(
    ...demoted.map(({ fact, iterations }) => {
      const item = el("li");
      item.append(el("span", "badge", `recall(${iterations[0]})`), " ", fact);
      return item;
    }),
  );
  markedLines("unverified", result.unverified ?? [], "marked unverified", ({ items }) => ` — not in the logs: ${items.join(", ")}`);
  markedLines("injected", result.injections ?? [], "from tool output", ({ source }) => ` — only ${source} said it`);
}

/** Which rung ran, in words: with a fallback, why the model's summary could not be used. */
function rungText(result) {
  const cleared = result.cleared ?? [];
  const bodies = `${cleared.length} ${cleared.length === 1 ? "body" : "bodies"}`;
  if (result.rung === "clear") return `Clear: ${cleared.length} bulky ${cleared.length === 1 ? "body" : "bodies"} moved to the archive, no model call`;
  const summary =
    result.rung === "fallback"
      ? `Fallback: summarised without the model (the model failed: ${result.fallback?.message ?? "unknown"})`
      : result.upgraded
        ? "Summarize: the model's summary replaces the one made without it"
        : "Summarize";
  return cleared.length ? `Clear (${bodies}), then ${summary[0].toLowerCase()}${summary.slice(1)}` : summary;
}

/** One of the success panel's lists of marked lines (`<prefix>-lines`), shown when it has any. */
function markedLines(prefix, lines, what, detail) {
  $(`${prefix}-lines`).hidden = lines.length === 0;
  $(`${prefix}-summary`).textContent = `${lines.length} ${lines.length === 1 ? "line" : "lines"} ${what}`;
  $(`${prefix}-list`).replaceChildren(
    ...lines.map((marked) => {
      const item = el("li");
      item.append(el("span", "", marked.line.replace(/^[-*]\s+/, "")), el("span", "unverified-items", detail(marked)));
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

/** Runs one compaction with the dialog (modal when the person asked; for Auto, in the
 * background, under a panel that does not block the controls); resolves to whether it
 * succeeded. */
export async function compact(trigger = "user") {
  if (!state.compactor || state.compacting) return false;
  state.compacting = true;
  resetProgress();
  const dialog = $("compaction-dialog");
  // A compaction the person asked for is modal; an automatic one must not block the controls.
  if (!dialog.open) {
    if (trigger === "auto") dialog.show();
    else dialog.showModal();
  }
  rerender();
  // The elapsed time moves on its own while the model works (events arrive only per phase).
  state.progressStarted = performance.now();
  const ticking = setInterval(() => {
    $("progress-elapsed").textContent = `${((performance.now() - state.progressStarted) / 1000).toFixed(1)} s`;
  }, 200);
  try {
    // Auto compacts in the background: the loop goes on while the model works, and the
    // summary is swapped in as an iteration finishes.
    const background = trigger === "auto";
    const asked = await state.compactor.compact({ trigger, background });
    const result = background ? await asked.done : asked;
    showSuccess(result);
    if (trigger === "auto") settleAuto(dialog, autoDoneMessage(result), "info");
    return true;
  } catch (err) {
    showFailure(err);
    if (trigger === "auto") {
      const [title, hint] = explain(err);
      const logs = err?.archiveKey ? "the clearing stands" : "the logs are unchanged";
      settleAuto(dialog, `Automatic compaction failed: ${title}. ${hint} Auto is paused; ${logs}.`, "error");
    }
    return false;
  } finally {
    clearInterval(ticking);
    state.compacting = false;
    rerender();
  }
}

/** The line that replaces the automatic compaction's panel once it has finished. */
function autoDoneMessage(result) {
  if (result.rung === "clear") {
    return (
      `Cleared automatically at ${pct(result.contextUsageBefore)}: ${result.cleared.length} bulky tool outputs of iterations ` +
      `${result.iterations[0]}–${result.iterations[1]} moved to the archive, no model call; ${fmt(result.tokensBefore)} → ${fmt(result.tokensAfter)} tokens. ` +
      `Their placeholders' recall chips bring them back.`
    );
  }
  const how = result.rung === "fallback" ? ` summarised without the model (the model failed: ${result.fallback?.message ?? "unknown"}); the next compaction the model answers replaces it` : "";
  return (
    `Compacted automatically at ${pct(result.contextUsageBefore)}: iterations ${result.iterations[0]}–${result.iterations[1]}, ` +
    `${fmt(result.tokensBefore)} → ${fmt(result.tokensAfter)} tokens${how ? `,${how}` : ""}. The originals are in Archives below.`
  );
}

/** An automatic compaction's panel must not stay over the logs: it closes, and a line under the
 * controls says what happened. */
function settleAuto(dialog, text, kind) {
  if (dialog.open && !dialog.matches(":modal")) dialog.close();
  showMessage(text, kind);
}
