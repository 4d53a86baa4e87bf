"""MODEL_CARD.md of a token-classification model, from its settings (config.Ner), its
config.json and the figures train_ner.py measured. The text is the committed cards'; a
rebuild writes them again byte for byte but for the training times.
"""

import os

import common

# Figures of models shipped before, which the cards compare with, each scored again from its
# own exported files by score.py on the card's documents: (first edition's held-out split,
# first three editions') and, from the fourth template edition on, (first edition's, first
# three editions', all four editions'). The commits are where those models are.
PREVIOUS_F1 = {"pii": (0.706, 0.583), "clinical-ner": (0.600, 0.457)}  # the first models, cd8f705
BEFORE_CRF_F1 = {"pii": (0.820, 0.739), "clinical-ner": (0.736, 0.591)}  # b18a37f
BEFORE_NOVEL_F1 = {"pii": (0.899, 0.831), "clinical-ner": (0.791, 0.676)}  # cd45db4
BEFORE_CONV_F1 = {"pii": (0.923, 0.851), "clinical-ner": (0.829, 0.699)}  # the transformer, a88c047
BEFORE_MUTATE_F1 = {"clinical-ner": (0.878, 0.756)}  # e2085a1
BEFORE_NODROP_F1 = {"pii": (0.908, 0.833), "clinical-ner": (0.818, 0.688)}  # 150c188
BEFORE_FOURTH_F1 = {"pii": (0.958, 0.902, 0.897), "clinical-ner": (0.881, 0.775, 0.768)}  # a209d45
BEFORE_SEGMENT_F1 = {"clinical-ner": (0.880, 0.796, 0.790), "pii": (0.961, 0.916, 0.909)}  # b055887
BEFORE_WORDVEC_F1 = {"clinical-ner": (0.886, 0.805, 0.801)}  # e73ae23
# aa1dbab, before templates marked the entities they write: scored without the marks (as it
# was measured then), and with them.
BEFORE_MARKS_F1 = {"clinical-ner": ((0.915, 0.843, 0.837), (0.904, 0.835, 0.833))}


def first_edition_text(cfg, metrics):
    """The card's comparison with the first models, which were measured on the first
    edition's held-out split alone."""
    name = cfg.name
    fe = metrics.get("first_edition")
    if not fe:
        return ""
    before = PREVIOUS_F1[name]
    import corpus_data
    n_words = len(corpus_data.WORD_EDITIONS)
    n_templates = max(len(eds) for eds in corpus_data.TEMPLATE_EDITIONS.values())
    three = metrics.get("three_editions")
    fourth = BEFORE_FOURTH_F1[name]
    three_text = (f" On the first three editions' held-out parts, the split every model before the fourth edition of"
                  f" templates was measured on, it scores **{three['overall']['f1']:.3f}**; the model shipped before that"
                  f" edition scores {fourth[0]:.3f}, {fourth[1]:.3f} and {fourth[2]:.3f} on the first edition's, the first three"
                  f" editions' and all four editions' held-out parts.") if three else ""
    cut = BEFORE_SEGMENT_F1.get(name) if cfg.segment_q else None
    if cut:
        three_text += (f" The model shipped before training words were cut into pieces other ways scores {cut[0]:.3f},"
                       f" {cut[1]:.3f} and {cut[2]:.3f} on those three splits.")
    wv = BEFORE_WORDVEC_F1.get(name) if cfg.word_vectors else None
    if wv:
        three_text += (f" The model shipped before word vectors scores {wv[0]:.3f}, {wv[1]:.3f} and {wv[2]:.3f} on"
                       f" them.")
    return f"""The word lists have {n_words} editions and the templates {n_templates} (`wordlists_more.py`, `templates_more.py` and
`templates_fourth.py` hold the later ones); each is split on its own, so an earlier edition's held-out words and templates
stay unseen. The table above uses all editions' held-out parts. On the first edition's held-out
part alone ({fe['documents']} documents), the split the first models were measured on, this model
scores F1 **{fe['overall']['f1']:.3f}** (precision {fe['overall']['precision']:.3f}, recall {fe['overall']['recall']:.3f}).{three_text}
The first model, trained on the first edition alone, scores {before[0]:.3f} there and {before[1]:.3f}
on the first three editions' held-out parts; the model shipped before the CRF (same data and network, 3000
float32 steps, read token by token) scores {BEFORE_CRF_F1[name][0]:.3f} and {BEFORE_CRF_F1[name][1]:.3f}; the model
shipped before made-up context words {BEFORE_NOVEL_F1[name][0]:.3f} and {BEFORE_NOVEL_F1[name][1]:.3f}; the one
shipped before dropout was dropped (dropout 0.1 and 4500 steps) {BEFORE_NODROP_F1[name][0]:.3f} and {BEFORE_NODROP_F1[name][1]:.3f}; the transformer
shipped before the convolutional network (same data and steps) {BEFORE_CONV_F1[name][0]:.3f} and {BEFORE_CONV_F1[name][1]:.3f}{
f"; the convolutional network shipped before mutated terms and {cfg.train_docs:,} documents (40,000 documents) {BEFORE_MUTATE_F1[name][0]:.3f} and {BEFORE_MUTATE_F1[name][1]:.3f}" if name in BEFORE_MUTATE_F1 else ""}.
"""


