#!/usr/bin/env python3
"""Write one small token-classification model directory per encoder family Sluice serves.

Run from the repository root with Debian's interpreter and HF's tokenizers for node (the
package the tokenizer goldens come from):

    mkdir -p /tmp/hftok && (cd /tmp/hftok && npm install tokenizers@0.23.2)
    NODE_PATH=/tmp/hftok/node_modules /usr/bin/python3 models/testdata/layouts/gen_layouts.py

Each directory mirrors what optimum exports for that architecture: the graph's inputs are
named, typed and shaped as optimum writes them (input_ids and attention_mask, int64, dims
batch_size x sequence_length, plus token_type_ids where the architecture has them; output
logits, float32, batch_size x sequence_length x num_labels), config.json and
tokenizer_config.json carry the fields the real models' files carry, and tokenizer.json is
a test tokenizer of the family's layout (tokenizer/testdata, whose golden files prove it is
read exactly as HF reads it).

The weights are not learned. The graph looks each token id up in a short table: the pieces
of "Jonathan" in SENTENCE are labelled first_name (B- then I-), the first piece of
"Smithers" B-last_name, its second piece O and the rest I-last_name, every other id O. So
a served answer can be predicted exactly: word-level aggregation ("first") must fuse
Smithers's pieces back into one word, which only works when the family's subwords are
recognised, while "simple" keeps the pieces apart. The attention mask scales the logits, so
padding still matters.
"""

import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SENTENCE = "Patient Jonathan Smithers was admitted for review."
FIRST, LAST = "Jonathan", "Smithers"
LABELS = ["O", "B-first_name", "I-first_name", "B-last_name", "I-last_name"]

