// WebKit and Firefox for the page tests: WebKitGTK's MiniBrowser driven through its W3C
// WebDriver (`scripts/webkit-driver.sh`, which gives it a virtual display), and headless
// Firefox ESR through geckodriver, with the few commands the tests need. Playwright drives only
// its own WebKit and Firefox builds, which these machines do not have.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const WEBKIT_DRIVER = fileURLToPath(new URL("../../scripts/webkit-driver.sh", import.meta.url));
const GECKODRIVER = process.env.GECKODRIVER ?? join(homedir(), ".cargo/bin/geckodriver");

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** WebKitGTK's MiniBrowser (empty capabilities: WebKitWebDriver's default browser). */
export const launchWebKit = () => launchWebDriver(WEBKIT_DRIVER, {});

/** Headless Firefox ESR. */
export const launchFirefox = () =>
  launchWebDriver(GECKODRIVER, { alwaysMatch: { "moz:firefoxOptions": { binary: "/usr/bin/firefox-esr", args: ["-headless"] } } });

/** Starts `command` (a W3C WebDriver) and one browser session with `capabilities`; returns the
 * session's commands. Rejects, naming the driver's output, when neither starts within 30 s. */
async function launchWebDriver(command, capabilities) {
  const port = await freePort();
  const driver = spawn(command, [`--port=${port}`], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  driver.stdout.on("data", (chunk) => (output += chunk));
  driver.stderr.on("data", (chunk) => (output += chunk));
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body ? { "content-type": "application/json" } : undefined,
      body: body ? JSON.stringify(body) : undefined,
    });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      const { error, message } = answer.value ?? {};
      throw new Error(`WebDriver ${method} ${path}: ${response.status} ${error ?? ""} ${message ?? ""}`);
    }
    return answer.value;
  };
  const stop = () => {
    try {
      process.kill(-driver.pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  };
  let session;
  for (let tries = 0; tries < 300 && !session; tries++) {
    try {
      const ready = await call("GET", "/status");
      if (ready?.ready !== false) session = await call("POST", "/session", { capabilities });
    } catch (err) {
      if (driver.exitCode !== null || tries === 299) {
        stop();
        throw new Error(`${command} did not start a session: ${err.message}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const id = session.sessionId;
  await call("POST", `/session/${id}/timeouts`, { script: 120_000, pageLoad: 30_000 });
  return {
    browserVersion: session.capabilities?.browserVersion ?? "",
    /** Loads `url` in the current window. */
    goto: (url) => call("POST", `/session/${id}/url`, { url }),
    /** Runs `fn(arg)` in the current window and returns what its promise resolves to (JSON);
     * a rejection becomes an Error with the page's message and `code`. */
    async run(fn, arg) {
      const script = `const done = arguments[arguments.length - 1];
        Promise.resolve().then(() => (${fn})(arguments[0])).then(
          (value) => done({ value: value === undefined ? null : value }),
          (err) => done({ error: { message: String(err?.message ?? err), code: err?.code ?? null, stack: String(err?.stack ?? "") } }));`;
      const answer = await call("POST", `/session/${id}/execute/async`, { script, args: [arg ?? null] });
      if (answer?.error) throw Object.assign(new Error(`in WebKit: ${answer.error.message}\n${answer.error.stack}`), { code: answer.error.code });
      return answer?.value;
    },
    /** Opens a new window (a tab of the same browser) and returns its handle. */
    async newWindow() {
      const { handle } = await call("POST", `/session/${id}/window/new`, { type: "tab" });
      return handle;
    },
    /** The current window's handle. */
    window: () => call("GET", `/session/${id}/window`),
    /** Makes `handle` the window later commands act on. */
    switchTo: (handle) => call("POST", `/session/${id}/window`, { handle }),
    async close() {
      await call("DELETE", `/session/${id}`).catch(() => {});
      stop();
    },
  };
}
