// Node (tests, SSR): the package imports, its pure functions work, and what needs a browser says
// so with a ContextCompactorError.
import init, { LogStore, validateSummary, estimateTokens, REQUIRED_SECTIONS, ContextCompactorError } from "context-compactor";

await init();
const outcome = { sections: REQUIRED_SECTIONS, tokens: estimateTokens("Compacts the logs."), valid: validateSummary("short").valid };
try {
  new LogStore();
  outcome.logStore = "no error";
} catch (err) {
  outcome.logStore = `${err.name}/${err.code}`;
  outcome.isInstance = err instanceof ContextCompactorError && ContextCompactorError.isInstance(err);
}
console.log(JSON.stringify(outcome));
