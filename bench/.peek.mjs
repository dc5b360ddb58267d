import { chromium } from "playwright-core";
const b = await chromium.connectOverCDP("http://localhost:" + process.argv[2]);
for (const c of b.contexts()) for (const p of c.pages()) {
  if (!p.url().startsWith("http")) continue;
  const r = await Promise.race([p.evaluate(() => ({ rs: document.readyState, out: document.getElementById("output")?.textContent.slice(0, 300), scripts: performance.getEntriesByType("resource").map(e => e.name + " " + Math.round(e.duration) + " " + e.responseStatus) })), new Promise(r => setTimeout(() => r("eval timed out"), 5000))]);
  console.log(p.url(), JSON.stringify(r, null, 1));
}
process.exit(0);
