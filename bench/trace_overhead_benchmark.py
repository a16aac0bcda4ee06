#!/usr/bin/env python3
"""What recording a trace costs the lc0 training pipeline.

    python3 bench/trace_overhead_benchmark.py out/release/bindings/cli/sluice \
        --rounds 20 --seconds 6 --threads 2
    python3 bench/trace_overhead_benchmark.py \
        out/release/bench/lc0_pipeline_benchmark --rounds 4 --threads 2

Runs `sluice bench pipeline` (the default lc0 training pipeline on the demo
data set; --seconds per run) or, given bench/lc0_pipeline_benchmark, that
benchmark (the same pipeline on its generated data, positions/s in steady
state; --batches per run) without and with `--trace`, interleaved and in
alternating order
(off on, on off, off on, ...) so that the machine's drift and whatever the
first run of a pair leaves the second hit both alike, and prints
positions/s of each
run, the ratio on/off of each round, their median and a 95 % confidence
interval of that median (from the order statistics, assuming nothing of
the noise's distribution: its lower end is the cost that the rounds rule
out). The trace of each traced run is written to a temporary directory;
its size and event count are printed too.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile


def bench(args, trace=None):
    """Positions/s of one run of args.binary, traced into `trace` if set."""
    lc0_benchmark = os.path.basename(args.binary) == "lc0_pipeline_benchmark"
    if lc0_benchmark:
        command = [args.binary, "--threads", str(args.threads),
                   "--batches", str(args.batches)]
    else:
        command = [args.binary, "bench", "pipeline", "--threads",
                   str(args.threads), "--seconds", str(args.seconds), "--json"]
    if trace is not None:
        command += ["--trace", trace]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(" ".join(command) + " failed:\n" + done.stderr)
    if lc0_benchmark:
        line = next(line for line in done.stdout.splitlines()
                    if line.startswith("JSON "))
        return json.loads(line[len("JSON "):])[
            f"t{args.threads}_positions_per_second"]
    return json.loads(done.stdout)["runs"][0]["positions_per_s"]


def median_interval(values, confidence=0.95):
    """The order statistics that bound the median of `values`' distribution
    with `confidence` (a sign test's interval); None for too few values."""
    n = len(values)
    ordered = sorted(values)
    # The largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2.
    k = 0
    tail = 0.0
    while True:
        tail += math.comb(n, k) / 2 ** n
        if tail > (1 - confidence) / 2:
            break
        k += 1
    if k == 0:
        return None
    return ordered[k - 1], ordered[n - k]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary",
                        help="the sluice binary or lc0_pipeline_benchmark")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    ratios = []
    with tempfile.TemporaryDirectory(prefix="sluice_trace_overhead_") as tmp:
        trace = os.path.join(tmp, "run.json")
        print(f"{'round':>5} {'off pos/s':>12} {'on pos/s':>12} {'on/off':>7}"
              f" {'trace MB':>9} {'events':>9}")
        for round_index in range(args.rounds):
            if round_index % 2 == 0:
                off = bench(args)
                on = bench(args, trace)
            else:
                on = bench(args, trace)
                off = bench(args)
            with open(trace) as f:
                events = sum(1 for event in json.load(f)["traceEvents"]
                             if event["ph"] != "M")
            ratios.append(on / off)
            print(f"{round_index + 1:>5} {off:>12.0f} {on:>12.0f} "
                  f"{on / off:>7.3f} {os.path.getsize(trace) / 1e6:>9.1f} "
                  f"{events:>9}")
    print(f"on/off: median {statistics.median(ratios):.3f}, range "
          f"{min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} rounds")
    interval = median_interval(ratios)
    if interval is None:
        print("too few rounds for a 95 % interval of the median (6 or more)")
    else:
        print(f"95 % interval of the median on/off: {interval[0]:.3f}-"
              f"{interval[1]:.3f} (tracing costs at most "
              f"{max(0.0, 1 - interval[0]) * 100:.1f} %)")
    print(json.dumps({"ratios": ratios,
                      "median_ratio": statistics.median(ratios),
                      "median_interval": interval}))


if __name__ == "__main__":
    main()
