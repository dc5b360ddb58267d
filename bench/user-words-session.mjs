// What the user said, through chained compactions (#79): a session in which the user states,
// with the task and then among ordinary messages, rules, limits, facts, the task's state and
// preferences, each with a value nobody could guess (seeded), a statement on a subject stated
// before being an update of it ("Change of plan: …"); the agent's turns between them call a
// tool that reads a bulky page. Run in a page, with the package's classes given to it.
// After each compaction: which statements' values stand in what the model reads next, which
// replaced values still stand there, and which are one recall-tool query away.
// Used by bench/user-words.mjs.

/** A generator of numbers from `seed` (the same statements for the same seed). */
function seeded(seed) {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
}

const WORDS = ["zephyr", "quartz", "ember", "tundra", "saffron", "cobalt", "juniper", "obsidian", "lichen", "marlin", "sorrel", "basalt"];
const LANGUAGES = ["Portuguese", "Finnish", "Catalan", "Estonian", "Welsh", "Icelandic"];

/** Statements of each kind, in the phrasings people use: each `(value, noun)` → words, the noun
 * naming the statement's subject (`null`: the value is the subject, as a path or a ticket is; a
 * statement of this phrasing is never an update of another). */
const KINDS = {
  rule: [
    { nouns: ["deploy tool", "migration script", "billing job", "purge command"], say: (v, noun) => `Never run the ${noun} without the code word ${v.word}.` },
    { nouns: null, say: (v) => `Do not delete anything under /srv/${v.word} without asking me first.` },
    { nouns: ["release", "nightly build", "container image", "database backup"], say: (v, noun) => `From now on you must tag every ${noun} ${v.word}-${v.n}.` },
  ],
  limit: [
    { nouns: ["cloud resources", "GPU time", "API credits", "CDN traffic"], say: (v, noun) => `Spend at most $${v.n} on ${noun} for this.` },
    { nouns: ["answer", "commit message", "status update"], say: (v, noun) => `Keep every ${noun} under ${v.n} words.` },
    { nouns: ["billing API", "search API", "mail relay"], say: (v, noun) => `No more than ${v.n} requests an hour to the ${noun}, please.` },
  ],
  fact: [
    { nouns: ["base commit", "release branch head"], say: (v, noun) => `The ${noun} is ${v.hex}.` },
    { nouns: ["customer id", "tenant id", "billing account"], say: (v, noun) => `My ${noun} is ${v.word}-${v.n}.` },
    { nouns: ["staging host", "metrics host", "backup host"], say: (v, noun) => `The ${noun} is ${v.word}.${v.n}.internal.` },
  ],
  task: [
    { nouns: null, say: (v) => `The migration of table ${v.word}_${v.n} is done; next is table ${v.word}_${v.n + 1}.` },
    { nouns: null, say: (v) => `Ticket ${v.word.toUpperCase()}-${v.n} is closed, so move on to the report.` },
  ],
  preference: [
    { nouns: ["answers", "code comments"], say: (v, noun) => `Write ${noun} in ${v.language}, please.` },
    { nouns: ["tables", "charts"], say: (v, noun) => `I prefer ${noun} with a ${v.word} header over prose.` },
  ],
};

/** The statements of a session of `segments` parts from `seed`: each `{ id, kind, text, values,
 * at }` (`at`: its turn). A statement on a subject stated before is an update ("Change of
 * plan: …"), `replaces` the id of the statement it replaces. */
export function statements(seed, segments, turnsPerSegment) {
  const below = seeded(seed);
  const out = [];
  const kinds = Object.keys(KINDS);
  const onSubject = new Map();
  // Three statements in the task's own message (`at` 0: a GDRS query, a first user message),
  // then one every one or two turns.
  const turns = [0, 0, 0];
  for (let at = 1; at < segments * turnsPerSegment; at += 1 + below(2)) turns.push(at);
  for (const at of turns) {
    const kind = kinds[below(kinds.length)];
    const phrasings = KINDS[kind];
    const v = {
      word: `${WORDS[below(WORDS.length)]}${below(90) + 10}`,
      n: 1000 + below(9000),
      hex: (0x10000000 + below(0x7fffffff)).toString(16),
      language: LANGUAGES[below(LANGUAGES.length)],
    };
    const phrasing = below(phrasings.length);
    const { nouns, say } = phrasings[phrasing];
    const noun = nouns ? nouns[below(nouns.length)] : null;
    let text = say(v, noun);
    // The values the statement names: what must stand in what the model reads.
    const values = [v.word, v.word.toUpperCase(), String(v.n), v.hex, v.language].filter((value) => text.includes(value));
    const subject = noun && `${kind}:${phrasing}:${noun}`;
    const earlier = subject && onSubject.get(subject);
    if (earlier) text = `Change of plan: ${text}`;
    const statement = { id: out.length, kind, text, values, at, replaces: earlier ? earlier.id : undefined };
    out.push(statement);
    if (subject) onSubject.set(subject, statement);
  }
  return out;
}