def members_text(cfg, metrics):
    """The Model section's lines on an averaged model's members, if it has them."""
    ms = metrics.get("members")
    if not ms:
        return ""
    alone = ", ".join(f"{m['overall']['f1']:.3f}" for m in ms)
    return f"""
  The graph holds {len(ms)} such networks (`nets.Averaged`), trained apart on the same documents
  with another initialisation and batch order each, and its logits are their mean; the CRF
  scores below are the mean of theirs. Alone they score F1 {alone} on the held-out split
  below. They share the vocabulary's tables, so the second costs its weights only
  (`models/train/README.md`, "Two networks averaged")."""


def member_times_text(metrics):
    """How long an averaged model's members took, side by side, if it has them."""
    ms = metrics.get("members")
    if not ms:
        return ""
    loops = " and ".join(f"{m['train_seconds']:.0f}" for m in ms)
    preps = " and ".join(f"{m['prep_seconds']:.0f}" for m in ms)
    return (f" ({len(ms)} members side by side, one core each, from start to the last member's end: "
            f"documents {preps} s, training loops {loops} s)")


def segment_text(cfg):
    """The card's line on sampled cuts of training words (segment_q), if the model has them."""
    q = cfg.segment_q
    if not q:
        return ""
    return (f" each word of a training document is cut into WordPiece pieces the greedy way except that, at each piece,"
            f" with chance {q}, a shorter piece that matches is taken instead (`sample` of `wordpiece.Tokenizer.encode`), so that the"
            f" network learns to read a word from pieces it does not usually see together, as an unseen word comes out of"
            f" the greedy cut; serving always cuts the greedy way;")


def marks_text(cfg):
    """The card's note on entities that templates write themselves ({SLOT=text} marks):
    they are gold entities of the task's documents, so they change what the figures measure."""
    if cfg.task != "ner":
        return ""
    import corpus
    import corpus_data
    marks = sum(len(corpus.MARK.findall(t)) for pool in corpus_data.TEMPLATE_POOLS.values() for t in pool)
    old, new = BEFORE_MARKS_F1[cfg.name]
    return (f" Templates also mark {marks} entities they write themselves (`Allergy: {{MED}} - {{COND=nausea}}`,"
            f" `{{MED}} {{DOSE}} {{ROUTE=PO}} {{FREQ=daily}}`, `No {{COND=focal neurologic deficits}}`), in train and"
            f" held-out templates alike, so these are gold entities too (a mark in a train template"
            f" that holds a word only held-out entries have stays unlabelled). Until the nineteenth session they were"
            f" unlabelled text, and every earlier figure this card quotes was measured that way: the model"
            f" shipped before them scores {new[0]:.3f}, {new[1]:.3f} and {new[2]:.3f} on the first edition's, the"
            f" first three editions' and all editions' held-out parts with them ({old[0]:.3f}, {old[1]:.3f} and"
            f" {old[2]:.3f} without).")


