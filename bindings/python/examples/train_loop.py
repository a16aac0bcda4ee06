#!/usr/bin/env python3
"""Streams lc0 batches from sluice into a minimal numpy training step and
prints throughput.

    PYTHONPATH=out/release/bindings/python /usr/bin/python3 \\
        bindings/python/examples/train_loop.py [DATA_DIR] [--steps 200]

Without DATA_DIR, 300 synthetic games are generated into a temporary
directory. The "model" is a stand-in for a network: a linear layer from the
mean of each input plane to the game result (W/D/L), trained by SGD on the
cross-entropy against `winner`. Ctrl-C stops the loop cleanly.
"""

import argparse
import tempfile
import time

import numpy as np

import sluice


class ResultModel:
    """Softmax regression from 112 plane means to W/D/L probabilities."""

    def __init__(self, learning_rate=0.1):
        self.weights = np.zeros((112, 3), np.float32)
        self.bias = np.zeros(3, np.float32)
        self.learning_rate = learning_rate

    def train_step(self, planes, winner):
        """One SGD step on a batch; returns the mean cross-entropy."""
        features = planes.reshape(len(planes), 112, 64).mean(axis=2)
        logits = features @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        loss = -np.mean(np.sum(winner * np.log(probs + 1e-7), axis=1))
        grad = (probs - winner) / len(planes)
        self.weights -= self.learning_rate * features.T @ grad
        self.bias -= self.learning_rate * grad.sum(axis=0)
        return float(loss)


def train(directory, steps, batch_size, threads):
    config = sluice.lc0_pipeline(directory, batch_size=batch_size,
                                 reservoir=20000, min_fill=5000,
                                 threads=threads)
    model = ResultModel()
    positions = 0
    with sluice.DataLoader(config) as loader:
        started = time.monotonic()
        try:
            for step, batch in enumerate(loader, start=1):
                loss = model.train_step(batch.planes, batch.winner)
                positions += len(batch.plies_left)
                if step % 20 == 0 or step == steps:
                    elapsed = time.monotonic() - started
                    print(f"step {step:5d}  loss {loss:.4f}  "
                          f"{positions / elapsed:10.0f} positions/s")
                if step == steps:
                    break
        except KeyboardInterrupt:
            print("interrupted")
        elapsed = time.monotonic() - started
    print(f"{positions} positions in {elapsed:.1f} s: "
          f"{positions / elapsed:.0f} positions/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", help="lc0 data directory")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=0,
                        help="engine threads (0: one per core)")
    args = parser.parse_args()
    if args.data:
        train(args.data, args.steps, args.batch_size, args.threads)
        return
    with tempfile.TemporaryDirectory() as directory:
        sluice.generate_games(directory, 300, seed=1)
        train(directory, args.steps, args.batch_size, args.threads)


if __name__ == "__main__":
    main()
