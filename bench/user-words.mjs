// What the user said, through five chained compactions (#79): the session of
// bench/user-words-session.mjs (statements of five kinds among ordinary messages, updates
// replacing earlier ones, a bulky tool page every turn) on both fronts and three providers —
// the offline summariser, the Gemini mock (tests/gemini-mock, scenario `ok`: a model that keeps
// the facts the prompt lists) and a scripted model that keeps only its last lines — over three
// seeds. Prints, after each compaction, the share of each kind whose values stand in what the
// model reads next, the replaced values still standing there, the share the recall tool finds
// by a value, and the tokens the section of the user's words takes beside the rest of the
// summary. Usage: node bench/user-words.mjs [turns between compactions=48] (after
// scripts/build.sh; BENCH_PKG=<dir> for another build)
import { readFileSync } from "node:fs";
import { withBenchBrowser, freshPage } from "./browser.mjs";
import { startMock } from "../tests/gemini-mock/server.mjs";

const SESSION = readFileSync(new URL("./user-words-session.mjs", import.meta.url), "utf8");
const SEEDS = [11, 23, 37];
const SEGMENTS = 5;
const TURNS = Number(process.argv[2] ?? 48);
const KINDS = ["rule", "limit", "fact", "task", "preference"];
const mock = await startMock(0);
const PROVIDERS = {
  offline: { type: "offline" },
  "Gemini mock": { type: "gemini", apiKey: "bench-key", model: "mock-ok", baseUrl: mock.url },
  "last lines only": "lossy",
};

const rows = await withBenchBrowser(async (browser, baseUrl) => {
  const out = [];
  for (const [name, provider] of Object.entries(PROVIDERS)) {
    for (const front of ["messageFront", "logStoreFront"]) {
      const page = await freshPage(browser, baseUrl);
      const runs = await page.evaluate(async ({ session, front, provider, seeds, segments, turns }) => {
        const pkg = { ...(await import("/pkg/context_compactor.js")) };
        await pkg.default();
        // A compaction refused (too little, over budget) is a round with nothing compacted.
        pkg.compactOrSay = async (work) => {
          try {
            return await work();
          } catch (err) {
            if (!pkg.ContextCompactorError.isInstance(err)) throw err;
            return null;
          }
        };
        const mod = await import(URL.createObjectURL(new Blob([session], { type: "text/javascript" })));
        const chosen = provider === "lossy" ? { type: "custom", generate: mod.lossyModel } : provider;
        const all = [];
        for (const seed of seeds) all.push(await mod[front](pkg, chosen, seed, segments, turns));
        return all;
      }, { session: SESSION, front, provider, seeds: SEEDS, segments: SEGMENTS, turns: TURNS });
      await page.close();
      for (let round = 0; round < SEGMENTS; round++) {
        const sum = (pick) => runs.reduce((total, run) => total + pick(run[round]), 0);
        const share = (kind) => {
          const [kept, of] = [sum((r) => r.kept[kind]?.[0] ?? 0), sum((r) => r.kept[kind]?.[1] ?? 0)];
          return of ? `${Math.round((100 * kept) / of)}% (${kept}/${of})` : "—";
        };
        const recalled = sum((r) => r.recall[0]);
        const said = sum((r) => r.recall[1]);
        const items = runs.map((r) => `${r[round].items[0]} + ${r[round].items[1]}`).join(", ");
        out.push([name, front === "messageFront" ? "MessageCompactor" : "LogStore", round + 1, ...KINDS.map(share), sum((r) => r.stale), `${Math.round((100 * recalled) / said)}% (${recalled}/${said})`, items, runs.map((r) => r[round].rung).join(", ")]);
      }
    }
  }
  return out;
});
await mock.close();

console.log(`| provider | front | compaction | ${KINDS.join(" | ")} | replaced values still shown | found by the recall tool | tokens: the user's words + the rest (seeds ${SEEDS.join(", ")}) | rungs |`);
console.log(`| --- | --- | ---: | ${KINDS.map(() => "---:").join(" | ")} | ---: | ---: | --- | --- |`);
for (const row of rows) console.log(`| ${row.join(" | ")} |`);
