"""Export a randomly initialised BERT-base-shaped token classifier (12 layers, hidden 768,
vocabulary 30,522, 9 labels) to ONNX, for measuring the engine on the shape that real clinical
models have. The weights are random: the file is for timing, never for serving, and is not
committed (440 MB). Needs torch and transformers (the GPU machine's image has both).

    python3 models/train/export_shaped.py OUT.onnx
"""

import sys

import torch
import transformers


def main(out: str) -> None:
    torch.manual_seed(0)
    cfg = transformers.BertConfig(num_labels=9, attn_implementation="eager")
    model = transformers.BertForTokenClassification(cfg).eval()
    ids = torch.randint(5, cfg.vocab_size, (2, 16))
    mask = torch.ones_like(ids)
    batch_seq = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        try:
            torch.onnx.export(model, (ids, mask), out, input_names=["input_ids", "attention_mask"],
                              output_names=["logits"], opset_version=17, dynamo=False,
                              dynamic_axes={"input_ids": batch_seq, "attention_mask": batch_seq,
                                            "logits": batch_seq})
        except Exception as err:  # the TorchScript exporter is gone from some torch releases
            print(f"export_shaped: TorchScript export failed ({err}); trying the dynamo exporter",
                  file=sys.stderr)
            b, s = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
            torch.onnx.export(model, (ids, mask), out, input_names=["input_ids", "attention_mask"],
                              output_names=["logits"], dynamo=True, external_data=False,
                              dynamic_shapes=({0: b, 1: s}, {0: b, 1: s}))
    print(f"export_shaped: {out}: vocab {cfg.vocab_size}")


if __name__ == "__main__":
    main(sys.argv[1])
