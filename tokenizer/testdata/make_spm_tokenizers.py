#!/usr/bin/python3
"""make_spm_tokenizers.py trains small SentencePiece models and writes them as the
tokenizer.json files that HuggingFace's transformers would make of them (its
convert_slow_tokenizer.py), so the conformance tests can run the SentencePiece families
without shipping a real multi-megabyte model.

transformers is not used: the conversion is written out here from the model's protobuf
(sentencepiece_model_pb2 ships with python3-sentencepiece). What each converter puts in the
file, and how it is laid out here:

  deberta-v3.json   DebertaV2Converter: normalizer Sequence[Strip, Precompiled (the model's
                    nmt_nfkc charsmap), Replace(" {2,}" -> " ")], pre_tokenizer
                    Sequence[Metaspace prepend_scheme always], Unigram with the model's
                    pieces and scores, [PAD] [CLS] [SEP] [UNK] first as DeBERTa-v3's
                    spm.model has them, [MASK] added after the vocab, TemplateProcessing
                    [CLS] $A [SEP], Metaspace decoder.
  xlm-roberta.json  XLMRobertaConverter as xlm-roberta-base's tokenizer.json has it: the
                    fairseq vocab (<s> <pad> </s> <unk>, then the model's pieces from the
                    fourth on, so every piece id is the model's plus one), <mask> last with
                    lstrip, a bare Precompiled normalizer, the legacy Metaspace fields
                    (add_prefix_space), RobertaProcessing trimming offsets.
  unigram-bytes.json  the DeBERTa layout over a model trained with byte_fallback: <0x00> to
                    <0xFF> pieces, Unigram byte_fallback true, Metaspace split false with
                    prepend_scheme first, and three normalized added tokens, so those paths
                    run too.
  unigram-bare.json  the XLM-R model with nothing around it: no normalizer, pre_tokenizer,
                    post_processor or decoder, so each stretch of text is one word and decoding
                    joins tokens with spaces.
  deberta-v3-punct.json  the DeBERTa layout with split_by_punct, as DebertaV2Converter writes
                    it: pre_tokenizer Sequence[Punctuation, Metaspace], so every punctuation
                    character is a word and gets its own "▁".
  unigram-split.json  XLMRobertaConverter's current normalizer (Replace `` and '' by ",
                    Precompiled, Replace " {2,}") under a pipeline of the splitting
                    pre-tokenizers with each split behavior (WhitespaceSplit, Digits, Split on
                    literals and regexes, inverted too, Punctuation) before Metaspace with
                    prepend_scheme first, TemplateProcessing <s> $A </s>, and three normalized
                    added tokens ("MRN", full-width "ｍｇ", "x-ray").
  unigram-nfkd.json  AlbertConverter's normalizer (Replace `` and '', NFKD, StripAccents,
                    Lowercase, Precompiled, Replace " {2,}") over the DeBERTa model, with T5's
                    pre_tokenizer Sequence[WhitespaceSplit, Metaspace].
  wordpiece-nfkc.json  cased.json with normalizer Sequence[NFKC, BertNormalizer without
                    lowercasing or accent stripping].
  wordpiece-seq.json  cased.json (make_tokenizers.js) with its BertPreTokenizer replaced by
                    Sequence[WhitespaceSplit, Punctuation(MergedWithPrevious), Digits], so the
                    pipeline feeds WordPiece too.
  wordpiece-ws.json  cased.json with pre_tokenizer Sequence[CharDelimiterSplit("|"), Whitespace]
                    (\w+|[^\w\s]+), as tokenizers trained with HF's quickstart have it.
  llama-bpe.json    LlamaConverter over a BPE model trained with byte_fallback: normalizer
                    Sequence[Prepend("▁"), Replace(" " -> "▁")], no pre_tokenizer, BPE with
                    merges recovered from the vocab, fuse_unk and byte_fallback, decoder
                    Sequence[Replace("▁" -> " "), ByteFallback, Fuse, Strip(" ", 1, 0)],
                    TemplateProcessing <s> $A.
  llama-metaspace.json  the same BPE model as LlamaConverter writes it with legacy=False (as
                    Mistral's files are): no normalizer, pre_tokenizer Metaspace with
                    prepend_scheme first and split false.

Run from tokenizer/testdata (needs node with tokenizers@0.23.2 only to check the files load):
  NODE_PATH=/tmp/hftok/node_modules /usr/bin/python3 make_spm_tokenizers.py
"""
import base64
import json
import os
import subprocess
import tempfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus(path):
    # The same generated clinical texts the other test tokenizers learn from (texts.js), so
    # the test texts meet both known words and unseen ones.
    js = ("const {makeTexts, bpeTexts} = require(%s);"
          "const t = makeTexts(7, 4000).concat(bpeTexts(9, 1500));"
          "process.stdout.write(t.map(s => s.replace(/[\\r\\n]+/g, ' ')).filter(s => s.trim()).join('\\n') + '\\n');"
          ) % json.dumps(os.path.join(HERE, "texts.js"))
    with open(path, "w", encoding="utf-8") as f:
        subprocess.run(["node", "-e", js], stdout=f, check=True)


