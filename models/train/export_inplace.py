"""Writes tiny-lm's in-place graph, decode_inplace.onnx, from its model.onnx.

model.onnx is the decoder-with-past layout every runtime reads: each step takes the past keys
and values of every row, left padded to the longest, and returns them joined to the new
positions, so a step copies the whole past and attends over the padding. decode_inplace.onnx
is the same network and weights built around ONNX Runtime's com.microsoft.GroupQueryAttention:
each layer's keys and values live in one buffer of the served length that is both the past
input and the present output (ONNX Runtime writes the new positions into it in place), rows are
right padded, and seqlens_k gives each row its own length, so nothing is copied and no padded
position is attended. It computes a step of one new token a row after a past, or a first
prompt (no past, each row's prompt at the front of its row of ids).

    inputs:  input_ids and position_ids [batch, seq] int64 (right padded),
             seqlens_k [batch] int32 (each row's length after the step, less one),
             total_sequence_length int32 scalar (the longest row's length after the step),
             past_key_values.{i}.key/.value [batch, heads, max, head dim] float32
    outputs: logits [batch, seq, vocab], present.{i}.key/.value (the same buffers)

The weights are found by name (biases, norms, embeddings) and, for the matrix products that
torch.onnx.export leaves unnamed, by their order and shape in model.onnx; a graph that does
not have them where this recipe's export puts them is refused. Sluice checks the two graphs
agree on probes before it steps with this one (engine.Decoder.AddInPlaceDecode).

    /usr/bin/python3 models/train/export_inplace.py models/tiny-lm
"""

import json
import os
import sys

import onnx
from onnx import TensorProto, helper


def main(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    layers, heads, hidden = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
    ffn, vocab, head_dim = cfg["n_inner"], cfg["vocab_size"], cfg["n_embd"] // cfg["n_head"]
    src = onnx.load(os.path.join(model_dir, "model.onnx"))
    named = {i.name: i for i in src.graph.initializer}
    # The unnamed weights of the matrix products, in graph order: per layer the attention's
    # qkv and out, the feed-forward's two, then the vocabulary projection.
    matmuls = [named[n.input[1]] for n in src.graph.node if n.op_type == "MatMul" and n.input[1] in named]
    want = [[hidden, 3 * hidden], [hidden, hidden], [hidden, ffn], [ffn, hidden]] * layers + [[hidden, vocab]]
    if [list(m.dims) for m in matmuls] != want:
        sys.exit(f"{model_dir}/model.onnx: matrix products {[list(m.dims) for m in matmuls]}, want {want}")
    inits = [named["m.tok.weight"], named["m.pos.weight"], named["m.ln.weight"], named["m.ln.bias"]]
    inits += matmuls
    nodes = []

    def node(op, ins, outs, **kw):
        domain = kw.pop("domain", None)
        nodes.append(helper.make_node(op, ins, outs, domain=domain, **kw))

    def value(name, dtype, shape):
        return helper.make_tensor_value_info(name, dtype, shape)

    inputs = [value("input_ids", TensorProto.INT64, ["batch", "seq"]),
              value("position_ids", TensorProto.INT64, ["batch", "seq"]),
              value("seqlens_k", TensorProto.INT32, ["batch"]),
              value("total_sequence_length", TensorProto.INT32, [])]
    outputs = [value("logits", TensorProto.FLOAT, ["batch", "seq", vocab])]
    node("Gather", ["m.tok.weight", "input_ids"], ["tok"])
    node("Gather", ["m.pos.weight", "position_ids"], ["pos"])
    node("Add", ["tok", "pos"], ["x0"])
    x = "x0"
    for l in range(layers):
        p = f"m.blocks.{l}."
        for n in ["ln1.weight", "ln1.bias", "att.qkv.bias", "att.out.bias", "ln2.weight", "ln2.bias", "ff.0.bias", "ff.2.bias"]:
            inits.append(named[p + n])
        qkv, out, ff1, ff2 = (m.name for m in matmuls[4 * l:4 * l + 4])
        past_k, past_v = f"past_key_values.{l}.key", f"past_key_values.{l}.value"
        pres_k, pres_v = f"present.{l}.key", f"present.{l}.value"
        cache = ["batch", heads, "max", head_dim]
        inputs += [value(past_k, TensorProto.FLOAT, cache), value(past_v, TensorProto.FLOAT, cache)]
        outputs += [value(pres_k, TensorProto.FLOAT, cache), value(pres_v, TensorProto.FLOAT, cache)]
        node("LayerNormalization", [x, p + "ln1.weight", p + "ln1.bias"], [f"l{l}.h"], axis=-1, epsilon=1e-5)
        node("MatMul", [f"l{l}.h", qkv], [f"l{l}.qkv0"])
        node("Add", [f"l{l}.qkv0", p + "att.qkv.bias"], [f"l{l}.qkv"])
        # Packed q, k, v in that order, as the network's chunk(3) splits them.
        node("GroupQueryAttention", [f"l{l}.qkv", "", "", past_k, past_v, "seqlens_k", "total_sequence_length"],
             [f"l{l}.att", pres_k, pres_v], domain="com.microsoft", num_heads=heads, kv_num_heads=heads)
        node("MatMul", [f"l{l}.att", out], [f"l{l}.o0"])
        node("Add", [f"l{l}.o0", p + "att.out.bias"], [f"l{l}.o"])
        node("Add", [x, f"l{l}.o"], [f"l{l}.x"])
        node("LayerNormalization", [f"l{l}.x", p + "ln2.weight", p + "ln2.bias"], [f"l{l}.h2"], axis=-1, epsilon=1e-5)
        node("MatMul", [f"l{l}.h2", ff1], [f"l{l}.f0"])
        node("Add", [f"l{l}.f0", p + "ff.0.bias"], [f"l{l}.f"])
        node("Gelu", [f"l{l}.f"], [f"l{l}.g"], domain="com.microsoft")  # erf's, as nn.GELU
        node("MatMul", [f"l{l}.g", ff2], [f"l{l}.d0"])
        node("Add", [f"l{l}.d0", p + "ff.2.bias"], [f"l{l}.d"])
        node("Add", [f"l{l}.x", f"l{l}.d"], [f"x{l + 1}"])
        x = f"x{l + 1}"
    node("LayerNormalization", [x, "m.ln.weight", "m.ln.bias"], ["final"], axis=-1, epsilon=1e-5)
    node("MatMul", ["final", matmuls[-1].name], ["logits"])
    graph = helper.make_graph(nodes, "tiny-lm-inplace", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, producer_name="sluice models/train/export_inplace.py",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(model_dir, "decode_inplace.onnx")
    onnx.save(model, path)
    print(f"{path}: {len(nodes)} nodes, {os.path.getsize(path):,} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tiny-lm"))
