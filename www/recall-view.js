// The Recall box: what the recall tool (`recallTool()`) hands the app's model for an iteration,
// a range or a search; in Gemini mode, one agent turn with the tool declared, the model's calls
// answered by the tool. Text reaches the page through textContent only.
import { Archives } from "/pkg/context_compactor.js";
import { $, state, settings, showError } from "./ui.js";

/** The tool's arguments for what a person typed: `3`, `2-5` (or `2..5`), else a search. */
export function argsOf(typed) {
  const range = /^\s*(\d+)\s*(?:-|–|\.\.)\s*(\d+)\s*$/.exec(typed);
  if (range) return { from: Number(range[1]), to: Number(range[2]) };
  if (/^\s*\d+\s*$/.test(typed)) return { from: Number(typed) };
  return { query: typed.trim() };
}

/** The recall tool of the page's logs (no provider needed). */
function tool() {
  state.archives ??= new Archives(state.logs);
  return (state.compactor ?? state.archives).recallTool();
}

function show(text) {
  $("recall-output").textContent = text;
  $("recall-output").hidden = false;
}

async function recall(event) {
  event.preventDefault();
  const typed = $("recall-input").value;
  if (!typed.trim()) return $("recall-input").focus();
  try {
    show(await tool().call(argsOf(typed)));
  } catch (err) {
    showError(err);
  }
}

/** What the recall tool gives for iteration `n`: a cleared entry's chip shows its original. */
export async function recallIteration(n) {
  $("recall-input").value = String(n);
  try {
    show(await tool().call({ from: n }));
    $("recall-output").scrollIntoView({ block: "nearest" });
  } catch (err) {
    showError(err);
  }
}

/** One agent turn against Gemini with the tool declared: the question typed, each call of the
 * tool answered, the model's answer shown with the calls it made. */
async function askGemini() {
  const question = $("recall-input").value.trim() || "What did the first iteration compute?";
  const { model, baseUrl } = settings();
  const base = (baseUrl || "https://generativelanguage.googleapis.com").replace(/\/+$/, "");
  const recall = tool();
  const contents = [{ role: "user", parts: [{ text: question }] }];
  const transcript = [];
  show("Asking Gemini…");
  try {
    for (let turn = 0; turn < 4; turn++) {
      const response = await fetch(`${base}/v1beta/models/${encodeURIComponent(model)}:generateContent`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-goog-api-key": state.apiKey },
        body: JSON.stringify({ contents, tools: [{ functionDeclarations: [recall.declaration] }] }),
      });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer?.error?.message ?? `HTTP ${response.status}`);
      const parts = answer.candidates?.[0]?.content?.parts ?? [];
      contents.push({ role: "model", parts });
      const replies = [];
      for (const part of parts) {
        if (part.functionCall?.name !== recall.declaration.name) continue;
        transcript.push(`→ ${part.functionCall.name}(${JSON.stringify(part.functionCall.args ?? {})})`);
        const content = await recall.call(part.functionCall.args ?? {});
        replies.push({ functionResponse: { name: part.functionCall.name, response: { content } } });
      }
      if (replies.length === 0) {
        transcript.push(parts.map((part) => part.text ?? "").join(""));
        return show(transcript.join("\n\n"));
      }
      contents.push({ role: "user", parts: replies });
    }
    show([...transcript, "The model kept calling the tool; stopped after four turns."].join("\n\n"));
  } catch (err) {
    show(`Gemini did not answer: ${err.message}`);
  }
}

/** Shows the Gemini button when the page compacts with Gemini and has a key. */
export function renderRecall() {
  $("btn-ask-gemini").hidden = !(settings().provider === "gemini" && state.apiKey);
}

export function wireRecall() {
  $("recall-form").addEventListener("submit", recall);
  $("btn-ask-gemini").addEventListener("click", askGemini);
}
