"""One-off check: compares wordpiece.py with HF's output from check_tokenizer.js.

Usage: /usr/bin/python3 compare_tokenizer.py tokenizer.json in.jsonl hf.jsonl
"""
import json
import sys

import wordpiece


def main():
    tok = wordpiece.Tokenizer.load(sys.argv[1])
    texts = [json.loads(line)["text"] for line in open(sys.argv[2], encoding="utf-8")]
    hf = [json.loads(line) for line in open(sys.argv[3], encoding="utf-8")]
    bad = 0
    for text, o in zip(texts, hf):
        ids, offs = tok.encode(text)
        if ids != o["ids"] or [list(x) for x in offs] != o["offsets"] or tok.decode(ids) != o["decoded"]:
            bad += 1
            print("mismatch on text", len(text), "chars")
    print(f"{len(texts)} texts, {sum(len(o['ids']) for o in hf)} tokens, {bad} mismatches")
    sys.exit(1 if bad or len(texts) != len(hf) else 0)


if __name__ == "__main__":
    main()
