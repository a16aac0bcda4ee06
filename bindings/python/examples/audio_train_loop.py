#!/usr/bin/env python3
"""Trains a small torch audio classifier on sluice's log-mel batches, then
evaluates it on one eval pass.

    PYTHONPATH=out/release/bindings/python /usr/bin/python3 \\
        bindings/python/examples/audio_train_loop.py [DATA_DIR] [--steps 60]

DATA_DIR holds Arrow files with an encoded clip per row in column "audio"
and an int64 "label" (``sluice gen audio DIR --clips N`` writes such
files; for Hugging Face's Audio struct pass --audio-column audio.bytes).
Without DATA_DIR, 400 synthetic clips of 4 classes are generated into a
temporary directory. Each batch's spectrogram (B, n_mels, frames) goes to
the model through torch.from_numpy, without a copy. Ctrl-C stops the loop
cleanly.
"""

import argparse
import tempfile
import time

import torch
from torch import nn

import sluice


class AudioClassifier(nn.Module):
    """Two conv blocks over the (mel, frame) plane, global average pooling
    and a linear layer to the class logits."""

    def __init__(self, classes):
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm2d(1),
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))

    def forward(self, spectrogram):
        return self.net(spectrogram.unsqueeze(1))


def train(model, directory, args):
    config = sluice.audio_pipeline(
        directory, mode="train", batch_size=args.batch_size,
        shuffle_buffer=args.shuffle_buffer,
        min_fill=args.shuffle_buffer // 4, seed=args.seed,
        threads=args.threads, audio_column=args.audio_column)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    clips = 0
    model.train()
    with sluice.DataLoader(config) as loader:
        started = time.monotonic()
        try:
            for step, batch in enumerate(loader, start=1):
                spectrogram = torch.from_numpy(batch.spectrogram)
                label = torch.from_numpy(batch.label)
                optimizer.zero_grad()
                loss = loss_fn(model(spectrogram), label)
                loss.backward()
                optimizer.step()
                clips += len(label)
                if step % 25 == 0 or step == args.steps:
                    elapsed = time.monotonic() - started
                    print(f"step {step:5d}  loss {loss.item():.4f}  "
                          f"{clips / elapsed:8.0f} clips/s", flush=True)
                if step == args.steps:
                    break
        except KeyboardInterrupt:
            print("interrupted")
        elapsed = time.monotonic() - started
        skipped = {skip.reason: skip.count
                   for stage in loader.metrics().total_stage_metrics
                   for skip in stage.skipped}
    print(f"trained on {clips} clips in {elapsed:.1f} s "
          f"({clips / elapsed:.0f} clips/s); skipped: {skipped or 'none'}")


def evaluate(model, directory, args):
    config = sluice.audio_pipeline(directory, mode="eval",
                                   batch_size=args.batch_size,
                                   threads=args.threads,
                                   audio_column=args.audio_column)
    correct = total = 0
    model.eval()
    with torch.no_grad(), sluice.DataLoader(config) as loader:
        for batch in loader:
            predicted = model(torch.from_numpy(batch.spectrogram)).argmax(1)
            correct += int((predicted == torch.from_numpy(batch.label)).sum())
            total += len(batch.label)
    print(f"eval: {correct}/{total} clips right "
          f"({100 * correct / max(total, 1):.1f} %)")


def run(directory, classes, args):
    torch.manual_seed(args.seed)
    model = AudioClassifier(classes)
    train(model, directory, args)
    if not args.no_eval:
        evaluate(model, directory, args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", help="directory of Arrow files")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--shuffle-buffer", type=int, default=256)
    parser.add_argument("--classes", type=int, default=None,
                        help="classes of DATA_DIR (default: 4 generated, "
                        "else the largest of the first batches' labels + 1)")
    parser.add_argument("--audio-column", default="audio")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0,
                        help="engine threads (0: one per core)")
    parser.add_argument("--no-eval", action="store_true",
                        help="skip the evaluation pass")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.data:
        classes = args.classes or guess_classes(args.data, args)
        run(args.data, classes, args)
        return
    with tempfile.TemporaryDirectory() as directory:
        sluice.generate_audio(directory, 400, classes=4, files=2, seed=1)
        run(directory, args.classes or 4, args)


def guess_classes(directory, args):
    """1 + the largest label among the first few batches of one eval
    pass."""
    config = sluice.audio_pipeline(directory, mode="eval", batch_size=256,
                                   threads=args.threads,
                                   audio_column=args.audio_column)
    largest = 0
    with sluice.DataLoader(config) as loader:
        for _, batch in zip(range(4), loader):
            largest = max(largest, int(batch.label.max()))
    return largest + 1


if __name__ == "__main__":
    main()
