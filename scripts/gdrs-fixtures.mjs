// Writes the simulated GDRS sessions the native tests read (tests/fixtures/gdrs/), from
// the GDRS mode of www/simulate.js. `--check` compares instead of writing and fails when they differ.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { memoryStorage, simulateGdrsSession } from "../www/simulate.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SESSIONS = [
  { seed: 1, iterations: 8 },
  { seed: 2, iterations: 9 },
  { seed: 3, iterations: 12 },
  { seed: 4, iterations: 6 },
];

export function fixture({ seed, iterations }) {
  const storage = memoryStorage();
  const truth = simulateGdrsSession(storage, { seed, iterations });
  return `${JSON.stringify({ seed, iterations, storage: storage.entries(), truth }, null, 1)}\n`;
}

export const fixturePath = ({ seed }) => join(root, "tests", "fixtures", "gdrs", `seed-${seed}.json`);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const session of SESSIONS) {
    const text = fixture(session);
    if (check) {
      if (readFileSync(fixturePath(session), "utf8") !== text) {
        console.error(`stale: ${fixturePath(session)} (run node scripts/gdrs-fixtures.mjs)`);
        stale += 1;
      }
    } else {
      writeFileSync(fixturePath(session), text);
    }
  }
  process.exit(stale === 0 ? 0 : 1);
}
