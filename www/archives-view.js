// The archives panel: the list (date, iterations, entries, size, expiry), an archive's
// originals beside the summary that replaced them, restore and delete.
import { Archives } from "/pkg/context_compactor.js";
import { $, el, state, settings, showError, showMessage, act, rerender } from "./ui.js";
import { archivedItem, summaryItem } from "./entries-view.js";
import { track } from "./usage-view.js";

/** The archives of the page's logs: no provider needed, so the list stays while Gemini is
 * chosen without a key yet. */
function archives() {
  state.archives ??= new Archives(state.logs);
  return state.archives;
}

/** The live summary entry that replaced `archive`'s originals, to show beside them: the one
 * that names the archive (a summary written before summaries named theirs: by its range). */
function liveSummaryOf(archive, key) {
  const summaries = state.logs.reasoningEntries().filter((entry) => entry.kind === "summary");
  const named = summaries.find((entry) => entry.archiveKey === key);
  if (named || !archive.iterations.length) return named;
  const last = Math.max(...archive.iterations);
  return summaries.find((entry) => !entry.archiveKey && entry.iterations[1] === last);
}

export async function renderArchives() {
  const listed = await archives().list();
  $("archive-empty").hidden = listed.length > 0;
  // The list is drawn again on every event of the package, a restore's own among them: the
  // button that has the focus gets it back in its archive's new row, or Continue does.
  const focused = $("archive-rows").contains(document.activeElement) ? document.activeElement : null;
  const focusedKey = focused?.closest("tr")?.dataset.key;
  $("archive-rows").replaceChildren(
    ...listed.map((info) => {
      const tr = el("tr");
      tr.dataset.key = info.key;
      const first = info.iterations[0];
      const last = info.iterations[info.iterations.length - 1];
      // By date, iterations and size; the storage key is a detail under the date.
      const created = el("td", "", new Date(info.timestamp).toLocaleString());
      created.append(el("span", "archive-key mono", info.key));
      if (info.rung === "clear") created.append(el("span", "badge neutral", "cleared bodies"));
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
        if (confirm(`Delete ${info.key}? Its originals cannot be restored afterwards.`)) act(() => archives().delete(info.key));
      });
      actions.append(view, restore, remove);
      tr.append(actions);
      return tr;
    }),
  );
  if (focused) {
    const row = [...$("archive-rows").rows].find((tr) => tr.dataset.key === focusedKey);
    const same = row && [...row.querySelectorAll("button")].find((b) => b.textContent === focused.textContent && !b.disabled);
    (same ?? $("btn-continue")).focus();
  }
  await renderStorage(listed);
}

/** One line: where the archives are, what they take, and the localStorage left to the app. */
async function renderStorage(listed) {
  const store = archives();
  const { localStorageFree } = await store.estimate();
  const bytes = listed.reduce((sum, info) => sum + info.bytes, 0);
  const where = store.archiveStore === "indexedDB" ? "IndexedDB" : "localStorage";
  const count = listed.length === 1 ? "1 archive" : `${listed.length} archives`;
  $("archive-storage").textContent =
    `${count} (${(bytes / 1024).toFixed(1)} KB) kept in ${where}; ` +
    `${(localStorageFree / 1048576).toFixed(1)} MB of localStorage left for the app's logs.`;
}

export async function viewArchive(key, opener = document.activeElement) {
  try {
    const archive = await archives().read(key);
    const first = archive.iterations[0];
    const last = archive.iterations[archive.iterations.length - 1];
    $("archive-panel-title").textContent = `Archive of iterations ${first}–${last} (${new Date(archive.timestamp).toLocaleString()})`;
    $("archive-view").textContent = JSON.stringify(archive, null, 2);
    // What was compacted, beside what replaced it.
    const data = archive.data;
    const iterations = archive.entryIterations ?? {};
    $("originals-title").textContent = `Originals: iterations ${first}–${last}, ${data.reasoningLog.length + data.executionLog.length + data.toolActivityLog.length} entries`;
    $("archive-originals").replaceChildren(
      ...data.reasoningLog.map((text, i) => archivedItem(text, iterations.reasoningLog?.[i])),
      ...data.executionLog.map((entry) => {
        const item = el("li", "entry");
        item.append(el("p", "entry-meta", `execution · iteration ${entry.iteration ?? "?"} · ${entry.success === false ? "failed" : "success"}`));
        item.append(el("pre", "code", String(entry.code ?? "")));
        return item;
      }),
    );
    const live = liveSummaryOf(archive, key);
    $("archive-replacement").replaceChildren(live ? summaryItem(live) : el("li", "entry", "A later compaction folded this summary into its own."));
    $("archive-panel").hidden = false;
    $("archive-panel").dataset.key = key;
    state.archiveOpener = opener;
    $("archive-panel").scrollIntoView({ block: "nearest" });
    $("btn-close-archive").focus();
  } catch (err) {
    showError(err);
  }
}

export function closeArchive() {
  $("archive-panel").hidden = true;
  delete $("archive-panel").dataset.key;
  const back = state.archiveOpener;
  (back && document.contains(back) && !back.disabled ? back : $("btn-continue")).focus();
}

/** Puts an archive's originals back in place of its summary, after asking. */
export async function rollback(key) {
  // The summary that replaced the originals (possibly paid for) goes away: ask first.
  if (!confirm("Restore the original entries of this archive? The summary that replaced them is removed.")) return;
  try {
    await archives().rollback(key);
    track(state.logs.estimateTokens() / settings().window, "restore");
    if ($("compaction-dialog").open) $("compaction-dialog").close();
    if ($("archive-panel").dataset.key === key) closeArchive();
    showMessage("Restored: the original entries are live again; nothing was lost.", "info");
  } catch (err) {
    showError(err);
  }
  // The restored archive's row goes with the list (which moves the focus off it).
  await rerender();
}
