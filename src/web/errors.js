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

/** The first option of `options` (an object) that is a number JSON cannot carry (`NaN`,
 * `Infinity`), as `name: value`; `undefined` when every one is finite. */
export function nonFiniteOption(options) {
  for (const [name, value] of Object.entries(options)) {
    if (typeof value === "number" && !Number.isFinite(value)) return `${name}: ${value}`;
  }
}
