// Serves the demo page (www/) and the built package (pkg/ at /pkg/) on 127.0.0.1.
// Usage: node scripts/serve.mjs [port]   (port 0 picks a free one; the URL is printed)
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
/** URL prefix → folder; the first match wins. */
export const DEMO_MOUNTS = [
  ["/pkg/", join(root, "pkg")],
  ["/", join(root, "www")],
];
const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".ts": "text/plain; charset=utf-8",
  ".png": "image/png",
};

/** The file a URL path names, or null when it would leave its mount. */
function resolvePath(mounts, urlPath) {
  const mount = mounts.find(([p]) => urlPath.startsWith(p));
  if (!mount) return null;
  const [prefix, dir] = mount;
  const relative = decodeURIComponent(urlPath.slice(prefix.length)) || "index.html";
  const file = normalize(join(dir, relative));
  return file === dir || file.startsWith(dir + sep) ? file : null;
}

export function startServer(port = 8080, host = "127.0.0.1", mounts = DEMO_MOUNTS) {
  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url, "http://localhost");
      let file = resolvePath(mounts, pathname);
      if (file && (await stat(file)).isDirectory()) file = join(file, "index.html");
      if (!file) throw Object.assign(new Error("forbidden"), { code: "ENOENT" });
      const body = await readFile(file);
      res.writeHead(200, {
        "content-type": types[extname(file)] ?? "application/octet-stream",
        "cache-control": "no-store",
      });
      res.end(body);
    } catch (err) {
      const missing = err.code === "ENOENT" || err.code === "ENOTDIR";
      res.writeHead(missing ? 404 : 500, { "content-type": "text/plain; charset=utf-8" });
      res.end(missing ? "not found\n" : "server error\n");
    }
  });
  return new Promise((resolveStart, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolveStart(server));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wanted = Number(process.argv[2] ?? process.env.PORT ?? 8080);
  let server;
  for (let port = wanted, tries = 0; !server && tries < 20; port = wanted === 0 ? 0 : port + 1, tries++) {
    try {
      server = await startServer(port);
    } catch (err) {
      if (err.code !== "EADDRINUSE") throw err;
    }
  }
  if (!server) {
    console.error(`no free port from ${wanted} to ${wanted + 19}`);
    process.exit(1);
  }
  console.log(`context-compactor demo: http://127.0.0.1:${server.address().port}/  (Ctrl+C to stop)`);
}
