// The class of every error the package throws or rejects with: a real `Error` (stack, message),
// a stable `code`, and the structured fields the package sets where they apply.
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
