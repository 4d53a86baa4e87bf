"""What the recipe builds and how: one settings object per artifact (the shared vocabulary,
clinical-ner, pii, tiny-lm). Every number that decides a model lives here and the scripts
read it; HISTORY.md has what else was tried and what it scored.
"""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Augment:
    """How a corpus's train documents depart from templates filled from the word lists, so
    that a model learns from context and word shape rather than from the lists and the
    templates' exact wording (corpus.Corpus). Held-out documents have none of it. A share
    of 0 draws no random numbers."""
    # Share of word-list slots filled with an invented word (pseudo.Pseudo), never a
    # held-out one: a model trained on the lists alone memorises them.
    invented: float = 0.35
    # Share of literal template segments whose words may be swapped for words of other
    # train templates, and the chance of each word of such a segment being swapped.
    swap_segments: float = 0.0
    swap_words: float = 0.0
    # Share of context words replaced by made-up words (pseudo.Pseudo.plain_word). Held-out
    # templates are full of words no train template has; without this the network learns
    # that an unfamiliar word is an entity.
    novel: float = 0.0
    # Share of invented condition, procedure, anatomy and test slots filled instead with a
    # train entry that has one word invented (pseudo.Pseudo.mutate). Invented terms are
    # shorter than listed ones, and a network trained on them cuts unseen long terms short.
    mutate: float = 0.0
    # Share of clinical slots that hold two entities side by side or coordinated
    # (corpus.Corpus.fill): held-out templates join slots in ways train ones do not, and
    # where one entity ends must be read from the words.
    adjacent: float = 0.0


@dataclass(frozen=True)
class Vocab:
    """The shared cased WordPiece vocabulary (build_tokenizer.py)."""
    size: int = 5000
    # Train documents it is counted from, plus half as many tiny-lm passages.
    docs: int = 20000
    seed: int = 11
    # Editions of the word lists and templates its corpus draws from. Later template
    # editions only train and score the NER models, so adding one leaves the vocabulary,
    # tiny-lm and their conformance files as they were.
    editions: int = 3
    # No context swaps or made-up words: this corpus is about the words of clinical text.
    augment: Augment = Augment(invented=0.35)


@dataclass(frozen=True)
class WordVectors:
    """Pretrained word vectors read through the tokenizer (wordvec.py, nets.WordVecTagger).
    Most held-out errors were words never seen in training, and GloVe knows many of them
    from unlabelled text."""
    # Whole-word entries: the most frequent GloVe words, then those a ridge regression on
    # the vectors scores most like train entries' words, up to `words`.
    frequent: int = 20000
    words: int = 50000
    # Words of at most this many letters also get an upper-case entry (acronyms); more
    # would take the model directory past 10 MB.
    upper_max: int = 5
    # Dimensions the vectors are reduced to (PCA), stored as int8.
    dims: int = 64
    # Chance that a training word is cut with the shared pieces alone, as a word without
    # a vector is, so the network keeps reading words from their pieces.
    drop: float = 0.2
    # Chance that a training token that is a whole word among the shared entries reads the
    # pieces of a shorter cut with its vector (wordvec.sub_cut): its own learnt embedding
    # can carry its type by itself, which an unseen word's never does.
    piece_drop: float = 0.25