def train(text, prefix, **kw):
    args = dict(input=text, model_prefix=prefix, vocab_size=3000, character_coverage=0.98,
                normalization_rule_name="nmt_nfkc", hard_vocab_limit=False, num_threads=1,
                seed_sentencepiece_size=100000, shuffle_input_sentence=False,
                minloglevel=2)
    args.update(kw)
    spm.SentencePieceTrainer.train(**args)
    m = pb.ModelProto()
    with open(prefix + ".model", "rb") as f:
        m.ParseFromString(f.read())
    return m


def charsmap(m):
    return base64.b64encode(m.normalizer_spec.precompiled_charsmap).decode()


def added(id_, content, special=True, lstrip=False):
    return {"id": id_, "content": content, "single_word": False, "lstrip": lstrip,
            "rstrip": False, "normalized": False, "special": special}


def metaspace(scheme="always", split=True):
    return {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}


def template(cls_, sep, ids):
    single = [{"SpecialToken": {"id": cls_, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]
    pair = single + [{"Sequence": {"id": "B", "type_id": 0}}]
    if sep:
        single = single + [{"SpecialToken": {"id": sep, "type_id": 0}}]
        pair = single + [{"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": sep, "type_id": 1}}]
    return {"type": "TemplateProcessing", "single": single, "pair": pair,
            "special_tokens": {k: {"id": k, "ids": [v], "tokens": [k]} for k, v in ids.items()}}


def tokenizer_json(**parts):
    out = {"version": "1.0", "truncation": None, "padding": None}
    out.update(parts)
    return out


def deberta(m, byte_fallback=False):
    pieces = [(p.piece, p.score) for p in m.pieces]
    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]
    assert [p for p, _ in pieces[:4]] == specials, pieces[:4]
    normalizer = {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Precompiled", "precompiled_charsmap": charsmap(m)},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    pre = {"type": "Sequence", "pretokenizers": [metaspace()]}
    dec = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    extra = []
    if byte_fallback:
        pre = metaspace("first", False)
        dec = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}
        # Normalized added tokens: the text after one starts a new stretch, which prepend
        # scheme "first" leaves without "▁".
        for i, content in enumerate(["MRN", "Ａｍ", "New York"]):
            tok = added(len(pieces) + 1 + i, content, special=False)
            tok["normalized"] = True
            extra.append(tok)
    return tokenizer_json(
        added_tokens=[added(i, s) for i, s in enumerate(specials)] + [added(len(pieces), "[MASK]")] + extra,
        normalizer=normalizer,
        pre_tokenizer=pre,
        post_processor=template("[CLS]", "[SEP]", {"[CLS]": 1, "[SEP]": 2}),
        decoder=dec,
        model={"type": "Unigram", "unk_id": m.trainer_spec.unk_id, "vocab": [list(p) for p in pieces],
               "byte_fallback": byte_fallback})


