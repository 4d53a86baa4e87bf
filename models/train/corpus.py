"""Synthetic clinical documents with character-level entity spans.

A document is composed from line/sentence templates (data/templates) of one of
several styles; slots are filled from word lists (data/words) or small
generators (dates, phones, doses...). Every filled slot records its span and
its label for both tasks: a clinical-ner label (DISEASE, MEDICATION, ...) and
a pii label (first_name, date, ...); a span has at most one of the two.

Templates and word lists are split into disjoint train and held-out parts;
Corpus("train") only ever draws from train parts, Corpus("heldout") only from
held-out ones. Noise (casing, typos, punctuation, spacing, run-on lines) is
applied while building, so spans stay exact.
"""

import random
import re

import corpus_data
import pseudo

# Slots whose invented words may instead be a train entry with one word invented
# (config.Augment.mutate): the terms that run to several words.
MUTABLE = {"COND", "PROC", "ANAT", "TEST"}
# Corpus.fill's two entities in one slot (config.Augment.adjacent): the slots that may hold
# them, and what joins two of one type (hyphens and slashes too: `Avodart/Stelara`) or of two.
ADJACENT_SLOTS = ["COND", "MED", "PROC", "ANAT", "TEST"]
ADJACENT_SAME = [" "] * 4 + ["-"] * 2 + ["/", ", "] + [" and "] * 2
ADJACENT_OTHER = [" "] * 3 + [", "] + [" and "] * 2

NER_LABELS = ["DISEASE", "MEDICATION", "DOSAGE", "FREQUENCY", "ROUTE", "PROCEDURE",
              "ANATOMY", "TEST", "TEST_RESULT"]
PII_LABELS = ["first_name", "last_name", "date", "age", "phone_number", "fax_number", "email",
              "street_address", "city", "state", "postcode", "medical_record_number", "ssn",
              "account_number", "url", "company_name"]

# slot -> (task, label)
SLOT_LABEL = {
    "FIRST": ("pii", "first_name"), "LAST": ("pii", "last_name"), "DATE": ("pii", "date"),
    "AGE": ("pii", "age"), "PHONE": ("pii", "phone_number"), "FAX": ("pii", "fax_number"),
    "EMAIL": ("pii", "email"), "ADDRESS": ("pii", "street_address"), "CITY": ("pii", "city"),
    "STATE": ("pii", "state"), "ZIP": ("pii", "postcode"), "MRN": ("pii", "medical_record_number"),
    "SSN": ("pii", "ssn"), "ACCT": ("pii", "account_number"), "URL": ("pii", "url"),
    "HOSP": ("pii", "company_name"), "PHARM": ("pii", "company_name"),
    "COND": ("ner", "DISEASE"), "MED": ("ner", "MEDICATION"), "DOSE": ("ner", "DOSAGE"),
    "FREQ": ("ner", "FREQUENCY"), "ROUTE": ("ner", "ROUTE"), "PROC": ("ner", "PROCEDURE"),
    "ANAT": ("ner", "ANATOMY"), "TEST": ("ner", "TEST"), "RESULT": ("ner", "TEST_RESULT"),
}

_ALT = re.compile(r"<([^<>]*)>")
_SLOT = re.compile(r"\{([A-Z_]+)\}")
# {SLOT=text}: text the template writes itself that is an entity of the slot's label
# ("Allergy: {MED} - {COND=nausea}"), so that gold spans hold every clinical entity of a
# sentence, not only the filled ones. Marks draw no random numbers: the text is as written.
MARK = re.compile(r"\{([A-Z_]+)=([^{}<>|]*)\}")


def strip_marks(s):
    """(s with each {SLOT=text} written as its text, [(start, end, slot)] of those texts)."""
    out, marks, pos = "", [], 0
    for m in MARK.finditer(s):
        out += s[pos:m.start()]
        marks.append((len(out), len(out) + len(m.group(2)), m.group(1)))
        out += m.group(2)
        pos = m.end()
    return out + s[pos:], marks

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
LAB_UNITS = ["mg/dL", "mmol/L", "g/dL", "%", "U/L", "ng/mL", "pg/mL", "mEq/L", "K/uL",
             "x10^9/L", "mIU/L", "IU/L", "mm/hr", "bpm", "mmHg", "/min", "kg/m2", "ng/dL", "cells/uL"]