def lenient_text(metrics):
    """The card's lenient figures (an entity of the right type that overlaps counts)."""
    le = metrics.get("lenient")
    if not le:
        return ""
    fe = metrics.get("first_edition", {}).get("lenient")
    return (f"Counted leniently (a prediction is right if it overlaps a gold entity of its type, and a gold "
            f"entity is found if a prediction of its type overlaps it), F1 is {le['f1']:.3f} (precision "
            f"{le['precision']:.3f}, recall {le['recall']:.3f})" + (f", and {fe['f1']:.3f} on the first edition's split" if fe else "")
            + ": the difference from the strict figure is entities found with other bounds. The quality bar "
            "below is on the strict figure.\n\n")


def remaining_errors_text(task, metrics):
    """The card's summary of the errors left on the held-out split (`diagnose.py DIR NAME
    errors` shows them)."""
    if task != "pii":
        return ("multi-word terms found with other bounds (`gross hematuria` found as `hematuria`, `provoked dvt` as "
                "`dvt`, `CBC with differential` cut in two, a context word taken in: `fibrinogen total`), the type of a "
                "term where the template's context points elsewhere (a body part after `Final diagnosis:` read as "
                "DISEASE, `cryoablation` and `IMRT` read as MEDICATION), and terms in slots whose context says nothing "
                "of them (`the pt became influenza`)")
    f1 = {lab: f"{metrics['per_label'][lab]['f1']:.3f}" for lab in ("account_number", "email", "phone_number")}
    return ("names: unseen first names missed, mostly in layouts no train template has (`Preferred: X`, lower-case "
            "chat messages), or read as last names and the reverse; fax numbers read as phone numbers where only the "
            "context tells them apart; states read as cities. The CRF removed most of the numbers split into pieces "
            f"of different types (F1 before the CRF, then now: account numbers 0.851, {f1['account_number']}; "
            f"e-mails 0.743, {f1['email']}; phone numbers 0.749, {f1['phone_number']})")


def margin_text(f1, bar):
    """A warning when a met bar is met by less than the spread between training runs: the
    seeds of one recipe have scored up to 0.009 apart on this split (README.md, "Two networks
    averaged")."""
    if f1 < bar or f1 - bar >= 0.009:
        return ""
    return (f" by {f1 - bar:.4f} ({f1:.4f}), less than the spread between training runs of one recipe"
            f" (up to 0.009 here): another run could fall short")


def first_edition_bar(metrics, bar):
    """The bar on the first edition's held-out split, which the card quotes beside the full one."""
    fe = metrics.get("first_edition")
    if not fe:
        return ""
    f1 = fe["overall"]["f1"]
    return f"; on the first edition's held-out split alone {f1:.3f}, {'above' if f1 >= bar else 'below'} it"


def no_break_text(metrics):
    """What the same network scores with the spaced matrix in place of the break one."""
    nb = metrics.get("no_break")
    if not nb:
        return ""
    fe = nb.get("first_edition")
    return (f" With the `spaced` matrix in its place (as before it existed) the same network scores F1 "
            f"{nb['overall']['f1']:.3f}" + (f" ({fe['overall']['f1']:.3f} on the first edition's split)" if fe else "")
            + ".")


def knowing_words_text(cfg):
    """The card's paragraph on knowledge of words from outside the corpus."""
    if cfg.word_vectors:
        return ("Unseen words were most of what was left, and the word vectors are what moved it (`models/train/README.md`,"
                " \"Word vectors\"); outside lists of clinical terms and names put into training slots had not"
                " (faker's locales, WordNet: within the spread between training seeds).")
    outside = ("real first names, surnames, cities and states from faker's locales in training slots (13x the train"
               " first names), and an auxiliary task on GloVe vectors of 98,669 English words, each scored within the"
               " spread between training seeds" if cfg.task == "pii" else
               "real names, places and clinical terms from outside lists (faker's locales, WordNet) in training slots"
               " scored within the spread between training seeds, and everyday English words in place of context words below it")
    return ("What is left is mostly words the model has never seen, which a network of this size\ntrained for minutes"
            f" can read only from context and shape. Knowing\nmore words did not help either: {outside}"
            " (`models/train/README.md` has the table).")


