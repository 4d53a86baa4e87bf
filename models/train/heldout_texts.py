"""Write held-out documents (corpus.Corpus("heldout"): templates and words no model was
trained on) as JSON lines {"text": ..., "spans": [...]}, for `sluice check-model -quantize
int8 -sample FILE`, and for scoring what de-identification finds on them
(extract's TestDeidentificationOnSyntheticHeldOut):

    /usr/bin/python3 models/train/heldout_texts.py 1500 /tmp/heldout.jsonl [seed]

Spans are the pii task's, as {"start", "end", "label"} in UTF-8 byte offsets.

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
            text, spans = gen.doc(STYLES[i % len(STYLES)])
            pii = []
            for start, end, task, label in spans:
                if task == "pii":
                    b = len(text[:start].encode("utf-8"))
                    pii.append({"start": b, "end": b + len(text[start:end].encode("utf-8")), "label": label})
            f.write(json.dumps({"text": text, "spans": pii}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], *(int(a) for a in sys.argv[3:4]))
