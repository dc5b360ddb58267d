// Shortens the names under which a wasm-bindgen module imports its JavaScript functions: each
// `__wbg_<name>_<16 hex digits>` becomes a short name, in the module's import section and in its
// glue alike. The hex digits are random to gzip (about 1.5 KB of the web entry's gzip, counted
// twice: the .wasm and the glue both name every import). Names without the hash and the import
// modules stay as wasm-bindgen wrote them.
// Used by merge-pkg.mjs on the web flavour: shortImports(wasmBytes, glueText) → { wasm, glue }.

/** Reads an unsigned LEB128 number at `at` of `bytes`: [value, next offset]. */
function readU32(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [value, at];
    shift += 7;
  }
}

/** The unsigned LEB128 bytes of `value`. */
function u32(value) {
  const out = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

/** Where the import description at `at` ends (function, table, memory, global or tag). */
function descEnd(bytes, at) {
  const kind = bytes[at++];
  const limits = (p) => {
    const flags = bytes[p++];
    [, p] = readU32(bytes, p);
    if (flags & 1) [, p] = readU32(bytes, p);
    return p;
  };
  switch (kind) {
    case 0:
      return readU32(bytes, at)[1];
    case 1:
      return limits(at + 1);
    case 2:
      return limits(at);
    case 3:
      return at + 2;
    case 4:
      return readU32(bytes, at + 1)[1];
    default:
      throw new Error(`import kind ${kind} not known`);
  }
}

/** A short name for the `n`-th import: letters, then letters and digits. */
function shortName(n) {
  const first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const rest = `${first}0123456789`;
  let name = first[n % first.length];
  n = Math.floor(n / first.length);
  while (n > 0) {
    name += rest[n % rest.length];
    n = Math.floor(n / rest.length);
  }
  return name;
}

const HASHED = /^__wbg_[A-Za-z0-9_]*_[0-9a-f]{16}$/;

/** `wasm` (bytes) and `glue` (its text) with every hashed import name shortened in both. */
export function shortImports(wasm, glue) {
  const text = new TextDecoder();
  const utf8 = new TextEncoder();
  const parts = [wasm.subarray(0, 8)];
  const renamed = new Map();
  let at = 8;
  while (at < wasm.length) {
    const id = wasm[at];
    const [size, start] = readU32(wasm, at + 1);
    const end = start + size;
    if (id !== 2) {
      parts.push(wasm.subarray(at, end));
      at = end;
      continue;
    }
    let [count, p] = readU32(wasm, start);
    const body = [...u32(count)];
    while (count-- > 0) {
      const [moduleLength, moduleAt] = readU32(wasm, p);
      const [nameLength, nameAt] = readU32(wasm, moduleAt + moduleLength);
      const name = text.decode(wasm.subarray(nameAt, nameAt + nameLength));
      const descAt = nameAt + nameLength;
      const next = descEnd(wasm, descAt);
      let short = name;
      if (HASHED.test(name)) {
        short = renamed.get(name) ?? shortName(renamed.size);
        renamed.set(name, short);
      }
      const shortBytes = utf8.encode(short);
      body.push(...wasm.subarray(p, moduleAt + moduleLength), ...u32(shortBytes.length), ...shortBytes);
      body.push(...wasm.subarray(descAt, next));
      p = next;
    }
    parts.push(Uint8Array.from([2, ...u32(body.length), ...body]));
    at = end;
  }
  let shortened = glue;
  for (const [name, short] of renamed) {
    const parts = shortened.split(name);
    if (parts.length < 2) throw new Error(`the glue does not name the import ${name}`);
    shortened = parts.join(short);
  }
  const bytes = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.length;
  }
  return { wasm: bytes, glue: shortened, renamed: renamed.size };
}