def tokenizer_text(cfg, metrics):
    """The card's tokenizer item: the shared vocabulary alone, or with whole words that carry
    pretrained vectors (wordvec.py)."""
    wv = metrics.get("word_vectors")
    if not wv:
        return f"""- Tokenizer: cased WordPiece, {metrics['vocab_size']} entries built from the train split only
  (`tokenizer.json`, HuggingFace format, `[CLS] $A [SEP]`)."""
    import wordvec
    return f"""- Tokenizer: cased WordPiece (`tokenizer.json`, HuggingFace format, `[CLS] $A [SEP]`), {metrics['vocab_size']:,}
  entries: the shared {metrics['vocab_size'] - wv['entries']:,} built from the train split only, then
  {wv['entries']:,} whole-word entries (lower case, capitalised, and upper case for words of at most {cfg.word_vectors.upper_max} letters) for
  {wv['words']:,} words of GloVe (6B tokens of Wikipedia and Gigaword, lower case; npm's `{wordvec.PACKAGE}`): the
  {wv['frequent']:,} most frequent, then those most like the words of train entries by a ridge regression on the vectors.
  Each carries its vector, reduced to {wv['dims']} dimensions and stored as int8; the network embeds a token as
  the mean of its first and last shared piece plus a learnt projection of its vector when it is a whole
  word (`nets.WordVecTagger`, `models/train/wordvec.py`). In training, {cfg.word_vectors.drop:.0%} of words are cut with the
  shared pieces alone, as a word without a vector is, so the network keeps reading words from their pieces{
f"; and with chance {cfg.word_vectors.piece_drop:.0%}, a token that is a whole word among the shared entries (which the network could read by its own learnt embedding) comes as that word cut into shorter shared pieces (`hepatitis` as `hepat ##itis`) with its vector, as an unseen word does" if cfg.word_vectors.piece_drop else ""}. The vectors come from unlabelled text, and no
  held-out entry or template chose a word; but GloVe knows many held-out words: {wv['heldout_with_vector']} of the {wv['heldout_words']} words that
  only held-out conditions, medications, procedures, anatomy terms and tests have get a vector ({wv['train_with_vector']} of
  the {wv['train_words']:,} words of train entries). That knowledge of words never seen in training is what a
  pretrained encoder brings to a real model, and is most of this model's gain over the one before it."""


