// The three logs as lists: reasoning (described by `logs.reasoningEntries()`: headers marked,
// summaries formatted), executions and tool operations. Text nodes only, never HTML.
import { $, el } from "./ui.js";

/** `text` with its `inline code` and **bold** spans as elements. */
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

/** A summary entry (a `ReasoningEntry` of kind "summary") as formatted text: its own markdown's
 * headings, lists, code blocks and inline code, under a title naming the iterations. */
export function summaryItem(entry) {
  const item = el("li", "entry summary");
  const [first, last] = entry.iterations;
  item.append(el("p", "entry-title", `COMPACTED SUMMARY (Iterations ${first}-${last})`));
  let list = null;
  let code = null;
  for (const line of (entry.summary ?? "").split("\n")) {
    if (code) {
      if (line.trim().startsWith("```")) {
        item.append(code);
        code = null;
      } else code.textContent += (code.textContent ? "\n" : "") + line;
      continue;
    }
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
export function reasoningItem(entry) {
  if (entry.kind === "summary") return summaryItem(entry);
  const item = el("li", entry.kind === "header" ? "entry header" : "entry");
  item.append(el("p", "entry-text", entry.text));
  return item;
}

/** An archived reasoning entry, as stored, with the iteration the archive records for it. */
export function archivedItem(text, iteration) {
  const item = el("li", "entry");
  item.append(el("p", "entry-meta", `reasoning · iteration ${iteration ?? "?"}`), el("p", "entry-text", text));
  return item;
}

export function renderReasoning(entries) {
  $("log-reasoning").replaceChildren(...entries.map(reasoningItem));
  $("count-reasoning").textContent = String(entries.length);
}

const valueText = (value) => (typeof value === "string" ? value : JSON.stringify(value));

/** How every placeholder of the clearing rung begins. */
const CLEARED = "[cleared by context-compactor: ";

/** A body the clearing rung moved to an archive: a badge with its size and a recall chip that
 * brings it back (`recall(n)`); `null` for a body that is whole. */
function clearedBody(body, iteration, onRecall) {
  const text = valueText(body) ?? "";
  const at = text.indexOf(CLEARED);
  if (at < 0) return null;
  const size = /^(\d+) characters/.exec(text.slice(at + CLEARED.length))?.[1];
  const line = el("p", "entry-text cleared");
  const chip = el("button", "chip", `recall(${iteration})`);
  chip.type = "button";
  chip.title = `Show the original of iteration ${iteration} from its archive`;
  chip.addEventListener("click", () => onRecall(iteration));
  line.append(el("span", "badge neutral", size ? `cleared · ${Number(size).toLocaleString("en-US")} characters` : "cleared"), " ", chip);
  return line;
}

export function renderExecution(entries, onRecall) {
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
      const cleared = clearedBody(entry.result, entry.iteration, onRecall);
      if (entry.error?.message) item.append(el("p", "entry-text", `Error: ${entry.error.message}`));
      else if (cleared) item.append(cleared);
      else if (entry.result !== undefined) item.append(el("p", "entry-text", `→ ${valueText(entry.result)}`));
      return item;
    }),
  );
  $("count-execution").textContent = String(entries.length);
}

export function renderTools(entries, onRecall) {
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
      const cleared = clearedBody(entry.details, entry.iteration, onRecall);
      if (cleared) item.append(cleared);
      else if (entry.details !== undefined) item.append(el("p", "entry-text", valueText(entry.details)));
      return item;
    }),
  );
  $("count-tool").textContent = String(entries.length);
}
