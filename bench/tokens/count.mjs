// Counts the tokens of texts for `fiskgen-bench --sizes`: reads a JSON array of strings on
// stdin, prints a JSON array of their token counts with o200k_base (the GPT-4o/GPT-5 encoding),
// whose ranks js-tiktoken bundles, so nothing is downloaded. Install once: `npm ci` here.
import { readFileSync } from "node:fs";
import { Tiktoken } from "js-tiktoken/lite";
import o200k_base from "js-tiktoken/ranks/o200k_base";

const texts = JSON.parse(readFileSync(0, "utf8"));
if (!Array.isArray(texts) || texts.some((text) => typeof text !== "string")) {
  throw new Error("count.mjs reads a JSON array of strings on stdin");
}
const encoding = new Tiktoken(o200k_base);
process.stdout.write(JSON.stringify(texts.map((text) => encoding.encode(text).length)) + "\n");
