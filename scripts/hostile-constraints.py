#!/usr/bin/env python3
"""Clients whose every answer's masks are new: each request to TGI's /generate carries a regular
expression of its own, many optional characters long, so that every token's mask is a walk of
the whole vocabulary (about 4 ms each on tiny-lm). Run beside a load to see what a constrained
answer's masks cost the other streams.

    hostile-constraints.py URL SECONDS [CLIENTS, default 2]
"""
import json
import sys
import threading
import time
import urllib.request

url, secs = sys.argv[1], float(sys.argv[2])
clients = int(sys.argv[3]) if len(sys.argv) > 3 else 2
end = time.time() + secs
served, failed = [0] * clients, [0] * clients


def client(c):
    n = 0
    while time.time() < end:
        n += 1
        pattern = "(?:[ -~]?){300}" + f"z{c}_{n}"  # a new Index a request
        body = {"inputs": "Patient", "parameters": {"max_new_tokens": 64, "grammar": {"type": "regex", "value": pattern}}}
        req = urllib.request.Request(url + "/generate", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=120).read()
            served[c] += 1
        except Exception:
            failed[c] += 1


threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"constrained requests beside the load: {sum(served)} served, {sum(failed)} failed", file=sys.stderr)
