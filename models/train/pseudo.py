"""Made-up but plausible words for entity slots of TRAINING documents.

A model trained only on fixed word lists memorises the lists and fails on
words it never saw. Filling a share of the train slots with invented words
(syllable-built names and places, drug-like stems with real drug suffixes,
disease and procedure words from medical roots and affixes) forces it to use
context, casing and word shape. Invented words that equal a held-out word (or
one of its space-separated parts) are rejected, so no held-out word reaches
training through this path.
"""

ONSETS = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kr", "l", "m", "n", "p", "pr", "r",
          "s", "sh", "st", "t", "tr", "v", "w", "z", "", "", "th", "bl", "fl", "sl", "y", "ł", "ž", "š"]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ei", "ou", "ia", "é", "ö", "ü", "á", "í", "ø", "y"]
CODAS = ["", "", "", "n", "r", "s", "l", "m", "t", "k", "nd", "rt", "st", "ng", "x", "z", "ck", "sh"]
NAME_ENDS = ["", "", "a", "o", "son", "sen", "ez", "ski", "ova", "ić", "ian", "ini", "er", "ton", "ley", "ard",
             "ek", "us", "ine", "elle", "ov", "ato", "ui", "oglu", "dóttir", "escu"]
PLACE_ENDS = ["ville", "ton", "burg", "field", "port", "wood", "dale", " Falls", " Springs", "ford", "haven",
              "mouth", " City", "stadt", "ów", "heim", "bury", "chester"]
PLACE_HEADS = ["Port ", "San ", "Lake ", "North ", "East ", "Mount ", "New ", "Santa ", "Saint ", "Fort ", "", "", "", ""]

DRUG_SUFFIXES = ["pril", "sartan", "olol", "statin", "mab", "nib", "azole", "mycin", "cillin", "floxacin", "tidine",
                 "prazole", "dipine", "gliptin", "gliflozin", "glutide", "parin", "xaban", "triptan", "setron", "zepam",
                 "oxetine", "apine", "done", "codone", "caine", "vir", "tide", "lukast", "olone", "sone", "terol",
                 "dronate", "ine", "ide", "ate", "amide", "profen", "fenac", "lol", "zolam", "tropium", "barb",
                 "cycline", "conazole", "platin", "taxel", "rubicin", "umab", "ximab", "zumab", "tinib", "lamide"]
DRUG_STEMS = ["ab", "ac", "al", "am", "an", "ar", "at", "ben", "bis", "bro", "cal", "can", "car", "cef", "cel", "cet",
              "clo", "dal", "dex", "di", "dox", "em", "en", "es", "eto", "fam", "fen", "flu", "gal", "gli", "hal",
              "ima", "ir", "ket", "lab", "lan", "lev", "lo", "mel", "met", "mir", "mon", "nad", "nal", "ni", "nor",
              "ol", "om", "ox", "pan", "par", "pen", "pra", "pro", "que", "ral", "ram", "ris", "ros", "sal", "ser",
              "sit", "sol", "sul", "ta", "tel", "ter", "ti", "tol", "tra", "val", "ven", "vo", "zal", "zi", "zol"]
ROOTS = ["cardi", "hepat", "nephr", "neur", "gastr", "arthr", "derm", "oste", "my", "encephal", "pneum", "col",
         "cyst", "thyr", "aden", "angi", "bronch", "pancreat", "splen", "vascul", "lymph", "rhin", "ot", "ophthalm",
         "pharyng", "laryng", "trache", "esophag", "duoden", "ile", "rect", "prostat", "mast", "metr", "oophor",
         "salping", "chol", "cholangi", "pyel", "ur", "ureter", "urethr", "vesic", "spondyl", "tendin", "burs",
         "fasci", "cellul", "mening", "myel", "retin", "kerat", "blephar", "sial", "gingiv", "gloss", "stomat",
         "phleb", "aort", "pericardi", "endocardi", "pleur", "perit", "append", "diverticul", "sinus", "tonsill"]
DISEASE_SUFFIXES = ["itis", "osis", "emia", "oma", "opathy", "algia", "ectasis", "megaly", "sclerosis", "plasia",
                    "rrhea", "iasis", "ocele", "ospasm", "ostenosis"]
DISEASE_FRAMES = ["{} disease", "{} syndrome", "chronic {}", "acute {}", "{} deficiency", "{} insufficiency",
                  "{} failure", "{} cancer", "{} infection", "{} disorder", "recurrent {}", "{} injury",
                  "{} of unclear etiology", "{} stenosis", "{} carcinoma", "primary {}", "{} ulcer", "{} cyst"]
ADJ = ["acute", "chronic", "mild", "severe", "bilateral", "recurrent", "idiopathic", "congenital", "benign",
       "malignant", "atypical", "diffuse", "focal", "intermittent", "progressive", "secondary"]
