#!/usr/bin/env python3
"""Plots a training report: loss, accuracy and data wait per step.

    /usr/bin/python3 bindings/python/examples/plot_training.py REPORT.csv \\
        -o run.png [--title TEXT] [--smooth 10]

REPORT.csv is the per-step report of examples/cpp_trainer (``--report``):
columns step, loss, loss_<term>..., accuracy, data_wait_ms, step_ms,
<unit>_per_s, eval_loss, eval_accuracy (rows with eval_* set are
evaluations). Three panels share the step axis: the loss and its terms,
the accuracy (training batches, smoothed, and evaluations as points), and
the time each step waited for its batch beside the time it computed.
Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is set)


def read_report(path):
    """The training rows and the evaluation rows of a report, as lists of
    dicts of floats (empty cells left out)."""
    steps, evals = [], []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            values = {k: float(v) for k, v in row.items() if v not in ("", None)}
            if "eval_accuracy" in values:
                evals.append(values)
            elif "loss" in values:
                steps.append(values)
    if not steps:
        raise SystemExit(f"{path}: no training rows")
    return steps, evals


def smooth(values, window):
    """Trailing mean over `window` values (the first ones over fewer)."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot(steps, evals, output, title, window):
    x = [row["step"] for row in steps]
    fig, (loss_ax, acc_ax, wait_ax) = plt.subplots(
        3, 1, sharex=True, figsize=(7, 6.5), dpi=80)
    loss_ax.plot(x, smooth([r["loss"] for r in steps], window), label="loss",
                 color="black")
    for key in sorted(k for k in steps[0] if k.startswith("loss_")):
        loss_ax.plot(x, smooth([r[key] for r in steps], window),
                     label=key[len("loss_"):], linewidth=1)
    if evals:
        loss_ax.plot([r["step"] for r in evals],
                     [r["eval_loss"] for r in evals], "o", color="tab:red",
                     label="eval")
    loss_ax.set_ylabel("loss")
    loss_ax.set_yscale("log")
    loss_ax.legend(fontsize="small")
    loss_ax.set_title(title)

    acc_ax.plot(x, [100 * v for v in smooth([r["accuracy"] for r in steps],
                                            window)],
                label=f"training batches (mean of {window})")
    if evals:
        acc_ax.plot([r["step"] for r in evals],
                    [100 * r["eval_accuracy"] for r in evals], "o",
                    color="tab:red", label="eval")
    acc_ax.set_ylabel("accuracy %")
    acc_ax.legend(fontsize="small")

    wait_ax.plot(x, [r["step_ms"] for r in steps], label="step (compute)",
                 linewidth=1)
    wait_ax.plot(x, [r["data_wait_ms"] for r in steps],
                 label="waiting for the batch", linewidth=1)
    wait_ax.set_yscale("symlog", linthresh=1)
    wait_ax.set_ylabel("ms")
    wait_ax.set_xlabel("step")
    wait_ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(output)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", help="the trainer's --report CSV")
    parser.add_argument("-o", "--output", default="run.png")
    parser.add_argument("--title", default=None)
    parser.add_argument("--smooth", type=int, default=10,
                        help="steps averaged per point of the loss and "
                        "accuracy curves")
    args = parser.parse_args()
    steps, evals = read_report(args.report)
    plot(steps, evals, args.output, args.title or args.report,
         max(1, args.smooth))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