def write_card(cfg, names, model_cfg, metrics, argv):
    """Writes models/NAME/MODEL_CARD.md. names: the label names; model_cfg: config.json;
    argv: the command that trained it."""
    name, task = cfg.name, cfg.task
    import corpus
    import corpus_data
    labels = corpus.NER_LABELS if task == "ner" else corpus.PII_LABELS
    purpose = {
        "clinical-ner": "Clinical entity extraction for `POST /analyze`: conditions, medications and their "
                        "dosage, frequency and route, procedures, anatomy, tests and test results.",
        "pii": "PII/PHI detection for `POST /pii/extract`: names, dates, ages, contact details, addresses, "
               "record and account numbers, URLs and organisations (hospitals, clinics, pharmacies).",
    }[name]
    ov = metrics["overall"]
    bar = cfg.bar
    rows = "\n".join(f"| {lab} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | {m['support']} |"
                     for lab, m in metrics["per_label"].items())
    pools = ", ".join(f"{k} {len(v)}" for k, v in sorted(corpus_data.TEMPLATE_POOLS.items()))
    card = f"""# {name}

{purpose}

**Trained only on synthetic text. Not validated for clinical use.** The corpus is generated by
`models/train/corpus.py` from word lists and sentence templates written for this project; no
real patient data was used. Expect much lower accuracy on real clinical notes, on styles the
templates do not cover, and on languages other than English.

## Labels

BIO tags over WordPiece tokens, used in the IOB1 way: every sub-word of an entity carries `I-X`,
and `B-X` only starts an entity that directly follows another `X`. HF-style decoding (an `I-X`
after `O` opens an entity, as in the "simple" aggregation) reads them as usual. Entity types: {", ".join(f"`{x}`" for x in labels)}.
`id2label` in `config.json` has the full list ({len(names)} tags, `O` is 0).
{"Names are split into `first_name` and `last_name` (a hyphenated double surname is one `last_name`); titles such as Dr./Mr. are outside the span. `date` covers every date including dates of birth; `age` is the number only; `street_address` is the number, street and any apartment/suite; `company_name` covers hospitals, clinics and pharmacies; `account_number` covers billing, insurance and member numbers." if task == "pii" else "`DISEASE` covers diseases, conditions and symptoms; `DOSAGE` is amount plus unit (e.g. `500 mg`, `2 puffs`); `TEST_RESULT` is a measured value with its unit (e.g. `7.2 %`, `120/80 mmHg`)."}

## Model

- Architecture: `nets.ConvTagger` in `models/train/nets.py`, a stack of {len(cfg.dilations)} pre-norm residual blocks,
  each a convolution over the token sequence (kernel {cfg.kernel}, dilations {", ".join(str(d) for d in cfg.dilations)} in turn, a gated
  linear unit), no feed-forward layers; hidden {model_cfg['hidden_size']}. There are no position embeddings
  and no attention: every token sees the same neighbourhood ({sum(cfg.dilations) * (cfg.kernel - 1) // 2} tokens either side) wherever it
  sits, so a pattern learnt in one template's layout carries over to others. It replaced a
  BERT-shaped transformer (hidden 128, 3 layers, 4 heads) that scored F1 {BEFORE_CONV_F1[name][1]:.3f} on the first three
  editions' held-out split with the same data and steps (`models/train/README.md`, "The encoder"). Windows are at most
  max_position_embeddings = {model_cfg['max_position_embeddings']} tokens, the length it was trained on (longer texts must be windowed by the caller, between words).
  The output layer decides per word: O/B/I scores and entity-type scores both come from the mean of
  the hidden states of the token's word (a token not starting with `##` and the `##` tokens after it).
  The word's first token gets `logit(B-X) = score_B + type_X`, `logit(I-X) = score_I + type_X`; its
  `##` pieces can only continue it (`B` is -1e4, `I-X` is `max(score_B, score_I) + type_X`), so all
  pieces of a word carry one label. No dropout.
  The graph is still a plain token classifier to its caller: same inputs, one `logits` output.{members_text(cfg, metrics)}
- A linear-chain CRF over the logits (`nets.Transitions`): three
  {len(names)}x{len(names)} matrices of label-to-label scores, for tokens with spaces between them (`spaced`),
  tokens that touch (`touching`: the pieces of `555-0134`, `a.b@c.org` or `St.`) and tokens with a
  line break or tab between them (`break`). The first two are trained with the network, starting from the
  training labels' bigram log-frequencies. The tokenizer drops whitespace, so the network cannot
  see a line break; `break` is the trained `spaced` matrix, except that an entity going on across
  the break scores at most the training windows' smoothed log-frequency of that (no entity of the corpus
  runs across a line break or a tab), so two list items on two lines are not read as one entity.{no_break_text(metrics)}
  The matrices are not in the ONNX graph: `config.json` carries them
  as `sluice.crf_transitions`, and Sluice's decoder labels each token by the best path under
  them (Viterbi; scores are the CRF's marginal probabilities). A client that ignores them and
  takes each token's argmax gets the lower figure quoted below.
- Parameters: {metrics['parameters']:,} in the network, plus {3 * len(names) ** 2:,} CRF scores; `model.onnx` {metrics['onnx_bytes']:,} bytes ({"token embeddings, convolutions and word vectors stored as int8 with a float16 step per row, other weights as float16, all widened to float32 when ONNX Runtime loads them; " if cfg.word_vectors else "fp32, "}opset 14).
- Inputs `input_ids`, `attention_mask` (int64 [batch, sequence]); output `logits`
  [batch, sequence, {len(names)}]. No `token_type_ids`. Padding must be on the right and masked
  (padded slots are zeroed before every convolution, so real positions are unaffected).
{tokenizer_text(cfg, metrics)}
- Training: the sum of the tokens' cross-entropy and the CRF's negative log-likelihood per token;
  {metrics['steps']} steps{" per member" if metrics.get("members") else ""}, batch {cfg.batch}, AdamW lr {cfg.lr} ({cfg.trans_lr_scale}x for the CRF scores) with {cfg.warmup} warm-up steps and linear decay,
  seed {metrics['seed']}, {cfg.train_docs} generated train documents;{segment_text(cfg)}{" bfloat16 autocast for the network (weights, optimizer and CRF in float32; evaluation and export in float32);" if metrics.get('bf16') else " float32 throughout (this CPU has no bfloat16 instructions);"}
  {metrics.get('threads', '2 torch threads, OPENBLAS_NUM_THREADS=1')}{" per member" if metrics.get("members") else ""}. Training time: {metrics['train_seconds']:.0f} s on this project's 2-core build machine{member_times_text(metrics)}.

## Held-out evaluation

Measured on {metrics['documents']} generated documents ({metrics['windows']} windows of at most 128 tokens,
cut between words and never inside an entity) built only from **held-out templates filled with held-out
words**: 25 % of each open word list (names, places, streets, hospital names, conditions, medications,
procedures, anatomy, tests) and 30 % of each template pool are held out (pools: {pools}). Closed
classes are shared by both splits: routes, frequencies, dose units, street types and hospital suffixes
("Hospital", "Medical Center"). Structured values (dates, phones, IDs, emails, doses, results) are
generated fresh for each slot by the same formats in both splits. Training also fills {cfg.augment.invented:.0%} of word-list
slots with invented words (`pseudo.py`; any that equal a held-out word are rejected){f"; {cfg.augment.mutate:.0%} of the invented conditions, procedures, anatomy terms and tests are train entries with one word replaced by an invented one, so that invented terms are as long as listed ones" if cfg.augment.mutate else ""}{f"; {cfg.augment.adjacent:.0%} of the clinical slots hold two entities, the slot's own and one of a random clinical type before or after it, side by side or coordinated (`Lyrica-Zosyn`, `spleen and breast`), each with its label, so that where one entity ends is read from the words rather than from a template" if cfg.augment.adjacent else ""}, swaps
{cfg.augment.swap_words:.0%} of the context words in {cfg.augment.swap_segments:.0%} of template segments for words of other train
templates, replaces {cfg.augment.novel:.0%} of the context words with made-up words (so that an unfamiliar
word is no sign of an entity by itself: held-out templates are full of words that no train
template has), and hides {cfg.ent_unk:.0%} of entity tokens behind `[UNK]`, so the
model learns from context and word shape rather than a template's exact wording.{marks_text(cfg)}
Entity-level, strict (same start, end and type), from simple BIO decoding (the HF "simple"
aggregation: `B-X` or a change of type opens an entity) of the Viterbi path under the CRF, as
Sluice serves it. Read token by token (each token's argmax, no CRF) the same network scores
F1 {metrics['argmax']['overall']['f1']:.3f}. There is no separate development
split: the recipe's choices (the encoder, the per-word output layer, IOB1 labels, the CRF, dropout, context swaps,
made-up context words, the invented-word share, {'mutated terms, the document count, ' if cfg.augment.mutate else ''}{'the choice of word vectors, ' if cfg.word_vectors else ''}{'two networks averaged, ' if cfg.members > 1 else ''}step count) were compared on this same held-out split, so its figures are
somewhat optimistic.

| label | precision | recall | F1 | support |
|---|---|---|---|---|
| **overall (micro)** | **{ov['precision']:.3f}** | **{ov['recall']:.3f}** | **{ov['f1']:.3f}** | {ov['support']} |
{rows}

{lenient_text(metrics)}{first_edition_text(cfg, metrics)}
**Against the project's quality bar** (issue 2: entity F1 >= {bar:.2f} on this split): {ov['f1']:.3f},
{"met" if ov['f1'] >= bar else "NOT met yet"}{margin_text(ov['f1'], bar)}{first_edition_bar(metrics, bar)}. Most remaining errors are {remaining_errors_text(task, metrics)}.
The third edition of words and templates moved the first edition's split by only 0.002-0.011 with the
transformer; with the convolutional encoder (the transformer scored {BEFORE_CONV_F1[name][1]:.3f}) unseen layouts cost
less, and more train templates still pay: half of the train templates cost clinical-ner 0.037, and the
fourth edition of templates raised the first three editions' split from {BEFORE_FOURTH_F1[name][1]:.3f} to
{BEFORE_WORDVEC_F1[name][1] if cfg.word_vectors else metrics.get('three_editions', metrics)['overall']['f1']:.3f} (`models/train/README.md`, "More templates"). {knowing_words_text(cfg)} `diagnose.py DIR {name} errors` counts what became of each held-out entity.

Produced by: `{argv}` (part of `bash models/train/run.sh {name}`).

Structured identifiers may additionally be caught by patterns at serving time; the figures here
are the model's own (network and CRF), without patterns.
"""
    with open(os.path.join(common.MODELS, name, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write(card)
