#!/usr/bin/env python3
"""Renders a real run report in headless Chromium and fails on any console
message, a page without its charts, or a screenshot that did not happen.

    render_in_chromium.py SLUICE_BINARY SOURCE_DIR WORK_DIR

First a control page with a broken SVG path must be caught, so that a
Chromium that logs nothing cannot pass the check by accident. Then `sluice
gen` writes a small lc0 data set, `sluice run` reads it through the
evaluation pipeline with --report, and Chromium loads the page once,
dumping its DOM and taking a screenshot with the console logged to stderr.
The page has no script and fetches nothing, so any console line is an
error (an SVG attribute that does not parse, a resource it tried to load).
A missing Chromium fails the test (it is never skipped).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# Generous: a loaded 2-core machine may take long to start a browser.
CHROMIUM_TIMEOUT_SECONDS = 300
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0",
]
# Chromium logs console messages as "...:INFO:CONSOLE:12] "text", source:
# file:///... (12)" (older builds: "CONSOLE(12)").
CONSOLE_LINE = re.compile(r":CONSOLE[:(]")
WINDOW = (1280, 1800)


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    fail("no chromium on PATH: scripts/setup.sh installs Debian's chromium")


def chromium(page, *mode):
    """Runs Chromium on `page` with a fresh profile; returns (stdout,
    console lines)."""
    with tempfile.TemporaryDirectory(prefix="sluice_chromium_") as profile:
        command = [chromium_binary(), *CHROMIUM_FLAGS,
                   f"--user-data-dir={profile}", *mode,
                   "file://" + os.path.abspath(page)]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=CHROMIUM_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            fail(f"chromium took over {CHROMIUM_TIMEOUT_SECONDS} s: "
                 + " ".join(command))
    if done.returncode != 0:
        fail(f"chromium exited with {done.returncode}:\n{done.stderr[-3000:]}")
    console = [line for line in done.stderr.splitlines()
               if CONSOLE_LINE.search(line)]
    return done.stdout, console


def png_size(path):
    with open(path, "rb") as png:
        header = png.read(24)
    if header[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    return (int.from_bytes(header[16:20], "big"),
            int.from_bytes(header[20:24], "big"))


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        fail(" ".join(command) + f" exited with {done.returncode}:\n"
             + done.stdout[-2000:] + done.stderr[-2000:])
    return done.stdout


def main():
    if len(sys.argv) != 4:
        fail(__doc__)
    sluice, source, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    control = os.path.join(work, "control.html")
    with open(control, "w") as page:
        page.write('<!DOCTYPE html><html><body><svg viewBox="0 0 10 10">'
                   '<path d="M 0 NaN L 10 10"/></svg></body></html>\n')
    _, console = chromium(control, "--dump-dom")
    if not any("NaN" in line for line in console):
        fail("the control page's broken SVG path was not logged: the "
             "console check cannot be trusted with this Chromium")

    data = os.path.join(work, "data")
    run([sluice, "gen", "tar", data, "--games", "150"])
    with open(os.path.join(source, "proto/examples/lc0_eval.textproto")) as f:
        eval_config = f.read()
    config = os.path.join(work, "eval.textproto")
    with open(config, "w") as f:
        # Samples often enough for a short run to draw lines.
        f.write("metrics_interval_seconds: 0.05\n" + eval_config)
    report = os.path.join(work, "run.html")
    out = run([sluice, "run", config, "--data", data, "--report", report])
    if "report: " + report not in out:
        fail("sluice run did not say it wrote the report:\n" + out)

    screenshot = os.path.join(work, "run.png")
    dom, console = chromium(report, "--dump-dom", f"--screenshot={screenshot}",
                            f"--window-size={WINDOW[0]},{WINDOW[1]}",
                            "--hide-scrollbars")
    if console:
        fail("console messages while rendering the report:\n"
             + "\n".join(console))
    charts = dom.count("<svg")
    if "sluice run report" not in dom or charts < 5:
        fail(f"the rendered page has {charts} charts (5 or more expected)")
    if not os.path.exists(screenshot):
        fail("chromium wrote no screenshot")
    if png_size(screenshot) != WINDOW:
        fail(f"the screenshot is {png_size(screenshot)}, not {WINDOW}")
    # A blank page compresses to a few kilobytes; charts and text do not.
    if os.path.getsize(screenshot) < 40000:
        fail(f"the screenshot is {os.path.getsize(screenshot)} bytes: blank?")
    print(f"ok: {charts} charts, no console message, screenshot "
          f"{os.path.getsize(screenshot)} bytes at {screenshot}")


if __name__ == "__main__":
    main()