/** A page the agent's tool read: about 300 rows, distinct for `turn`. */
function page(turn) {
  let out = `region,quarter,revenue,target (page ${turn})\n`;
  for (let row = 0; row < 300; row++) out += `r${row % 12},${turn},${1000 + row * 7 + turn},${1200 + row}\n`;
  return out;
}

const ORDINARY = ["Thanks, go on.", "Looks good so far.", "OK.", "Keep going."];

/** An ordinary message of the user at `turn`: one of a few repeated ones, or one of its own
 * (every other time), none a statement to keep. */
function ordinary(turn) {
  return turn % 2 === 0 ? ORDINARY[turn % ORDINARY.length] : `Also have a look at the chart on page ${turn + 7} when you get there; no rush.`;
}

/** Whether `value` stands in `text` as a token of its own (not inside a longer number or word:
 * `1490` in an archive key's timestamp is not the statement's value). */
function stands(value, text) {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`).test(text);
}

/** What survives of `said` (the statements made so far) in `text` (what the model reads after
 * the compaction at `turn`), and which replaced values still stand in `shown` (a message
 * list's first message is the app's, never rewritten: a statement of it that a later one
 * replaced stays there). A statement is
 * replaced once the compaction folded its update (one made at `turn` stays verbatim after the
 * summary: the model reads it after the statement it replaces). */
function survival(said, text, turn, shown = text) {
  const replaced = new Set(said.filter((s) => s.replaces !== undefined && s.at < turn).map((s) => s.replaces));
  const current = said.filter((s) => !replaced.has(s.id));
  const kept = {};
  for (const s of current) {
    kept[s.kind] ??= [0, 0];
    kept[s.kind][1] += 1;
    if (s.values.every((value) => stands(value, text))) kept[s.kind][0] += 1;
  }
  // A replaced statement still shown: a value of it no current statement names stands there.
  const currentValues = new Set(current.flatMap((s) => s.values));
  const stale = said.filter((s) => replaced.has(s.id) && s.values.some((value) => !currentValues.has(value) && stands(value, shown))).length;
  return { kept, stale };
}

/** How many of `said` the recall tool finds by their values (one query each). */
async function recallable(tool, said) {
  let found = 0;
  for (const s of said) {
    // A value and the statement's longest word, as a model that remembers it would ask.
    const value = s.values[0];
    const word = s.text.match(/[A-Za-z]{5,}/g).sort((a, b) => b.length - a.length)[0];
    const answer = await tool.call({ query: `${value} ${word}` });
    if (stands(value, answer)) found += 1;
  }
  return found;
}

/** `[tokens of the section of the user's words, tokens of the rest]` of `summary`. */
function itemTokens(pkg, summary) {
  if (!summary) return [0, 0];
  const at = summary.indexOf("### 👤 WHAT THE USER SAID");
  if (at < 0) return [0, pkg.estimateTokens(summary)];
  return [pkg.estimateTokens(summary.slice(at)), pkg.estimateTokens(summary.slice(0, at))];
}

/** A model that keeps only its last lines: six sections whose points are the last lines of
 * the prompt's history, whatever the facts it was asked to keep. */
export async function lossyModel(prompt) {
  const history = prompt.split("## OUTPUT FORMAT")[0].split("\n").filter((line) => line.trim() && !line.startsWith("#"));
  const last = history.slice(-6).map((line) => `- ${line.slice(0, 160)}`);
  const sections = ["🎯 OBJECTIVE ACHIEVED", "📊 KEY DISCOVERIES", "✅ SUCCESSFUL SOLUTIONS", "🔧 TOOLS USED SUCCESSFULLY", "💡 CRITICAL INSIGHTS", "📝 IMPORTANT CONTEXT FOR FUTURE REASONING"];
  return sections.map((title, i) => `### ${title}\n${last[i] ?? "- Continue."}`).join("\n\n");
}

/** The task's own message: what to do, then the statements made with it. */
function task(said) {
  const opening = said.filter((s) => s.at === 0).map((s) => s.text);
  return ["Prepare the quarterly sales report from the pages you can fetch.", ...opening].join(" ");
}

/** `[found, of]`: how many of the statements `said` before `turn` (those the compaction at
 * `turn` archived; the turn's own stays verbatim) the recall tool finds by a value. */
async function archived(tool, said, turn) {
  const folded = said.filter((s) => s.at < turn);
  return [await recallable(tool, folded), folded.length];
}

/** The session on a `MessageCompactor` (OpenAI chat messages, the list it returns sent):
 * a compaction after each segment; the survival after each, in the list but its tool results
 * (the pages' figures would pass for a statement's numbers). */
export async function messageFront(pkg, provider, seed, segments, turnsPerSegment) {
  const said = statements(seed, segments, turnsPerSegment);
  const compactor = new pkg.MessageCompactor({ provider, shape: "openai", conversation: `words-${seed}` });
  let list = [{ role: "user", content: task(said) }];
  const rounds = [];
  let k = said.filter((s) => s.at === 0).length;
  for (let turn = 1; turn <= segments * turnsPerSegment; turn++) {
    while (k < said.length && said[k].at === turn) list.push({ role: "user", content: said[k++].text });
    if (turn % 3 === 0) list.push({ role: "user", content: ordinary(turn) });
    const id = `call_${turn}`;
    list.push({ role: "assistant", content: `Step ${turn}: reading page ${turn}.`, tool_calls: [{ id, type: "function", function: { name: "fetch_page", arguments: JSON.stringify({ page: turn }) } }] });
    list.push({ role: "tool", tool_call_id: id, content: page(turn) });
    if (turn % turnsPerSegment === 0) {
      const done = await pkg.compactOrSay(() => compactor.compact(list, { trigger: "user" }));
      if (done) list = done.messages;
      const sofar = said.slice(0, k);
      const items = itemTokens(pkg, done?.summary);
      rounds.push({ ...survival(sofar, JSON.stringify(list.filter((m) => m.role !== "tool")), turn, JSON.stringify(list.slice(1).filter((m) => m.role !== "tool"))), recall: await archived(compactor.recallTool(), sofar, turn), rung: done?.rung ?? "refused", items });
    }
  }
  return rounds;
}

/** The session on a `LogStore` as GDRS keeps one (its preamble holding the query; each later
 * statement recorded as the guide says, `The user wrote: …`; the model reading the latest
 * summary and the last 6 entries): a compaction after each
 * segment; the survival after each. */
export async function logStoreFront(pkg, provider, seed, segments, turnsPerSegment) {
  const said = statements(seed, segments, turnsPerSegment);
  const logs = new pkg.LogStore({ prefix: `gdrs_words_${seed}_` });
  // GDRS's own preamble: the session's query and its time, before the first iteration.
  logs.appendReasoning(`=== SESSION START ===\nQuery: ${task(said)}\nTime: 2026-12-08T09:00:00.000Z`);
  const compactor = new pkg.Compactor(logs, { provider });
  const rounds = [];
  let k = said.filter((s) => s.at === 0).length;
  for (let turn = 1; turn <= segments * turnsPerSegment; turn++) {
    logs.startIteration();
    while (k < said.length && said[k].at === turn) logs.appendReasoning(`The user wrote: ${said[k++].text}`);
    if (turn % 3 === 0) logs.appendReasoning(`The user wrote: ${ordinary(turn)}`);
    logs.appendReasoning(`Step ${turn}: reading page ${turn}.`);
    logs.appendToolActivity({ type: "fetch_page", action: "read", status: "success", details: page(turn) });
    logs.finishIteration();
    if (turn % turnsPerSegment === 0) {
      const done = await pkg.compactOrSay(() => compactor.compact({ trigger: "user" }));
      const reads = [logs.pins().map((p) => p.text).join("\n"), logs.recentReasoning(6).join("\n\n")].join("\n");
      const sofar = said.slice(0, k);
      rounds.push({ ...survival(sofar, reads, turn), recall: await archived(compactor.recallTool(), sofar, turn), rung: done?.rung ?? "refused", items: itemTokens(pkg, done?.summary) });
    }
  }
  return rounds;
}
