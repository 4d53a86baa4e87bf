"""Write held-out documents (corpus.Corpus("heldout"): templates and words no model was
trained on) as JSON lines {"text": ...}, for `sluice check-model -quantize int8 -sample FILE`:

    /usr/bin/python3 models/train/heldout_texts.py 1500 /tmp/heldout.jsonl [seed]

Every style is drawn in turn. Needs only the standard library and models/train's data.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

STYLES = ["message", "header", "progress", "lab", "lists", "admin", "letter", "narrative", "discharge"]


def main(n, out, seed=7000):
    gen = corpus.Corpus("heldout", seed=seed)
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            text, _ = gen.doc(STYLES[i % len(STYLES)])
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], *(int(a) for a in sys.argv[3:4]))
