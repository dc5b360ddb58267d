// The JavaScript values the package makes and checks at its boundary: the class of every error
// it throws or rejects with, what `compact({ background: true })` resolves to, and the check of
// options JSON cannot carry. (One snippet for the three: Chrome's wasm-bindgen test page stops
// loading with a fifth snippet module, as it did with a MessageChannel's in #53.)

/** The class of every error the package throws or rejects with: a real `Error` (stack,
 * message), a stable `code`, and the structured fields the package sets where they apply. */
export class ContextCompactorError extends Error {
  constructor(message, code) {
    super(message);
    this.name = "ContextCompactorError";
    this.code = code;
  }

  /** Whether `value` is an error of this package, also one from another copy of it (two bundles,
   * an iframe), where `instanceof` would say no. */
  static isInstance(value) {
    return (
      value instanceof ContextCompactorError ||
      (value instanceof Error && value.name === "ContextCompactorError" && typeof value.code === "string")
    );
  }
}

/** A new error with `message` and `code` (what the Rust side calls). */
export function contextCompactorError(message, code) {
  return new ContextCompactorError(message, code);
}

/** The first option of `options` (an object), or of an object within it (`clearing`, four
 * levels deep at most), that JSON cannot carry: a number that is not finite (`NaN`,
 * `Infinity`), or a Symbol (its JSON text would leave the option out), said as what is wrong;
 * `undefined` when every one can be carried, or when a value cannot be read (a throwing getter
 * or Proxy: reading its JSON text says why). */
export function nonFiniteOption(options, path = "", depth = 0) {
  try {
    for (const [name, value] of Object.entries(options)) {
      if (typeof value === "number" && !Number.isFinite(value)) return `${path}${name}: ${value} is not a finite number`;
      if (typeof value === "symbol") return `${path}${name} is a Symbol, which an option cannot be`;
      const inner = value && typeof value === "object" && depth < 4 && nonFiniteOption(value, `${path}${name}.`, depth + 1);
      if (inner) return inner;
    }
  } catch {
    return undefined;
  }
}

/** What `compact({ background: true })` resolves to, `CompactionStarted`, made as one
 * compaction in the background goes: `tell` says it asks for its summary (the loop goes on
 * meanwhile), `follow` gives its end, whichever comes first settling it. */
export class BackgroundStart {
  constructor() {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The summary of iterations `first`..`last` is asked for. */
  tell(first, last) {
    this.resolve({ started: true, iterations: [first, last], done: this.done });
  }

  /** What `compact()` resolves to, `done` the compaction's own promise (set before any
   * `tell`: the compaction's body runs only after this task). A compaction that ended before
   * it asked for a summary (a clearing, a refusal) settles it as it ended; `done` is handled
   * here, so that an app that only listens to the events hears no unhandled rejection. */
  follow(done) {
    this.done = done;
    done.then((result) => this.tell(...result.iterations), this.reject);
    return this.promise;
  }
}