PROC_SUFFIXES = ["ectomy", "otomy", "oscopy", "oplasty", "ostomy", "orrhaphy", "opexy", "ography", "ocentesis",
                 "olysis", "otripsy"]
PROC_FRAMES = ["{} biopsy", "{} repair", "{} resection", "{} ablation", "{} reconstruction", "{} drainage",
               "{} transplant", "{} embolization", "{} stent placement", "laparoscopic {}", "robotic {}",
               "open {}", "{} injection", "{} bypass", "{} release", "{} therapy", "{} scan"]
ANAT_WORDS = ["lobe", "wall", "ligament", "tendon", "muscle", "artery", "vein", "nerve", "duct", "gland", "bone",
              "joint", "fossa", "sinus", "canal", "cortex", "capsule", "membrane", "valve", "node", "process",
              "space", "region", "segment", "horn", "root", "arch", "tract", "plexus", "recess"]
ANAT_ADJ = ["left", "right", "upper", "lower", "anterior", "posterior", "medial", "lateral", "proximal", "distal",
            "superior", "inferior", "deep", "superficial", "bilateral"]
TEST_FRAMES = ["serum {}", "{} level", "{} panel", "urine {}", "{} antibody", "{} antigen", "{} assay",
               "{} titer", "plasma {}", "{} clearance", "{} ratio", "{} study", "{} index", "free {}",
               "fasting {}", "{} screen", "{} culture"]
IMAGING = ["CT", "MRI", "ultrasound", "X-ray", "radiograph", "Doppler", "PET", "scintigraphy", "fluoroscopy",
           "angiography", "echo", "MRA", "CTA", "nuclear scan", "elastography"]


# Word ends of mutate's invented words that are not syllables.
MUTATE_ENDS = DISEASE_SUFFIXES + PROC_SUFFIXES + ["al", "ic", "ar", "ous", "in", "ase", "ine"]

# Affixes of plain_word's made-up context words.
PREFIXES = ["un", "re", "pre", "non", "over", "under", "co", "dis", "mis", "post", "sub"]
SUFFIXES = ["s", "ed", "ing", "er", "ers", "ly", "ment", "ation", "ive", "ist", "ness", "able", "al", "ity", "ize"]