def xlmr(m):
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[p.piece, p.score] for p in m.pieces[3:]]
    vocab.append(["<mask>", 0.0])
    return tokenizer_json(
        added_tokens=[added(0, "<s>"), added(1, "<pad>"), added(2, "</s>"), added(3, "<unk>"),
                      added(len(vocab) - 1, "<mask>", lstrip=True)],
        normalizer={"type": "Precompiled", "precompiled_charsmap": charsmap(m)},
        pre_tokenizer={"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        post_processor={"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                        "trim_offsets": True, "add_prefix_space": True},
        decoder={"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        model={"type": "Unigram", "unk_id": 3, "vocab": vocab})


def llama(m):
    vocab = {p.piece: i for i, p in enumerate(m.pieces)}
    # transformers recovers the merges from the vocab (SentencePieceExtractor): every split
    # of a piece into two pieces, ordered by the merged piece's id, then by the parts' ids.
    merges = []
    for piece, pid in vocab.items():
        local = []
        for i in range(1, len(piece)):
            a, b = piece[:i], piece[i:]
            if a in vocab and b in vocab:
                local.append((a, b, pid))
        local.sort(key=lambda x: (vocab[x[0]], vocab[x[1]]))
        merges.extend(local)
    merges.sort(key=lambda x: x[2])
    return tokenizer_json(
        added_tokens=[added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        normalizer={"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        pre_tokenizer=None,
        post_processor=template("<s>", None, {"<s>": 1}),
        decoder={"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        model={"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
               "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
               "vocab": vocab, "merges": [[a, b] for a, b, _ in merges]})


def split(pattern, behavior, invert=False, regex=False):
    return {"type": "Split", "pattern": {"Regex" if regex else "String": pattern}, "behavior": behavior,
            "invert": invert}


def deberta_punct(m):
    out = deberta(m)
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Punctuation", "behavior": "Isolated"}, metaspace()]}
    return out


def unigram_split(m):
    out = xlmr(m)
    out["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
        {"type": "Replace", "pattern": {"String": "''"}, "content": '"'},
        {"type": "Precompiled", "precompiled_charsmap": charsmap(m)},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Digits", "individual_digits": True},
        split("-", "MergedWithNext"),
        split("[/:]+", "Contiguous", regex=True),
        split("[.,;]", "MergedWithPrevious", regex=True),
        split("x", "MergedWithPrevious", invert=True),
        split("'", "Removed"),
        {"type": "Punctuation", "behavior": "Contiguous"},
        metaspace("first")]}
    out["post_processor"] = template("<s>", "</s>", {"<s>": 0, "</s>": 2})
    out["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}
    # Normalized added tokens, matched in the normalized text between the pipeline's runs.
    for content in ["MRN", "ｍｇ", "x-ray"]:
        tok = added(len(out["model"]["vocab"]) + len(out["added_tokens"]) - 5, content, special=False)
        tok["normalized"] = True
        out["added_tokens"].append(tok)
    return out


def unigram_nfkd(m):
    out = deberta(m)
    out["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
        {"type": "Replace", "pattern": {"String": "''"}, "content": '"'},
        {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
        {"type": "Precompiled", "precompiled_charsmap": charsmap(m)},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]}
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace()]}
    return out


def wordpiece_nfkc():
    with open(os.path.join(HERE, "cased.json"), encoding="utf-8") as f:
        out = json.load(f)
    out["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "NFKC"},
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": False,
         "lowercase": False}]}
    return out


def wordpiece_seq():
    with open(os.path.join(HERE, "cased.json"), encoding="utf-8") as f:
        out = json.load(f)
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "MergedWithPrevious"},
        {"type": "Digits", "individual_digits": False}]}
    return out


def llama_metaspace(m):
    out = llama(m)
    out["normalizer"] = None
    out["pre_tokenizer"] = metaspace("first", False)
    return out


def unigram_bare(m):
    out = xlmr(m)
    out["normalizer"] = None
    out["pre_tokenizer"] = None
    out["post_processor"] = None
    out["decoder"] = None
    return out


def wordpiece_ws():
    with open(os.path.join(HERE, "cased.json"), encoding="utf-8") as f:
        out = json.load(f)
    out["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "CharDelimiterSplit", "delimiter": "|"}, {"type": "Whitespace"}]}
    return out


def write(name, obj):
    path = os.path.join(HERE, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    # HF must accept the file as written.
    subprocess.run(["node", "-e", "require('tokenizers').Tokenizer.fromFile(process.argv[1])", path], check=True)
    print(name, os.path.getsize(path), "bytes")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "corpus.txt")
        corpus(text)
        deb = train(text, os.path.join(tmp, "deb"), pad_id=0, bos_id=1, eos_id=2, unk_id=3,
                    pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
        write("deberta-v3.json", deberta(deb))
        write("deberta-v3-punct.json", deberta_punct(deb))
        write("unigram-nfkd.json", unigram_nfkd(deb))
        write("wordpiece-nfkc.json", wordpiece_nfkc())
        xl = train(text, os.path.join(tmp, "xlmr"), vocab_size=2500)
        write("xlm-roberta.json", xlmr(xl))
        write("unigram-split.json", unigram_split(xl))
        write("unigram-bare.json", unigram_bare(xl))
        write("wordpiece-seq.json", wordpiece_seq())
        write("wordpiece-ws.json", wordpiece_ws())
        fb = train(text, os.path.join(tmp, "fb"), vocab_size=2000, byte_fallback=True,
                   pad_id=0, bos_id=1, eos_id=2, unk_id=3,
                   pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]")
        write("unigram-bytes.json", deberta(fb, byte_fallback=True))
        ll = train(text, os.path.join(tmp, "llama"), model_type="bpe", vocab_size=2000, byte_fallback=True,
                   character_coverage=0.98, normalization_rule_name="identity", add_dummy_prefix=True,
                   remove_extra_whitespaces=False, split_digits=True)
        write("llama-bpe.json", llama(ll))
        write("llama-metaspace.json", llama_metaspace(ll))


if __name__ == "__main__":
    main()
