#!/usr/bin/env python3
"""Turn the JSON summaries of scripts/overload.sh into the markdown table docs/BENCHMARKS.md quotes.

Usage: scripts/overload_summary.py docs/bench/overload
"""
import json
import os
import sys


def load(folder, name):
    with open(os.path.join(folder, name + ".json")) as f:
        return json.load(f)


def cpu(folder, name):
    """Cores used by the server and the harness over a run, if recorded."""
    path = os.path.join(folder, name + ".cpu.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def main(folder):
    cap = load(folder, "capacity")
    c = cap["goodput"]["rps"]
    cap_cpu = cpu(folder, "capacity")
    print(f"Capacity C (closed loop at saturation): **{c:.0f} req/s** served, "
          f"p50 {cap['latency_ms']['p50']:.0f} ms, p99 {cap['latency_ms']['p99']:.0f} ms"
          + (f"; server {cap_cpu['server_cores']:.2f} cores, harness {cap_cpu['harness_cores']:.2f} cores" if cap_cpu else "")
          + ".\n")
    print("| run | offered req/s | goodput req/s | goodput / C | per server core, / C's | server cores | harness cores | served p50 ms | served p99 ms | refusal rate | refusals | retries admitted at suggested delay | mean suggested s | mean time to admission s | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in ["2x-drain_rate", "2x-static", "2x-drain_rate-no-tokens", "10x"]:
        if not os.path.exists(os.path.join(folder, name + ".json")):
            continue
        d = load(folder, name)
        r = d["retry"]
        fmt = lambda v, spec: "n/a" if v is None else format(v, spec)
        sugg = r.get("mean_first_suggested_delay_ms")
        adm = r.get("mean_time_to_admission_ms")
        u = cpu(folder, name)
        if u and cap_cpu and u["server_cores"] > 0:
            per_core = f"{(d['goodput']['rps'] / u['server_cores']) / (c / cap_cpu['server_cores']):.2f}"
            cores = f"{u['server_cores']:.2f} | {u['harness_cores']:.2f}"
        else:
            per_core, cores = "n/a", "n/a | n/a"
        print(f"| {name} | {d['offered']['rps']:.0f} | {d['goodput']['rps']:.0f} | {d['goodput']['rps'] / c:.2f} | "
              f"{per_core} | {cores} | "
              f"{d['latency_ms']['p50']:.0f} | {d['latency_ms']['p99']:.0f} | {d['refusal_rate']:.2f} | "
              f"{', '.join(f'{k}: {v}' for k, v in sorted(d['refusals'].items()))} | "
              f"{fmt(r.get('admitted_at_first_retry_ratio'), '.2f')} | {fmt(None if sugg is None else sugg / 1000, '.2f')} | "
              f"{fmt(None if adm is None else adm / 1000, '.2f')} | {fmt(r.get('time_to_admission_over_suggested'), '.2f')} |")
    un = load(folder, "unloaded-interactive")["latency_ms"]["p99"]
    ub = load(folder, "interactive-under-bulk")["latency_ms"]["p99"]
    bulk = load(folder, "bulk-saturation")
    print(f"\nInteractive p99: unloaded {un:.1f} ms; beside bulk saturation ({bulk['goodput']['rps']:.0f} bulk req/s served) "
          f"{ub:.1f} ms; bound 1.5 x unloaded + 20 ms = {1.5 * un + 20:.1f} ms.")
    with open(os.path.join(folder, "10x-rss-kb.txt")) as f:
        rss = [int(x) for x in f.read().split()]
    # Samples are one a second from the start of the load; the measured window starts after the
    # 10 s warmup.
    window = rss[10:70]
    if window:
        half = len(window) // 2
        grow = lambda a, b: (b - a) / a * 100
        print(f"\nRSS at 10x C over the measured 60 s: {window[0] / 1024:.0f} MB -> {window[-1] / 1024:.0f} MB "
              f"({grow(window[0], window[-1]):+.1f}%; first half {grow(window[0], window[half]):+.1f}%, "
              f"second half {grow(window[half], window[-1]):+.1f}%), max {max(window) / 1024:.0f} MB.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/bench/overload")
