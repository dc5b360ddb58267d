// Seeded text samples of the four kinds a reasoning log holds, for the token benchmark.
export { seeded } from "../www/simulate.js";

const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const int = (rand, lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const SENTENCES = [
  "The analysis shows that the second approach converges faster because it reuses the intermediate results.",
  "I will first check whether the totals match the quarterly report before changing anything else.",
  "This suggests that the discrepancy comes from duplicated orders rather than from the currency conversion.",
  "After grouping by region, the northern stores account for most of the growth in the last two months.",
  "Before drawing any conclusion, it is worth confirming that the date range covers the whole fiscal year.",
  "The previous attempt failed because the function expected an array, but the loader returned an iterator.",
  "A simpler explanation is that returns were recorded as negative sales and then filtered out by mistake.",
  "Next, I will compare the cleaned dataset with the reference figures and note every difference.",
  "The customer segments behave very differently, so a single average would hide the interesting pattern.",
  "It turns out that the timestamps were stored in local time, which shifts some events into the next day.",
  "We should keep the final version of the aggregation code and discard the earlier experiments.",
  "The result looks plausible, although the variance between weeks is larger than I expected.",
];

const WORDS = ["total", "region", "amount", "orders", "rows", "filter", "group", "value", "result", "count", "items", "report"];

export function prose(rand) {
  const out = [];
  for (let p = 0; p < int(rand, 3, 6); p++) {
    const paragraph = [];
    for (let s = 0; s < int(rand, 3, 6); s++) paragraph.push(pick(rand, SENTENCES));
    out.push(paragraph.join(" "));
  }
  return out.join("\n\n");
}

export function code(rand) {
  const out = [];
  for (let f = 0; f < int(rand, 3, 6); f++) {
    const name = `${pick(rand, WORDS)}${pick(rand, WORDS).replace(/^./, (c) => c.toUpperCase())}`;
    out.push(
      `async function ${name}(data, options = {}) {\n` +
        `  const { limit = ${int(rand, 10, 500)}, field = "${pick(rand, WORDS)}" } = options;\n` +
        `  const rows = await data.load("${pick(rand, WORDS)}.csv");\n` +
        `  const result = {};\n` +
        `  for (const row of rows.slice(0, limit)) {\n` +
        `    if (!row[field]) continue;\n` +
        `    result[row.${pick(rand, WORDS)}] = (result[row.${pick(rand, WORDS)}] ?? 0) + Number(row[field]);\n` +
        `  }\n` +
        `  console.log(\`${name}: \${Object.keys(result).length} groups\`);\n` +
        `  return Object.entries(result).sort((a, b) => b[1] - a[1]);\n` +
        `}\n`,
    );
  }
  return out.join("\n");
}

export function markdown(rand) {
  const out = [`## ${pick(rand, SENTENCES).slice(0, 40)}`];
  for (let i = 0; i < int(rand, 6, 12); i++) {
    const host = pick(rand, ["docs.example.com", "github.com/org/repo", "data.gov.uk", "en.wikipedia.org/wiki"]);
    out.push(
      `- **${pick(rand, WORDS)}**: [${pick(rand, WORDS)} ${pick(rand, WORDS)}](https://${host}/${pick(rand, WORDS)}-${int(rand, 1, 999)}) — ${pick(rand, SENTENCES).slice(0, int(rand, 30, 90))}`,
    );
  }
  out.push("", "| region | total | share |", "| --- | ---: | ---: |");
  for (let i = 0; i < int(rand, 3, 6); i++) out.push(`| ${pick(rand, ["north", "south", "east", "west"])} | ${int(rand, 1000, 999999)} | ${(rand() * 100).toFixed(1)}% |`);
  return out.join("\n");
}

export function logs(rand) {
  const out = [];
  let t = Date.UTC(2026, 10, 22, 18, 0, 0) + int(rand, 0, 1e7);
  for (let i = 0; i < int(rand, 25, 50); i++) {
    t += int(rand, 5, 5000);
    const id = `exec_${t.toString(36)}_${Math.floor(rand() * 36 ** 8).toString(36)}`;
    out.push(
      `${new Date(t).toISOString()} ${pick(rand, ["INFO", "WARN", "DEBUG"])} ${id} ${pick(rand, ["ok", "retry", "done"])} ` +
        `rows=${int(rand, 1, 99999)} ms=${int(rand, 1, 2000)} mem=${(rand() * 512).toFixed(2)}MB hash=${Math.floor(rand() * 2 ** 32).toString(16)}`,
    );
  }
  return out.join("\n");
}

export const KINDS = { prose, code, markdown, logs };