DOSE_UNITS_EXTRA = ["tablet", "tablets", "puffs", "drops", "mL", "capsule", "patch", "g"]
TLDS = ["com", "org", "net", "health", "us", "ca", "co.uk", "de", "io"]


def template_words(pools):
    """The literal words of the given templates (slots and alternations
    expanded), sorted so a seed always draws the same ones."""
    words = set()
    for pool in pools.values():
        for t in pool:
            t = _SLOT.sub(" ", _ALT.sub(lambda m: " ".join(m.group(1).split("|")), strip_marks(t)[0]))
            words.update(w for w in t.split() if w.isalpha())
    return sorted(words)


def _ascii(s):
    table = {"ß": "ss", "ø": "o", "ł": "l", "đ": "d", "þ": "th", "ð": "d", "æ": "ae", "œ": "oe", "ı": "i"}
    out = []
    import unicodedata
    for ch in s.lower():
        if ch in table:
            out.append(table[ch])
            continue
        d = unicodedata.normalize("NFKD", ch)
        out.append("".join(c for c in d if c.isascii() and c.isalnum()))
    return "".join(out)


class Builder:
    """Accumulates text pieces and the spans of labelled ones."""

    def __init__(self):
        self.pieces = []  # (text, task, label)

    def add(self, text, task=None, label=None):
        if text:
            self.pieces.append((text, task, label))

    def build(self, case=None):
        text, spans = [], []
        pos = 0
        for t, task, label in self.pieces:
            if case == "lower":
                t = t.lower()
            elif case == "upper":
                t = t.upper()
            if task is not None:
                spans.append((pos, pos + len(t), task, label))
            text.append(t)
            pos += len(t)
        return "".join(text), spans


