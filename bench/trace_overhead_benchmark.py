#!/usr/bin/env python3
"""What recording a trace costs the lc0 training pipeline.

    /work/bin/quiet bench/trace_overhead_benchmark.py out/release/bindings/cli/sluice \
        --rounds 5 --seconds 10 --threads 2
    /work/bin/quiet bench/trace_overhead_benchmark.py \
        out/release/bench/lc0_pipeline_benchmark --rounds 4 --threads 2

Runs `sluice bench pipeline` (the default lc0 training pipeline on the demo
data set; --seconds per run) or, given bench/lc0_pipeline_benchmark, that
benchmark (the same pipeline on its generated data, positions/s in steady
state; --batches per run) without and with `--trace`, interleaved and in
alternating order
(off on, on off, off on, ...) so that the machine's drift and whatever the
first run of a pair leaves the second hit both alike, and prints
positions/s of each
run, the ratio on/off of each round, and their median. The trace of each
traced run is written to a temporary directory; its size and event count
are printed too.
"""

import argparse
import json
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
    print(json.dumps({"ratios": ratios,
                      "median_ratio": statistics.median(ratios)}))


if __name__ == "__main__":
    main()
