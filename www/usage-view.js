// The context panel: the usage meter, the usage timeline (a sawtooth with compactions and
// restores marked), the Compact Context button with what it would do, and the pinned facts.
import { $, el, fmt, pct, state, settings, act } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";

/** Adds a point (or a mark) to the usage timeline and draws it. */
export function track(usage, mark) {
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

export function renderUsage() {
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

/** The Compact Context button: enabled when a compaction may run, its tooltip saying why not
 * or what it would do. */
export function renderCompactButton(running) {
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
export function renderPins() {
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
