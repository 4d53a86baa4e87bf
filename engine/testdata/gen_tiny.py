#!/usr/bin/env python3
"""Write the tiny token-classification models that engine's tests run.

Run with Debian's interpreter from the repository root:

    /usr/bin/python3 engine/testdata/gen_tiny.py

The outputs are committed, so tests need neither Python nor onnx. Every weight comes from a
small integer formula rather than a random generator, so engine_test.go can rebuild the same
numbers in Go and compute the expected logits by hand. Keep the formulas below and the ones in
engine/tiny_model_test.go identical.

The graph is a toy encoder that still depends on the attention mask across the sequence, so
that a padded batch is a real test: every position sees the masked mean of all real positions.

    x      = E[input_ids]                      (+ TT[token_type_ids] in the _tt variant)
    ctx    = sum_t(mask_t * x_t) / sum_t(mask_t)  per batch row
    logits = (x + ctx) @ W + bias               [batch, seq, labels]

Models written:
    tiny_tokclass.onnx     inputs input_ids, attention_mask
    tiny_tokclass_tt.onnx  inputs input_ids, attention_mask, token_type_ids
    tiny_extra_input.onnx  inputs input_ids, attention_mask, extra_ids (added to the ids);
                           an encoder layout engine must refuse
    tiny_int32.onnx        as tiny_tokclass_tt, with int32 inputs (exporters other than optimum)
    tiny_fp16.onnx         as tiny_tokclass, with float16 logits
    tiny_positions.onnx    as tiny_tokclass, plus position_ids: x += P[position_ids]
    tiny_global.onnx       as tiny_tokclass, plus Longformer's global_attention_mask:
                           x += G[global_attention_mask], G's row 0 zero, so a model fed
                           zeros (local attention everywhere) gives tiny_tokclass's logits
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper

VOCAB, HIDDEN, LABELS, TYPES = 16, 4, 5, 2
OPSET = 14


def emb(v, h):
    return ((v * 7 + h * 3) % 11 - 5) / 10.0


def weight(h, l):
    return ((h * 5 + l * 2) % 7 - 3) / 8.0


def bias(l):
    return (l - 2) / 4.0


def type_emb(k, h):
    return (((k + 1) * (h + 1)) % 5 - 2) / 10.0


def pos_emb(p, h):
    return ((p * 3 + h) % 7 - 3) / 20.0


POSITIONS = 64


def table(rows, cols, f):
    return np.array([[f(r, c) for c in range(cols)] for r in range(rows)], dtype=np.float32)


def build(token_types, extra_input, int32=False, fp16=False, positions=False, global_mask=False):
    init = [
        helper.make_tensor("E", TensorProto.FLOAT, [VOCAB, HIDDEN],
                           table(VOCAB, HIDDEN, emb).flatten()),
        helper.make_tensor("W", TensorProto.FLOAT, [HIDDEN, LABELS],
                           table(HIDDEN, LABELS, weight).flatten()),
        helper.make_tensor("bias", TensorProto.FLOAT, [LABELS],
                           np.array([bias(l) for l in range(LABELS)], dtype=np.float32)),
        helper.make_tensor("axis_seq", TensorProto.INT64, [1], [1]),
        helper.make_tensor("axis_last", TensorProto.INT64, [1], [2]),
    ]
    ids_dims = ["batch", "sequence"]
    int_type = TensorProto.INT32 if int32 else TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info("input_ids", int_type, ids_dims),
        helper.make_tensor_value_info("attention_mask", int_type, ids_dims),
    ]
    nodes = []
    ids = "input_ids"
    if extra_input:
        inputs.append(helper.make_tensor_value_info("extra_ids", TensorProto.INT64, ids_dims))
        nodes.append(helper.make_node("Add", ["input_ids", "extra_ids"], ["ids_sum"]))
        ids = "ids_sum"
    nodes.append(helper.make_node("Gather", ["E", ids], ["x_word"]))
    x = "x_word"
    if token_types:
        inputs.append(helper.make_tensor_value_info("token_type_ids", int_type, ids_dims))
        init.append(helper.make_tensor("TT", TensorProto.FLOAT, [TYPES, HIDDEN],
                                       table(TYPES, HIDDEN, type_emb).flatten()))
        nodes.append(helper.make_node("Gather", ["TT", "token_type_ids"], ["x_type"]))
        nodes.append(helper.make_node("Add", ["x_word", "x_type"], ["x_all"]))
        x = "x_all"
    if positions:
        inputs.append(helper.make_tensor_value_info("position_ids", TensorProto.INT64, ids_dims))
        init.append(helper.make_tensor("P", TensorProto.FLOAT, [POSITIONS, HIDDEN],
                                       table(POSITIONS, HIDDEN, pos_emb).flatten()))
        nodes.append(helper.make_node("Gather", ["P", "position_ids"], ["x_pos"]))
        nodes.append(helper.make_node("Add", [x, "x_pos"], ["x_with_pos"]))
        x = "x_with_pos"
    if global_mask:
        inputs.append(helper.make_tensor_value_info("global_attention_mask", TensorProto.INT64, ids_dims))
        init.append(helper.make_tensor("G", TensorProto.FLOAT, [2, HIDDEN], [0.0] * HIDDEN + [0.5] * HIDDEN))
        nodes.append(helper.make_node("Gather", ["G", "global_attention_mask"], ["x_global"]))
        nodes.append(helper.make_node("Add", [x, "x_global"], ["x_with_global"]))
        x = "x_with_global"
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis_last"], ["mask3"]),
        helper.make_node("Mul", [x, "mask3"], ["x_masked"]),
        helper.make_node("ReduceSum", ["x_masked", "axis_seq"], ["num"], keepdims=1),
        helper.make_node("ReduceSum", ["mask3", "axis_seq"], ["den"], keepdims=1),
        helper.make_node("Div", ["num", "den"], ["ctx"]),
        helper.make_node("Add", [x, "ctx"], ["h"]),
        helper.make_node("MatMul", ["h", "W"], ["hw"]),
        helper.make_node("Add", ["hw", "bias"], ["logits_f" if fp16 else "logits"]),
    ]
    if fp16:
        nodes.append(helper.make_node("Cast", ["logits_f"], ["logits"], to=TensorProto.FLOAT16))
    outputs = [helper.make_tensor_value_info(
        "logits", TensorProto.FLOAT16 if fp16 else TensorProto.FLOAT, ["batch", "sequence", LABELS])]
    graph = helper.make_graph(nodes, "tiny_tokclass", inputs, outputs, init)
    model = helper.make_model(graph, producer_name="sluice-engine-testdata",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 7  # loadable by any ORT from 1.8 on
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, tt, extra, opts in [("tiny_tokclass.onnx", False, False, {}),
                                  ("tiny_tokclass_tt.onnx", True, False, {}),
                                  ("tiny_extra_input.onnx", False, True, {}),
                                  ("tiny_int32.onnx", True, False, {"int32": True}),
                                  ("tiny_fp16.onnx", False, False, {"fp16": True}),
                                  ("tiny_positions.onnx", False, False, {"positions": True}),
                                  ("tiny_global.onnx", False, False, {"global_mask": True})]:
        path = os.path.join(here, name)
        onnx.save(build(tt, extra, **opts), path)
        print(path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