# name -> (tokenizer file under tokenizer/testdata, config.json fields, token types?,
# tokenizer_config.json or None)
FAMILIES = {
    "bert": ("cased.json", {"model_type": "bert", "architectures": ["BertForTokenClassification"],
             "max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0}, True,
             {"model_max_length": 512, "do_lower_case": False}),
    "distilbert": ("uncased.json", {"model_type": "distilbert", "architectures": ["DistilBertForTokenClassification"],
                   "max_position_embeddings": 512, "pad_token_id": 0}, False,
                   {"model_max_length": 512, "do_lower_case": True}),
    "roberta": ("roberta-prefix.json", {"model_type": "roberta", "architectures": ["RobertaForTokenClassification"],
                "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0,
                "eos_token_id": 2}, False, {"model_max_length": 512, "add_prefix_space": True}),
    "modernbert": ("modernbert.json", {"model_type": "modernbert", "architectures": ["ModernBertForTokenClassification"],
                   "max_position_embeddings": 8192, "pad_token_id": 50283}, False,
                   {"model_max_length": 1000000000000000019884624838656}),
}
# Families whose tokenizer files may not exist yet are skipped with a note.
OPTIONAL = {
    "deberta-v2": ("deberta-v3.json", {"model_type": "deberta-v2", "architectures": ["DebertaV2ForTokenClassification"],
                   "max_position_embeddings": 512, "type_vocab_size": 0, "pad_token_id": 0,
                   "relative_attention": True, "position_buckets": 256}, False, {"model_max_length": 512}),
    "xlm-roberta": ("xlm-roberta.json", {"model_type": "xlm-roberta", "architectures": ["XLMRobertaForTokenClassification"],
                    "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1, "bos_token_id": 0,
                    "eos_token_id": 2}, False, {"model_max_length": 512}),
}

ENCODE_JS = r"""
const tk = require('tokenizers');
(async () => {
  const tok = tk.Tokenizer.fromFile(process.argv[1]);
  const enc = await tok.encode(process.argv[2], null, { addSpecialTokens: false });
  process.stdout.write(JSON.stringify({ ids: enc.getIds(), offsets: enc.getOffsets() }));
})();
"""


def encode(tokenizer_path):
    out = subprocess.run(["node", "-e", ENCODE_JS, tokenizer_path, SENTENCE],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)  # offsets in code points; SENTENCE is ASCII


def pieces(enc, word):
    start = SENTENCE.index(word)
    end = start + len(word)
    return [i for i, (s, e) in enumerate(enc["offsets"]) if s < end and e > start]


def assign(enc):
    """Label of each labelled token id; every other id of the sentence stays O."""
    first, last = pieces(enc, FIRST), pieces(enc, LAST)
    if len(last) < 2:
        raise SystemExit(f"{LAST} is a single token here; the layout needs a word the vocabulary splits")
    want = {}
    for k, i in enumerate(first):
        want[i] = "B-first_name" if k == 0 else "I-first_name"
    for k, i in enumerate(last):
        want[i] = "B-last_name" if k == 0 else ("O" if k == 1 else "I-last_name")
    table = {}
    for i, tid in enumerate(enc["ids"]):
        label = want.get(i, "O")
        if table.setdefault(tid, label) != label:
            raise SystemExit(f"token id {tid} needs two labels in the sentence; pick other words")
    return {tid: label for tid, label in table.items() if label != "O"}


def graph(name, table, token_types):
    ids = sorted(table)
    hit = np.zeros((len(ids), len(LABELS)), dtype=np.float32)
    for row, tid in enumerate(ids):
        hit[row, LABELS.index(table[tid])] = 8.0
    base = np.array([4.0] + [0.0] * (len(LABELS) - 1), dtype=np.float32)
    dims = ["batch_size", "sequence_length"]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims)]
    init = [
        helper.make_tensor("labelled_ids", TensorProto.INT64, [len(ids)], ids),
        helper.make_tensor("hit", TensorProto.FLOAT, list(hit.shape), hit.flatten()),
        helper.make_tensor("base", TensorProto.FLOAT, [len(LABELS)], base),
        helper.make_tensor("last_axis", TensorProto.INT64, [1], [2]),
    ]
    nodes = [
        helper.make_node("Unsqueeze", ["input_ids", "last_axis"], ["ids3"]),
        helper.make_node("Equal", ["ids3", "labelled_ids"], ["is_labelled"]),
        helper.make_node("Cast", ["is_labelled"], ["is_labelled_f"], to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["is_labelled_f", "hit"], ["hits"]),
        helper.make_node("Add", ["hits", "base"], ["scores"]),
        helper.make_node("Unsqueeze", ["attention_mask", "last_axis"], ["mask3"]),
        helper.make_node("Cast", ["mask3"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["scores", "mask_f"], ["masked"]),
    ]
    out = "masked"
    if token_types:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, dims))
        init.append(helper.make_tensor("type_scale", TensorProto.FLOAT, [len(LABELS)], [0.0] * len(LABELS)))
        nodes += [
            helper.make_node("Unsqueeze", ["token_type_ids", "last_axis"], ["types3"]),
            helper.make_node("Cast", ["types3"], ["types_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["types_f", "type_scale"], ["type_term"]),
            helper.make_node("Add", ["masked", "type_term"], ["logits"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["masked"], ["logits"]))
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, dims + ["num_labels"])]
    g = helper.make_graph(nodes, name, inputs, outputs, init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="sluice gen_layouts.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def write(name, spec):
    tok_file, config, token_types, tok_config = spec
    src = os.path.join(ROOT, "tokenizer", "testdata", tok_file)
    if not os.path.exists(src):
        print(f"{name}: {src} does not exist yet; skipped")
        return
    table = assign(encode(src))
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(src, os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer.json")) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab)))
    vocab = 1 + max(ids + [a["id"] for a in tok["added_tokens"]])
    cfg = dict(config, id2label={str(i): l for i, l in enumerate(LABELS)},
               label2id={l: i for i, l in enumerate(LABELS)}, vocab_size=vocab)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump(tok_config, f, indent=2)
        f.write("\n")
    onnx.save(graph(name, table, token_types), os.path.join(d, "model.onnx"))
    print(f"{name}: {len(table)} labelled ids")


if __name__ == "__main__":
    for name, spec in {**FAMILIES, **OPTIONAL}.items():
        write(name, spec)
