#!/usr/bin/env python3
"""Throughput of the default lc0 pipeline while Prometheus scrapes it, against
the same pipeline with no metrics server, in the same run.

    /usr/bin/python3 bench/scrape_benchmark.py [--sluice out/release/bindings/cli/sluice]
        [--threads 2] [--seconds 8] [--rounds 3] [--interval 0.1]

Each round runs `sluice bench pipeline --threads N --seconds S --json` (its
default pipeline over its cached demo data) three ways, in a rotating
order: `off` (no --metrics-port), `served` (--metrics-port, nobody
scrapes) and `scraped` (a client GETs /metrics every --interval seconds,
ten times as often as a 1 s Prometheus scrape interval, while the run
lasts). Prints positions/s per round, the per-round ratios to `off` with
their median and range, the scrapes served and the page size, and a JSON
line.
"""

import argparse
import json
import pathlib
import socket
import statistics
import subprocess
import threading
import urllib.error
import urllib.request

MODES = ("off", "served", "scraped")


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Scraper:
    """GETs http://127.0.0.1:port/metrics every `interval` seconds on a
    thread of its own until stopped; counts the pages it got."""

    def __init__(self, port, interval):
        self._url = f"http://127.0.0.1:{port}/metrics"
        self._interval = interval
        self._stop = threading.Event()
        self.pages = 0
        self.page_bytes = 0
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self._interval):
            try:
                with urllib.request.urlopen(self._url, timeout=5) as answer:
                    self.page_bytes = len(answer.read())
                    self.pages += 1
            except (urllib.error.URLError, ConnectionError):
                pass  # not listening yet, or already stopped

    def stop(self):
        self._stop.set()
        self._thread.join()


def measure(sluice_cli, mode, threads, seconds, interval):
    """positions/s of one `sluice bench pipeline` run, and its Scraper (or
    None)."""
    command = [sluice_cli, "bench", "pipeline", "--threads", str(threads),
               "--seconds", str(seconds), "--json"]
    scraper = None
    if mode != "off":
        port = free_port()
        command += ["--metrics-port", str(port)]
        if mode == "scraped":
            scraper = Scraper(port, interval)
    try:
        done = subprocess.run(command, check=True, capture_output=True,
                              text=True)
    finally:
        if scraper is not None:
            scraper.stop()
    return json.loads(done.stdout)["runs"][0]["positions_per_s"], scraper


def main():
    default_cli = (pathlib.Path(__file__).resolve().parents[1] / "out" /
                   "release" / "bindings" / "cli" / "sluice")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sluice", default=str(default_cli))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval", type=float, default=0.1,
                        help="seconds between scrapes")
    args = parser.parse_args()

    # A first short run generates the demo data outside the measurements.
    subprocess.run([args.sluice, "bench", "pipeline", "--threads", "1",
                    "--seconds", "1", "--json"], check=True,
                   capture_output=True)
    rates = {mode: [] for mode in MODES}
    pages, page_bytes = 0, 0
    for round_index in range(args.rounds):
        shift = round_index % len(MODES)
        for mode in MODES[shift:] + MODES[:shift]:
            rate, scraper = measure(args.sluice, mode, args.threads,
                                    args.seconds, args.interval)
            rates[mode].append(rate)
            if scraper is not None:
                pages += scraper.pages
                page_bytes = max(page_bytes, scraper.page_bytes)

    print(f"{'round':<7}" + "".join(f"{mode:>12}" for mode in MODES) +
          "   (positions/s)")
    for round_index in range(args.rounds):
        print(f"{round_index:<7}" + "".join(
            f"{rates[mode][round_index]:>12.0f}" for mode in MODES))
    summary = {"threads": args.threads, "seconds": args.seconds,
               "interval_s": args.interval, "scrapes": pages,
               "page_bytes": page_bytes, "positions_per_s": rates}
    for mode in MODES[1:]:
        ratios = [rate / off for rate, off in zip(rates[mode], rates["off"])]
        summary[f"{mode}_over_off"] = {
            "median": statistics.median(ratios), "min": min(ratios),
            "max": max(ratios)}
        print(f"{mode}/off per round: median {statistics.median(ratios):.3f}"
              f", range {min(ratios):.3f}-{max(ratios):.3f}")
    print(f"{pages} scrapes served, page of {page_bytes} bytes")
    print("JSON " + json.dumps(summary))


if __name__ == "__main__":
    main()
