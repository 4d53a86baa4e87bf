// One-off cross-check, not part of `make models`: encodes texts with the
// HuggingFace tokenizers Rust implementation (npm package "tokenizers",
// 0.23.2, installed in a scratch folder) so wordpiece.py can be compared
// with it. Usage:
//   NODE_PATH=/tmp/hf/node_modules node check_tokenizer.js tokenizer.json in.jsonl > out.jsonl
// in.jsonl: {"text": ...} per line; out.jsonl: {"ids", "offsets", "decoded"}.
// The node binding already reports offsets in code points (checked on emoji).
const fs = require("fs");
const { Tokenizer } = require("tokenizers");

async function main() {
  const tok = Tokenizer.fromFile(process.argv[2]);
  const lines = fs.readFileSync(process.argv[3], "utf8").split("\n").filter((l) => l.length > 0);
  for (const line of lines) {
    const text = JSON.parse(line).text;
    const enc = await tok.encode(text);
    const offsets = enc.getOffsets();
    const decoded = await tok.decode(enc.getIds(), true);
    process.stdout.write(JSON.stringify({ ids: enc.getIds(), offsets, decoded }) + "\n");
  }
}

main();
