// Two builds of the package measured side by side in one page: `compact()`, one read of the
// logs with a token count and one append by each at 10, 50 and 200 iterations, run for run in
// turns, so that a slow spell of the machine weighs on both alike (separate runs of
// `bench/run.mjs` moved by up to 40% on this machine).
// Usage: node bench/ab.mjs <package dir A> <package dir B>
// Each directory is a `scripts/build.sh` output: for the commit before, build it in a worktree
// (`git worktree add /tmp/before HEAD~1 && cd /tmp/before && bash scripts/build.sh`).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { startServer, DEMO_MOUNTS } from "../scripts/serve.mjs";

const [dirA, dirB] = process.argv.slice(2).map((dir) => resolve(dir));
if (![dirA, dirB].every((dir) => dir && existsSync(join(dir, "context_compactor_bg.wasm")))) {
  console.error("usage: node bench/ab.mjs <package dir A> <package dir B> (each built by scripts/build.sh)");
  process.exit(2);
}
const root = fileURLToPath(new URL("..", import.meta.url));
const server = await startServer(0, "127.0.0.1", [["/a/", dirA], ["/b/", dirB], ["/bench/", join(root, "bench")], ["/www/", join(root, "www")], ...DEMO_MOUNTS]);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/ab.html`);
  await page.waitForFunction(() => window.abReady, null, { timeout: 60_000 });
  console.log(`A: ${dirA}\nB: ${dirB}\n`);
  console.log("| session | tokens | compact(): A (ms) | B (ms) | B / A | one read + count: A (ms) | B (ms) | B / A | one append: A (ms) | B (ms) | B / A |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [iterations, rounds] of [[10, 41], [50, 31], [200, 21]]) {
    const { tokens, a, b, readA, readB, appendA, appendB } = await page.evaluate(([n, r]) => window.compareBuilds(n, r), [iterations, rounds]);
    const ms = (x) => x.toFixed(1);
    console.log(`| ${iterations} iterations | ${tokens.toLocaleString("en-US")} | ${ms(a)} | ${ms(b)} | ${(b / a).toFixed(2)} | ${ms(readA)} | ${ms(readB)} | ${(readB / readA).toFixed(2)} | ${ms(appendA)} | ${ms(appendB)} | ${(appendB / appendA).toFixed(2)} |`);
  }
} finally {
  await browser.close();
  server.close();
}