class Corpus:
    """Generates documents from one split ("train" or "heldout"), from the first `editions`
    editions of the word lists and templates (1: the first only, as the first models saw;
    None: all). Train documents depart from the templates as `augment` (a config.Augment)
    says; without it, and in held-out documents, every slot holds a listed entry. noise
    (typos, casing, punctuation, spacing) applies to both splits."""

    def __init__(self, split, seed=0, editions=None, noise=True, augment=None):
        self.split = split
        self.noise = noise
        self.rng = random.Random(seed)
        splits = corpus_data.word_splits(editions)
        self.words = splits[split]
        self.pools = corpus_data.template_splits(editions)[split]
        for pool in self.pools.values():
            for t in pool:
                for m in MARK.finditer(t):
                    if SLOT_LABEL.get(m.group(1), ("",))[0] != "ner":
                        raise ValueError(f"template mark {{{m.group(1)}=...}}: not a clinical slot")
        if split == "train":
            # A mark must not teach a held-out word's label: in train templates, marked text
            # that holds a word only held-out entries have stays unlabelled.
            import wordvec
            held = wordvec.entry_words(splits["heldout"]) - wordvec.entry_words(splits["train"])

            def unmark(m):
                words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", m.group(2))}
                return m.group(2) if words & held else m.group(0)
            self.pools = {k: [MARK.sub(unmark, t) for t in v] for k, v in self.pools.items()}
        aug = augment if split == "train" and augment is not None else None
        self.pseudo = pseudo.Pseudo(self.rng, splits["heldout"]) if aug else None
        self.pseudo_p = aug.invented if aug else 0
        self.mutate_p = aug.mutate if aug else 0
        self.adjacent_p = aug.adjacent if aug else 0
        self.swap_segments = aug.swap_segments if aug else 0
        self.swap_words = aug.swap_words if aug else 0
        self.novel_p = aug.novel if aug else 0
        self.context_words = template_words(self.pools) if self.swap_segments else None
        if self.novel_p:
            self.pseudo.set_context_words(template_words(self.pools), splits)

    # ---- slot generators -------------------------------------------------
    def pick(self, name):
        if self.pseudo is not None and self.rng.random() < self.pseudo_p:
            if self.mutate_p and name in MUTABLE and self.rng.random() < self.mutate_p:
                return self.pseudo.mutate(self.rng.choice(self.words[name]), name)
            w = self.pseudo.fill(name)
            if w is not None:
                return w
        return self.rng.choice(self.words[name])

    def typo(self, w):
        r = self.rng
        if len(w) < 4:
            return w
        i = r.randrange(1, len(w) - 1)
        k = r.randrange(4)
        if k == 0:
            return w[:i] + w[i + 1] + w[i] + w[i + 2:]
        if k == 1:
            return w[:i] + w[i + 1:]
        if k == 2:
            return w[:i] + w[i] + w[i:]
        return w[:i] + r.choice("aeiourstnl") + w[i + 1:]

    def lexical(self, name, capital_p=0.08):
        w = self.pick(name)
        r = self.rng
        if self.noise:
            if r.random() < 0.03:
                parts = w.split(" ")
                j = r.randrange(len(parts))
                parts[j] = self.typo(parts[j])
                w = " ".join(parts)
            x = r.random()
            if x < capital_p:
                w = w[0].upper() + w[1:]
            elif x < capital_p + 0.02:
                w = w.upper()
            elif x < capital_p + 0.04 and name in ("MED", "COND"):
                w = w.lower()
        return w

    def date(self):
        r = self.rng
        y, m, d = r.randint(1930, 2029), r.randint(1, 12), r.randint(1, 28)
        mon = MONTHS[m - 1]
        f = r.randrange(12)
        return [
            f"{m:02d}/{d:02d}/{y}", f"{m}/{d}/{y % 100:02d}", f"{y}-{m:02d}-{d:02d}",
            f"{mon} {d}, {y}", f"{d} {mon} {y}", f"{mon[:3]} {d} {y}", f"{d:02d}.{m:02d}.{y}",
            f"{d}-{mon[:3]}-{y}", f"{mon[:3]}. {d}, {y}", f"{m}/{d}/{y}", f"{d}/{m}/{y}",
            f"{mon} {y}",
        ][f]

    def phone(self):
        r = self.rng
        a, b, c = r.randint(201, 989), r.randint(200, 999), r.randint(0, 9999)
        f = r.randrange(9)
        return [
            f"({a}) {b}-{c:04d}", f"{a}-{b}-{c:04d}", f"{a}.{b}.{c:04d}", f"+1 {a} {b} {c:04d}",
            f"{a}{b}{c:04d}", f"{a} {b} {c:04d}", f"+1-{a}-{b}-{c:04d}",
            f"+44 {r.randint(20, 79)} {r.randint(1000, 9999)} {r.randint(1000, 9999)}",
            f"{b}-{c:04d}",
        ][f]

    def person_token(self, kind):
        w = self.pick(kind)
        if self.noise:
            x = self.rng.random()
            if x < 0.03:
                w = w.upper()
            elif x < 0.05:
                w = w.lower()
            elif x < 0.06:
                w = self.typo(w)
        return w

    def email(self):
        r = self.rng
        f, l = _ascii(self.pick("FIRST")), _ascii(self.pick("LAST"))
        user = r.choice([f"{f}.{l}", f"{f[0]}{l}", f"{f}{r.randint(1, 99)}", f"{l}.{f}", f"{f}_{l}",
                         f"{f[0]}.{l}{r.randint(1, 9)}"])
        dom = r.choice([_ascii(self.pick("HOSP_HEAD")) + "health", _ascii(self.pick("LAST")) + "mail",
                        "mail", "inbox", "post", _ascii(self.pick("CITY")) + "clinic", "webmail"])
        return f"{user}@{dom}.{r.choice(TLDS)}"

    def url(self):
        r = self.rng
        dom = r.choice([_ascii(self.pick("HOSP_HEAD")) + "health", _ascii(self.pick("CITY")) + "medical",
                        _ascii(self.pick("LAST")) + "clinic", "mychart." + _ascii(self.pick("HOSP_HEAD"))])
        path = r.choice(["", "/", "/portal", "/patients/login", "/appointments", "/results?id=" + str(r.randint(100, 99999)),
                         "/forms/intake.pdf", "/billing"])
        pre = r.choice(["https://", "http://", "https://www.", "www.", ""])
        return f"{pre}{dom}.{r.choice(TLDS)}{path}"

    def address(self):
        r = self.rng
        s = f"{r.randint(1, 9999)} {self.pick('STREET_NAME')} {self.pick('STREET_TYPE')}"
        if r.random() < 0.2:
            s = f"{r.randint(1, 999)} {r.choice(['N', 'S', 'E', 'W', 'North', 'West'])} {self.pick('STREET_NAME')} {self.pick('STREET_TYPE')}"
        if r.random() < 0.25:
            s += r.choice([", Apt ", " Apt. ", ", Suite ", " Unit ", " #"]) + r.choice(
                [str(r.randint(1, 999)), f"{r.randint(1, 30)}{r.choice('ABCD')}"])
        return s

    def zipcode(self):
        r = self.rng
        f = r.randrange(5)
        if f < 3:
            return f"{r.randint(1000, 99999):05d}"
        if f == 3:
            return f"{r.randint(1000, 99999):05d}-{r.randint(0, 9999):04d}"
        L = "ABCEGHJKLMNPRSTVXY"
        return f"{r.choice(L)}{r.randint(0, 9)}{r.choice(L)} {r.randint(0, 9)}{r.choice(L)}{r.randint(0, 9)}"

    def mrn(self):
        r = self.rng
        f = r.randrange(6)
        return [
            str(r.randint(1000000, 99999999)), f"{r.randint(0, 9999999):08d}",
            f"{r.choice('ABCDEFGHKMRXZ')}{r.randint(100000, 9999999)}",
            f"MR-{r.randint(2000, 2029)}-{r.randint(0, 999999):06d}",
            f"{r.randint(100, 999)}-{r.randint(100, 999)}-{r.randint(100, 999)}",
            f"{r.randint(10, 99)}{r.choice('ABCDEFGHJKLMNP')}{r.randint(10000, 99999)}",
        ][f]

    def ssn(self):
        r = self.rng
        a, b, c = r.randint(100, 899), r.randint(10, 99), r.randint(1000, 9999)
        return r.choice([f"{a}-{b}-{c}", f"{a} {b} {c}", f"{a}{b}{c}", f"xxx-xx-{c}", f"***-**-{c}"])

    def account(self):
        r = self.rng
        f = r.randrange(5)
        return [
            f"{r.randint(1000, 9999)}-{r.randint(1000, 9999)}-{r.randint(1000, 9999)}",
            f"ACC-{r.randint(100000, 9999999)}", f"{r.randint(10000000, 9999999999)}",
            f"{r.choice(['BC', 'HP', 'INS', 'AC', 'UHC'])}{r.randint(100000, 99999999)}",
            f"{r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{r.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{r.randint(1000, 999999)}-{r.randint(10, 99)}",
        ][f]

    def hospital(self):
        r = self.rng
        f = r.randrange(5)
        if f < 3:
            return f"{self.pick('HOSP_HEAD')} {self.pick('HOSP_TAIL')}"
        if f == 3:
            return f"{self.pick('CITY')} {self.pick('HOSP_TAIL')}"
        return f"{self.pick('LAST')} {r.choice(['Clinic', 'Medical Group', 'Family Practice', 'Health Center'])}"

    def pharmacy(self):
        r = self.rng
        return r.choice([f"{self.pick('LAST')} Pharmacy", f"{self.pick('CITY')} Drugs",
                         f"{self.pick('HOSP_HEAD')} Pharmacy"])

    def dose(self):
        r = self.rng
        n = r.choice([str(r.choice([1, 2, 2.5, 5, 10, 12.5, 20, 25, 40, 50, 75, 80, 100, 125, 150, 200,
                                    250, 300, 325, 400, 500, 600, 650, 750, 800, 875, 1000, 2000])),
                      f"0.{r.randint(1, 9)}", str(r.randint(1, 60))])
        u = r.choice(self.words["UNIT"] + DOSE_UNITS_EXTRA) if r.random() < 0.85 else "mg"
        if u in ("tablet", "tablets", "capsule", "puffs", "drops", "patch"):
            n = str(r.randint(1, 4))
        sep = "" if (r.random() < 0.15 and u in ("mg", "mcg", "g", "mL")) else " "
        return f"{n}{sep}{u}"

    def result(self):
        r = self.rng
        f = r.randrange(6)
        if f == 0:
            return f"{r.randint(80, 200)}/{r.randint(40, 110)}" + r.choice([" mmHg", "", " mm Hg"])
        if f == 1:
            return f"{r.randint(35, 41)}.{r.randint(0, 9)}" + r.choice([" C", " °C", "C", " F"])
        if f == 2:
            return f"{r.randint(80, 100)}%"
        v = r.choice([str(r.randint(1, 400)), f"{r.randint(0, 40)}.{r.randint(0, 9)}", f"{r.randint(0, 9)}.{r.randint(0, 99):02d}",
                      f"<{r.randint(1, 10)}", f">{r.randint(100, 1000)}"])
        return f"{v} {r.choice(LAB_UNITS)}" if r.random() < 0.85 else v

    def fill(self, slot, b, line_start):
        """Writes a filled slot to b. With adjacent_p, a clinical slot sometimes holds two
        entities, its own and one of a random clinical type before or after it, side by side
        or coordinated (`Lyrica-Zosyn`, `spleen and breast`), each with its label:
        coordinations are common in notes, and the network must find where one entity ends
        from the words, not from a template."""
        if not (self.adjacent_p and slot in ADJACENT_SLOTS and self.rng.random() < self.adjacent_p):
            self.fill_one(slot, b, line_start)
            return
        r = self.rng
        other = r.choice(ADJACENT_SLOTS)
        joiner = r.choice(ADJACENT_SAME if other == slot else ADJACENT_OTHER)
        first, second = (other, slot) if r.random() < 0.5 else (slot, other)
        self.fill_one(first, b, line_start)
        b.add(joiner)
        self.fill_one(second, b, False)

    def fill_one(self, slot, b, line_start):
        r = self.rng
        if slot == "NAME":
            first, last = self.person_token("FIRST"), self.person_token("LAST")
            f = r.randrange(10)
            if f == 0:
                b.add(r.choice(["Mr. ", "Ms. ", "Mrs. ", "Dr. "]))
                b.add(first, "pii", "first_name")
                b.add(" ")
                b.add(last, "pii", "last_name")
            elif f == 1:
                b.add(last, "pii", "last_name")
                b.add(", ")
                b.add(first, "pii", "first_name")
            elif f == 2:
                b.add(first, "pii", "first_name")
                b.add(" ")
                b.add(last + "-" + self.person_token("LAST"), "pii", "last_name")
            elif f == 3:
                b.add(last.upper(), "pii", "last_name")
                b.add(", ")
                b.add(first, "pii", "first_name")
            else:
                b.add(first, "pii", "first_name")
                b.add(" ")
                b.add(last, "pii", "last_name")
            return
        if slot in ("N",):
            b.add(str(r.choice([1, 2, 3, 4, 5, 6, 7, 10, 14, 2, 3])))
            return
        if slot == "TIME":
            b.add(r.choice([f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}", f"{r.randint(1, 12)} {r.choice(['am', 'pm', 'AM', 'PM'])}"]))
            return
        task, label = SLOT_LABEL[slot]
        if slot in ("FIRST", "LAST"):
            text = self.person_token(slot)
        elif slot == "DATE":
            text = self.date()
        elif slot == "AGE":
            text = str(r.choice([r.randint(18, 95), r.randint(1, 17), r.randint(40, 89)]))
        elif slot in ("PHONE", "FAX"):
            text = self.phone()
        elif slot == "EMAIL":
            text = self.email()
        elif slot == "URL":
            text = self.url()
        elif slot == "ADDRESS":
            text = self.address()
        elif slot == "CITY":
            text = self.pick("CITY")
        elif slot == "STATE":
            text = self.pick("STATE")
        elif slot == "ZIP":
            text = self.zipcode()
        elif slot == "MRN":
            text = self.mrn()
        elif slot == "SSN":
            text = self.ssn()
        elif slot == "ACCT":
            text = self.account()
        elif slot == "HOSP":
            text = self.hospital()
        elif slot == "PHARM":
            text = self.pharmacy()
        elif slot == "DOSE":
            text = self.dose()
        elif slot == "RESULT":
            text = self.result()
        elif slot in ("ROUTE", "FREQ"):
            text = self.pick(slot)
        else:
            text = self.lexical(slot, capital_p=0.5 if line_start else 0.06)
        b.add(text, task, label)

    def noisy_o(self, s, changed=None):
        """Typos and abbreviation-free noise on unlabelled text. In training
        documents some context words are also swapped for words from other
        templates, so the model cannot lean on a template's exact wording.
        With a list `changed`, it gets one entry per space-separated word: None when the word
        is as written, "typo", or "replaced" (another word took its place)."""
        words = s.split(" ")
        if changed is not None:
            changed[:] = [None] * len(words)
        if not self.noise:
            return s
        r = self.rng
        swap = self.context_words is not None and r.random() < self.swap_segments
        novel = self.novel_p > 0
        # With novel words on, every segment's words are candidates (for typos too).
        if swap or novel or r.random() < 0.15:
            for i, w in enumerate(words):
                if not w.isalpha():
                    continue
                if novel and r.random() < self.novel_p:
                    words[i], kind = self.pseudo.plain_word(w), "replaced"
                elif swap and r.random() < self.swap_words:
                    words[i], kind = r.choice(self.context_words), "replaced"
                elif r.random() < 0.08:
                    words[i], kind = self.typo(w), "typo"
                else:
                    continue
                if changed is not None:
                    changed[i] = kind
            s = " ".join(words)
        return s

    def literal(self, seg, marks, b):
        """Writes a template's literal text to b with noisy_o, and the marked parts of it
        (marks: [(start, end, slot)] within seg) as entities. A marked word that noise
        replaced loses its label; one with a typo keeps it, as slot fills do."""
        if not marks:
            b.add(self.noisy_o(seg))
            return
        changed = []
        out = self.noisy_o(seg, changed)
        words, got = seg.split(" "), out.split(" ")
        starts, got_starts, a, g = [], [], 0, 0
        for w, x in zip(words, got):
            starts.append(a)
            got_starts.append(g)
            a, g = a + len(w) + 1, g + len(x) + 1
        spans = []
        for start, end, slot in marks:
            first = max(i for i in range(len(words)) if starts[i] <= start)
            last = max(i for i in range(len(words)) if starts[i] < end)
            kinds = changed[first:last + 1]
            if "replaced" in kinds:
                continue
            if any(kinds):
                # A typo moves the characters after it, so the span must be whole words.
                if start != starts[first] or end != starts[last] + len(words[last]):
                    continue
                spans.append((got_starts[first], got_starts[last] + len(got[last]), slot))
            else:
                spans.append((got_starts[first] + start - starts[first],
                              got_starts[last] + end - starts[last], slot))
        pos = 0
        for start, end, slot in spans:
            b.add(out[pos:start])
            b.add(out[start:end], *SLOT_LABEL[slot])
            pos = end
        b.add(out[pos:])

    def render(self, tmpl, b):
        """Expands alternations, then writes literal text and slot fills to b."""
        r = self.rng
        s, marks = strip_marks(_ALT.sub(lambda m: r.choice(m.group(1).split("|")), tmpl))
        if self.noise:
            x = r.random()
            if x < 0.08 and s.endswith("."):
                s = s[:-1]
            elif x < 0.11 and s.endswith("."):
                s = s[:-1] + r.choice(["..", " .", ";"])
            elif x < 0.4 and s.endswith("}"):
                # Entities at a sentence end meet punctuation that is not theirs.
                s += r.choice([".", ".", ",", ";", ":", ")", " .", "!", "?"])
            # A mark that ended in the dropped full stop ends before it.
            marks = [(a, min(e, len(s)), slot) for a, e, slot in marks if a < min(e, len(s))]
        pos = 0
        for m in _SLOT.finditer(s):
            self.literal(s[pos:m.start()], [(a - pos, e - pos, k) for a, e, k in marks if pos <= a and e <= m.start()], b)
            self.fill(m.group(1), b, m.start() == 0)
            pos = m.end()
        self.literal(s[pos:], [(a - pos, e - pos, k) for a, e, k in marks if pos <= a], b)

    # ---- documents --------------------------------------------------------
    def lines(self, b, pool, n, sep="\n", numbered=False, bullets=None):
        for i in range(n):
            if i > 0:
                b.add(sep)
            if numbered:
                b.add(f"{i + 1}. " if self.rng.random() < 0.8 else f"{i + 1}) ")
            elif bullets:
                b.add(bullets)
            self.render(self.rng.choice(self.pools[pool]), b)

    def heading(self, b, options):
        h = self.rng.choice(options)
        r = self.rng.random()
        if r < 0.3:
            h = h.upper()
        b.add(h + self.rng.choice([":\n", ":\n", ": ", "\n", ":\n\n"]))

    def nl(self, b):
        b.add(self.rng.choice(["\n", "\n", "\n\n", " ", "\n"]) if self.noise else "\n")

    def doc(self, style=None):
        r = self.rng
        b = Builder()
        style = style or r.choice(["progress", "progress", "discharge", "letter", "message", "message",
                                   "lab", "lists", "admin", "header", "narrative", "narrative"])
        if style == "progress":
            if r.random() < 0.7:
                self.lines(b, "HEADER", r.randint(1, 4))
                self.nl(b)
            if r.random() < 0.5:
                self.heading(b, ["HPI", "History of Present Illness", "Subjective", "S"])
            self.lines(b, "NARRATIVE", r.randint(2, 6), sep=" ")
            self.nl(b)
            if r.random() < 0.5:
                self.heading(b, ["Assessment and Plan", "A/P", "Plan", "Assessment"])
                self.lines(b, "NARRATIVE", r.randint(1, 4), sep=r.choice([" ", "\n"]),
                           numbered=r.random() < 0.4)
        elif style == "discharge":
            b.add(r.choice(["DISCHARGE SUMMARY", "Discharge Summary", "Discharge summary"]) + "\n")
            self.lines(b, "HEADER", r.randint(2, 5))
            self.nl(b)
            self.heading(b, ["Diagnoses", "Discharge Diagnoses", "Problem List", "Active Problems"])
            self.lines(b, "LIST_ITEM", r.randint(1, 4), numbered=r.random() < 0.5, bullets=r.choice(["- ", "* ", "• ", ""]))
            self.nl(b)
            self.heading(b, ["Hospital Course", "Brief Hospital Course", "Course"])
            self.lines(b, "NARRATIVE", r.randint(2, 6), sep=" ")
            self.nl(b)
            self.heading(b, ["Discharge Medications", "Medications", "Meds", "Discharge Meds"])
            self.lines(b, "LIST_ITEM", r.randint(2, 6), numbered=r.random() < 0.4, bullets=r.choice(["- ", "* ", ""]))
            if r.random() < 0.6:
                self.nl(b)
                self.lines(b, "ADMIN", r.randint(1, 2), sep=" ")
        elif style == "letter":
            self.lines(b, "HEADER", r.randint(0, 3))
            self.nl(b)
            self.render(r.choice([t for t in self.pools["LETTER"] if t.startswith("Dear")] or self.pools["LETTER"]), b)
            b.add("\n\n")
            self.lines(b, "LETTER", r.randint(1, 3), sep=" ")
            b.add(" ")
            self.lines(b, "NARRATIVE", r.randint(1, 3), sep=" ")
            b.add(" ")
            self.lines(b, "ADMIN", r.randint(0, 2), sep=" ")
            b.add("\n\n")
            self.lines(b, "LETTER", r.randint(1, 3))
        elif style == "message":
            self.lines(b, "MESSAGE", r.randint(1, 4), sep=r.choice([" ", "\n", ". ", "  "]))
            if r.random() < 0.3:
                b.add(" ")
                self.lines(b, "ADMIN", 1)
            text, spans = b.build(case="lower" if r.random() < 0.35 and self.noise else None)
            return text, spans
        elif style == "lab":
            if r.random() < 0.7:
                self.lines(b, "HEADER", r.randint(1, 3))
                self.nl(b)
            self.heading(b, ["Labs", "Laboratory Results", "Results", "Vitals", "Pertinent Results"])
            self.lines(b, "LAB", r.randint(2, 8), sep=r.choice(["\n", "\n", "; ", ", "]))
        elif style == "lists":
            self.heading(b, ["Problem List", "PMH", "Past Medical History", "Active Problems"])
            self.lines(b, "LIST_ITEM", r.randint(2, 6), numbered=r.random() < 0.5, bullets=r.choice(["- ", "* ", ""]))
            self.nl(b)
            self.heading(b, ["Medications", "Current Medications", "Home Meds", "Outpatient Medications"])
            self.lines(b, "LIST_ITEM", r.randint(2, 6), numbered=r.random() < 0.3, bullets=r.choice(["- ", "* ", ""]))
        elif style == "admin":
            self.lines(b, "ADMIN", r.randint(1, 4), sep=r.choice([" ", "\n"]))
        elif style == "header":
            self.lines(b, "HEADER", r.randint(2, 7), sep=r.choice(["\n", "\n", "  ", " | "]))
        else:
            self.lines(b, "NARRATIVE", r.randint(1, 5), sep=" ")
        case = None
        if self.noise:
            x = r.random()
            if x < 0.03:
                case = "lower"
            elif x < 0.045:
                case = "upper"
        return b.build(case)
