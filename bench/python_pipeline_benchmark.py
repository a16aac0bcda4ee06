#!/usr/bin/env python3
"""Positions/s of the default lc0 pipeline pulled through Python, against
the same pipeline measured in C++ (`sluice bench pipeline`).

    PYTHONPATH=out/release/bindings/python /usr/bin/python3 \\
        bench/python_pipeline_benchmark.py [--data DIR] [--threads 2]

Both sides run the same config (written to a temporary textproto for the
C++ run): lc0_pipeline(DIR, batch_size=1024, reservoir=50000,
min_fill=10000), the settings of `sluice bench pipeline`'s default run.
Both time the steady state, from the first batch on, for --seconds, and
count positions the way `sluice bench pipeline` does (the tensor
generator's positions, scaled to the batches pulled after the first; this
includes the few batches still queued); "Python pulled" counts only the
positions Python received. Rounds alternate which side runs first.
Without --data, --games synthetic games are generated into a temporary
directory. Prints a table and a JSON line.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from google.protobuf import text_format

import sluice


def measure_python(config, seconds):
    """Steady-state positions/s of `config` pulled with get_next(), from the
    first batch on. Returns (positions/s counted as `sluice bench pipeline`
    counts them, positions/s pulled by Python)."""
    with sluice.DataLoader(config) as loader:
        loader.get_next()
        first = time.monotonic()
        batches, pulled = 1, 0
        while time.monotonic() - first < seconds:
            batch = loader.get_next()
            if batch is None:
                break
            batches += 1
            pulled += len(batch.plies_left)
        elapsed = time.monotonic() - first
    produced = sum(stage.tensor_generator.positions
                   for stage in loader.metrics().total_stage_metrics)
    return produced * (batches - 1) / batches / elapsed, pulled / elapsed


def measure_cpp(sluice_cli, config, threads, seconds):
    """Steady-state positions/s of `config` from `sluice bench pipeline`."""
    with tempfile.NamedTemporaryFile("w", suffix=".textproto") as file:
        file.write(text_format.MessageToString(config))
        file.flush()
        done = subprocess.run(
            [str(sluice_cli), "bench", "pipeline", file.name, "--threads",
             str(threads), "--seconds", str(seconds), "--json"],
            check=True, capture_output=True, text=True)
    return json.loads(done.stdout)["runs"][0]["positions_per_s"]


def main():
    default_cli = (pathlib.Path(sluice.__file__).resolve().parents[2] /
                   "cli" / "sluice")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="lc0 data directory")
    parser.add_argument("--games", type=int, default=1000,
                        help="games to generate without --data")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sluice", default=str(default_cli),
                        help="the sluice command (for the C++ figure)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        data = args.data
        if data is None:
            data = scratch
            sluice.generate_games(data, args.games, seed=1, tar=True)
        config = sluice.lc0_pipeline(data, batch_size=1024, reservoir=50000,
                                     min_fill=10000, threads=args.threads)
        cpp, python, pulled = [], [], []
        for round_index in range(args.rounds):
            # Alternate which side goes first, so drift hits both alike.
            order = ("cpp", "python") if round_index % 2 == 0 else (
                "python", "cpp")
            for side in order:
                if side == "cpp":
                    cpp.append(measure_cpp(args.sluice, config, args.threads,
                                           args.seconds))
                else:
                    produced_rate, pulled_rate = measure_python(
                        config, args.seconds)
                    python.append(produced_rate)
                    pulled.append(pulled_rate)

    cpp_mean, python_mean = statistics.mean(cpp), statistics.mean(python)
    ratio = python_mean / cpp_mean
    print(f"{'round':<7}{'C++':>12}{'Python':>12}{'Python pulled':>15}"
          "   (positions/s)")
    for round_index, row in enumerate(zip(cpp, python, pulled)):
        print(f"{round_index:<7}" + "".join(
            f"{value:>{width}.0f}" for value, width in zip(row, (12, 12, 15))))
    print(f"{'mean':<7}{cpp_mean:>12.0f}{python_mean:>12.0f}"
          f"{statistics.mean(pulled):>15.0f}   Python/C++ = {ratio:.3f}")
    print(json.dumps({"threads": args.threads, "batch_size": 1024,
                      "cpp_positions_per_s": round(cpp_mean, 1),
                      "python_positions_per_s": round(python_mean, 1),
                      "python_pulled_positions_per_s":
                          round(statistics.mean(pulled), 1),
                      "python_over_cpp": round(ratio, 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