class Pseudo:
    """Invents words for slots; rng is the corpus' random.Random."""

    def __init__(self, rng, heldout_lists):
        self.rng = rng
        # Every word of a held-out entry is banned, even one that train entries share
        # ("disease", "biopsy"), so most multi-word frames are rejected and invented terms
        # come out short (config.Augment.mutate makes up for that); banning only words no
        # train entry has scored lower for pii (HISTORY.md).
        banned = set()
        for items in heldout_lists.values():
            for w in items:
                banned.add(w.lower())
                for part in w.lower().split():
                    banned.add(part)
        self.banned = banned

    def _ok(self, fn):
        for _ in range(20):
            w = fn()
            parts = w.lower().split()
            if w.lower() not in self.banned and not any(p in self.banned for p in parts):
                return w
        return w + self.rng.choice(["ex", "ar", "on"])

    def syllables(self, lo, hi):
        r = self.rng
        return "".join(r.choice(ONSETS) + r.choice(VOWELS) + r.choice(CODAS) for _ in range(r.randint(lo, hi)))

    def name(self):
        def f():
            w = self.syllables(1, 3)
            if self.rng.random() < 0.5:
                w += self.rng.choice(NAME_ENDS)
            if len(w) < 2:
                w += "a"
            return w[0].upper() + w[1:]
        return self._ok(f)

    def place(self):
        def f():
            w = self.syllables(1, 2)
            w = w[0].upper() + w[1:] if w else "Ola"
            return self.rng.choice(PLACE_HEADS) + w + (self.rng.choice(PLACE_ENDS) if self.rng.random() < 0.6 else "")
        return self._ok(f)

    def drug(self):
        r = self.rng

        def f():
            w = "".join(r.choice(DRUG_STEMS) for _ in range(r.randint(1, 2))) + r.choice(DRUG_SUFFIXES)
            x = r.random()
            if x < 0.15:
                w = w[0].upper() + self.syllables(1, 1) + r.choice(["x", "ra", "za", "vo", "lin", "tec", "XR", "ix"])
                w = w[0].upper() + w[1:]
            elif x < 0.2:
                w = w + "-" + "".join(r.choice(DRUG_STEMS) for _ in range(1)) + r.choice(DRUG_SUFFIXES)
            return w
        return self._ok(f)

    def disease(self):
        r = self.rng

        def f():
            root = r.choice(ROOTS)
            x = r.random()
            if x < 0.45:
                w = root + r.choice(DISEASE_SUFFIXES)
                if r.random() < 0.3:
                    w = r.choice(ADJ) + " " + w
            elif x < 0.8:
                core = root + r.choice(["al", "ic", "ar", "ous", "ial"]) if r.random() < 0.6 else self.name()
                w = r.choice(DISEASE_FRAMES).format(core)
            else:
                w = self.name() + r.choice(["'s disease", " syndrome", "'s palsy", " disease"])
            return w
        return self._ok(f)

    def procedure(self):
        r = self.rng

        def f():
            root = r.choice(ROOTS)
            if r.random() < 0.55:
                w = root + r.choice(PROC_SUFFIXES)
                if r.random() < 0.25:
                    w = r.choice(["laparoscopic", "partial", "total", "bilateral", "diagnostic"]) + " " + w
                return w
            return r.choice(PROC_FRAMES).format(root + r.choice(["al", "ic", "ar", "o-" + r.choice(ROOTS) + "ic"]))
        return self._ok(f)

    def anatomy(self):
        r = self.rng

        def f():
            core = r.choice(ROOTS) + r.choice(["al", "ic", "ar", "eal", "ial"]) + " " + r.choice(ANAT_WORDS)
            if r.random() < 0.5:
                core = r.choice(ANAT_ADJ) + " " + core
            return core
        return self._ok(f)

    def test(self):
        r = self.rng

        def f():
            x = r.random()
            if x < 0.35:
                return "".join(r.choice("ABCDEFGHIKLMNPRSTVX") for _ in range(r.randint(2, 4)))
            if x < 0.7:
                core = self.syllables(1, 2) + r.choice(["in", "ase", "ol", "ide", "one", "ate", "ogen"])
                return r.choice(TEST_FRAMES).format(core)
            return r.choice(IMAGING) + " of the " + r.choice(ROOTS) + r.choice(["al", "ic"]) + " " + r.choice(ANAT_WORDS)
        return self._ok(f)

    def mutate(self, entry, slot):
        """A train entry with one of its words replaced by an invented word of like shape, so
        that invented terms are as long as listed ones and hold an unknown word among known
        ones, as held-out terms do. A one-word entry becomes a wholly invented one."""
        r = self.rng
        words = entry.split(" ")
        idx = [i for i, w in enumerate(words) if len(w) >= 3 and any(c.isalpha() for c in w)]
        if len(words) < 2 or not idx:
            return self.fill(slot)
        i = r.choice(idx)
        parts = words[i].split("-")
        j = r.randrange(len(parts))
        old = parts[j]
        for _ in range(20):
            if old.isupper() and len(old) <= 5:
                new = "".join(r.choice("ABCDEFGHIKLMNPRSTVX") for _ in range(max(2, len(old))))
            elif r.random() < 0.5:
                new = r.choice(ROOTS) + r.choice(MUTATE_ENDS)
            else:
                new = self.syllables(1, 3)
            if old[:1].isupper():
                new = new.upper() if old.isupper() and len(old) > 1 else new[0].upper() + new[1:]
            if new.isascii() and new.lower() not in self.banned:
                break
        else:
            return self.fill(slot)  # never a held-out word, even after 20 unlucky tries
        parts[j] = new
        words[i] = "-".join(parts)
        return " ".join(words)

    def hospital_head(self):
        r = self.rng
        return r.choice([self.name(), self.place(), "St. " + self.name(), self.name() + " Memorial"])

    def street(self):
        return self.name() if self.rng.random() < 0.6 else self.place()

    def set_context_words(self, words, splits):
        """Train template words, the stems of plain_word's affixed words; every word of the
        word lists (both splits) goes to self.listed, which plain_word never returns."""
        self.listed = {p.lower() for part in splits.values() for items in part.values() for w in items
                       for p in w.split()}
        self.stems = [w for w in words if len(w) > 3 and w.lower() not in self.listed]

    def plain_word(self, like):
        """A made-up word for plain text: syllables, or a train template word with an English
        affix ("recommend" -> "recommendation", "unrecommend"), so mostly a word that no
        template has (an affixed word may happen to be one). It is ASCII and never a word of
        the lists or a held-out word, unless all ten tries were; its first letter is upper
        case when like's is."""
        r = self.rng
        for _ in range(10):
            if r.random() < 0.5:
                w = self.syllables(1, 3)
            else:
                w = r.choice(self.stems).lower()
                if r.random() < 0.25:
                    w = r.choice(PREFIXES) + w
                else:
                    w = w.rstrip("e") + r.choice(SUFFIXES) if r.random() < 0.5 else w + r.choice(SUFFIXES)
            # ASCII only: accented letters stay a cue for names and places.
            if len(w) > 1 and w.isascii() and w.lower() not in self.listed and w.lower() not in self.banned:
                break
        return w[0].upper() + w[1:] if like[:1].isupper() else w

    def fill(self, slot):
        """An invented word for a word-list slot, or None if the slot has no generator."""
        g = {"FIRST": self.name, "LAST": self.name, "CITY": self.place, "STREET_NAME": self.street,
             "HOSP_HEAD": self.hospital_head, "COND": self.disease, "MED": self.drug, "PROC": self.procedure,
             "ANAT": self.anatomy, "TEST": self.test}.get(slot)
        return g() if g else None