@dataclass(frozen=True)
class Ner:
    """One token-classification model (train_ner.py)."""
    name: str
    # Which spans of the corpus's documents it learns: "ner" (clinical) or "pii".
    task: str
    seed: int
    steps: int
    # Train documents, each drawn once: more of them with the same steps means fewer
    # repeats of one word in one template.
    train_docs: int
    augment: Augment
    # Share of entity tokens hidden behind [UNK] in training, so the label must come from
    # context; names and places are read mostly from context, so pii hides more.
    ent_unk: float
    # Chance, at each piece of a training word, of a shorter matching piece than the longest
    # (wordpiece.Tokenizer.encode's sample). The server cuts the one greedy way, and an
    # unseen word comes out as pieces the network has rarely read together.
    segment_q: float
    # The quality bar the card measures the held-out F1 against.
    bar: float
    # Networks trained apart (another initialisation and batch order each) and averaged
    # (nets.Averaged): their errors differ, so the mean scores above either. Side by side,
    # one core each, two networks' steps take about 1.5x one network's on two cores.
    members: int = 1
    word_vectors: Optional[WordVectors] = None
    # Whether this model's run writes models/testdata/golden/long.jsonl (one model does).
    long_goldens: bool = False
    # The network: nets.ConvTagger, dilated convolutions (30 tokens of context either side),
    # no feed-forward layers, no dropout.
    hidden: int = 128
    kernel: int = 3
    dilations: tuple = (1, 2, 4, 8, 1, 2, 4, 8)
    # Windows it is trained on and served with, [CLS] and [SEP] included (config.json's
    # max_position_embeddings; the network itself has no positions).
    max_positions: int = 128
    batch: int = 32
    lr: float = 2e-3
    warmup: int = 200
    # Share of other tokens hidden behind [UNK], so the model also learns from context.
    unk_drop: float = 0.04
    # The CRF scores start from the training labels' bigram log-frequencies, smoothed by
    # this, and learn this many times faster than the network.
    trans_smooth: float = 0.1
    trans_lr_scale: int = 5
    # Held-out documents the card's figures are measured on.
    eval_docs: int = 1500


@dataclass(frozen=True)
class Lm:
    """tiny-lm, the small causal LM (train_lm.py)."""
    seed: int = 303
    steps: int = 1000
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    ffn: int = 512
    max_pos: int = 256
    dropout: float = 0.0
    # Rows of packed passages it is trained on, in tokens.
    block: int = 64
    batch: int = 16
    lr: float = 2e-3
    warmup: int = 100
    train_passages: int = 40000
    eval_passages: int = 2000
    # Passages are noise-free narrative from the vocabulary's editions and its invented-word
    # share (lm_corpus.py).
    editions: int = 3
    augment: Augment = Augment(invented=0.35)
    # Greedy continuations written to the goldens and the card.
    new_tokens: int = 16
    prompts: tuple = ("The patient was started on", "She was admitted to", "Follow up with", "Assessment: likely",
                      "He denies chest pain and")


VOCAB = Vocab()

CLINICAL_NER = Ner(
    name="clinical-ner", task="ner", seed=101, steps=4500, train_docs=120000,
    augment=Augment(invented=0.35, swap_segments=0.3, swap_words=0.2, novel=0.05, mutate=0.5, adjacent=0.1),
    ent_unk=0.08, segment_q=0.1, bar=0.85, members=2, word_vectors=WordVectors(), long_goldens=True,
)

PII = Ner(
    name="pii", task="pii", seed=202, steps=5400, train_docs=40000,
    augment=Augment(invented=0.35, swap_segments=0.3, swap_words=0.2, novel=0.05),
    ent_unk=0.15, segment_q=0.1, bar=0.90,
)

NER = {m.name: m for m in (CLINICAL_NER, PII)}

TINY_LM = Lm()


@dataclass(frozen=True)
class Embed:
    """embed-mini and rerank-mini (train_embed.py): two small encoders over the shared
    vocabulary, trained on pairs of note lines written from one template."""
    hidden: int = 128
    layers: int = 2
    heads: int = 4
    ffn: int = 256
    max_pos: int = 128
    dropout: float = 0.1
    lr: float = 1e-3
    warmup: int = 100
    batch: int = 32
    # InfoNCE's temperature: in-batch negatives at cosine similarity.
    temperature: float = 0.05
    steps: int = 600
    # Train pairs rendered (a tenth as many held-out).
    pairs: int = 40000
    seed: int = 23
    # rerank-mini starts from embed-mini's encoder and trains this long, at this rate.
    rerank_steps: int = 1200
    rerank_lr: float = 5e-4


EMBED = Embed()
