#!/usr/bin/env python3
"""Data-parallel training on CPU with one sluice loader per rank.

    torchrun --nproc_per_node 2 bindings/python/examples/ddp_train.py \\
        [DATA_DIR] [--workload lc0|audio] [--steps 50]

(with PYTHONPATH=out/release/bindings/python and Debian's python3, whose
torch has the gloo backend; with Debian's torch on Python 3.11+ add
``--redirects 1 --tee 1``: its torchrun cannot parse the default
``--redirects 0``). Each process is one rank of a
torch.distributed gloo group; its sluice pipeline reads only its shard of
the data (``rank=`` and ``world_size=`` of the pipeline builder: the
shards are disjoint and together hold every chunk or row), and
DistributedDataParallel averages the gradients.

Two workloads share the training, checkpointing and eval code:

- ``lc0`` (the default): sluice.lc0_pipeline over lc0 chunks; a small
  convolutional net predicts the game result (W/D/L) from the 112 input
  planes. Without DATA_DIR, rank 0 generates 200 synthetic games.
- ``audio``: sluice.audio_pipeline over Arrow files of encoded clips with
  an int64 label (what ``sluice gen audio`` writes); a small CNN predicts
  the label (of ``--classes``) from the log-mel spectrogram. Without
  DATA_DIR, rank 0 generates 400 synthetic clips of 4 classes (one in
  100 damaged, which every pass skips: the data set holds 396).

Generated data goes into a temporary directory (or DIR/games, DIR/clips
with --checkpoint-dir DIR) that every rank then reads. After training,
every rank runs one eval pass over its shard; the examples of all ranks
add up to the whole data set, which rank 0 checks and prints.

With ``--checkpoint-dir DIR`` each rank saves, every ``--checkpoint-every``
steps, its own checkpoint: its loader's (``loader.checkpoint()``: a few
bytes per frame or row the loader holds, as references) and the model's
and optimizer's state. A later run with ``--resume`` (of the same
workload: another is refused) continues from them, on any number of
ranks: every new rank's loader takes the loader checkpoints of all the
old ranks (``DataLoader(config, resume_from=[ck_0, ...])``) and takes its
share of them alone. On as many ranks as before, each rank sees exactly the
batches the interrupted run would have seen next; on another number, the
rest of the interrupted pass is split among the new ranks without repeats
and what the old ranks' reservoirs held is dealt among them
(docs/guarantees.md, "Elastic resume"). The model and optimizer state,
the same on every rank, comes from rank 0's file.
"""

import argparse
import dataclasses
import os
import shutil
import tempfile
import time
from typing import Callable

import torch
import torch.distributed as dist
from torch import nn

import sluice


class ResultNet(nn.Module):
    """Predicts the game result (W/D/L) from the 112 input planes."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(112, 16, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 3))

    def forward(self, planes):
        return self.net(planes)


class ClipNet(nn.Module):
    """Predicts a clip's class from its log-mel spectrogram (B, mels,
    frames). Its normalization keeps no running statistics, so the weights
    are all the state and stay the same on every rank."""

    def __init__(self, classes):
        super().__init__()
        self.net = nn.Sequential(
            nn.GroupNorm(1, 1),  # each spectrogram to mean 0, variance 1
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, classes))

    def forward(self, spectrogram):
        return self.net(spectrogram.unsqueeze(1))


def lc0_config(directory, mode, args, rank=0, world_size=1):
    """The lc0 pipeline of `mode` ("train": endless and deterministic,
    "eval": one pass) for `rank` of `world_size`."""
    if mode == "train":
        return sluice.lc0_pipeline(
            directory, batch_size=args.batch_size, reservoir=20000,
            min_fill=2000, threads=args.threads, seed=args.seed, rank=rank,
            world_size=world_size, deterministic=True)
    return sluice.lc0_pipeline(
        directory, mode="eval", batch_size=args.batch_size,
        threads=args.threads, rank=rank, world_size=world_size)


def audio_config(directory, mode, args, rank=0, world_size=1):
    """The audio pipeline of `mode` ("train": endless, "eval": one pass),
    deterministic, for `rank` of `world_size`: half-second crops, 32 mel
    bands, a training reservoir of 128 clips that emits once 64 are
    in."""
    reservoir = (dict(shuffle_buffer=128, min_fill=64) if mode == "train"
                 else {})
    return sluice.audio_pipeline(
        directory, mode=mode, clip_seconds=0.5, n_mels=32,
        batch_size=args.batch_size, seed=args.seed, threads=args.threads,
        rank=rank, world_size=world_size, deterministic=True, **reservoir)


@dataclasses.dataclass(frozen=True)
class Workload:
    """What differs between the workloads; the rest of this file is
    shared."""
    unit: str  # what one example is, in the printed counts
    generated: str  # the folder under --checkpoint-dir for generated data
    generate: Callable  # generate(directory): the synthetic data set
    config: Callable  # config(directory, mode, args, rank, world_size)
    model: Callable  # model(args): a fresh nn.Module
    example: Callable  # example(batch): (inputs, target) tensors
    learning_rate: float  # of the SGD optimizer


WORKLOADS = {
    "lc0": Workload(
        unit="positions", generated="games",
        generate=lambda directory: sluice.generate_games(
            directory, 200, seed=5, tar=True, games_per_tar=50),
        config=lc0_config, model=lambda args: ResultNet(),
        example=lambda batch: (torch.from_numpy(batch.planes),
                               torch.from_numpy(batch.winner).argmax(dim=1)),
        learning_rate=0.05),
    "audio": Workload(
        unit="clips", generated="clips",
        generate=lambda directory: sluice.generate_audio(
            directory, 400, classes=4, files=2, seed=1),
        config=audio_config, model=lambda args: ClipNet(args.classes),
        example=lambda batch: (torch.from_numpy(batch.spectrogram),
                               torch.from_numpy(batch.label)),
        learning_rate=0.2),
}


def shared_data_dir(workload, args, rank):
    """DATA_DIR, or a directory rank 0 fills with generated data."""
    holder = [args.data_dir]
    if args.data_dir is None and rank == 0:
        # Beside the checkpoints, generated data stays for a resume (a
        # checkpoint names its config's directories).
        if args.checkpoint_dir:
            holder = [os.path.join(args.checkpoint_dir, workload.generated)]
        else:
            holder = [tempfile.mkdtemp(prefix="sluice_ddp_")]
        if not os.path.isdir(holder[0]) or not os.listdir(holder[0]):
            os.makedirs(holder[0], exist_ok=True)
            workload.generate(holder[0])
    dist.broadcast_object_list(holder, src=0)
    return holder[0]


def write_atomically(path, write):
    """Calls write(file) on a temporary file, then renames it to `path`."""
    with open(path + ".tmp", "wb") as out:
        write(out)
    os.replace(path + ".tmp", path)


def train(workload, model, directory, rank, world_size, args):
    config = workload.config(directory, "train", args, rank, world_size)
    optimizer = torch.optim.SGD(model.parameters(),
                                lr=workload.learning_rate)
    loss_fn = nn.CrossEntropyLoss()
    prefix = (os.path.join(args.checkpoint_dir, f"rank{rank}")
              if args.checkpoint_dir else None)
    resume_from, done = None, 0
    first = os.path.join(args.checkpoint_dir or "", "rank0")
    if prefix and args.resume and os.path.exists(first + ".pt"):
        state = torch.load(first + ".pt")
        if state["workload"] != args.workload:
            raise SystemExit(f"{first}.pt is of --workload "
                             f"{state['workload']}")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        done = state["step"]
        # Every old rank's loader checkpoint, of that step.
        old_ranks = state["world_size"]
        resume_from = []
        for old in range(old_ranks):
            path = os.path.join(args.checkpoint_dir, f"rank{old}")
            if torch.load(path + ".pt")["step"] != done:
                raise SystemExit(f"{path}.pt is not of step {done}")
            with open(path + ".sluice", "rb") as saved:
                resume_from.append(saved.read())
        print(f"rank {rank}: resumed from step {done} (the checkpoints of "
              f"{old_ranks} ranks)", flush=True)
    started = time.monotonic()
    with sluice.DataLoader(config, resume_from=resume_from) as loader:
        for step, batch in enumerate(loader, start=done + 1):
            inputs, target = workload.example(batch)
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), target)
            loss.backward()  # DDP averages the gradients of every rank
            optimizer.step()
            if prefix and step % args.checkpoint_every == 0:
                # Between two batches: the loader's state after `step`
                # batches, saved with the model that trained on them.
                write_atomically(prefix + ".sluice",
                                 lambda out: out.write(loader.checkpoint()))
                write_atomically(prefix + ".pt", lambda out: torch.save(
                    {"model": model.module.state_dict(),
                     "optimizer": optimizer.state_dict(), "step": step,
                     "world_size": world_size, "workload": args.workload},
                    out))
            if step % 10 == 0 or step == args.steps:
                rate = ((step - done) * args.batch_size /
                        (time.monotonic() - started))
                print(f"rank {rank}: step {step} loss {loss.item():.3f} "
                      f"({rate:,.0f} {workload.unit}/s)", flush=True)
            if step == args.steps:
                break


def evaluate(workload, model, config):
    """One eval pass of `config`; returns (examples, correct)."""
    examples = correct = 0
    model.eval()
    with torch.no_grad(), sluice.DataLoader(config) as loader:
        for batch in loader:
            inputs, target = workload.example(batch)
            predicted = model(inputs).argmax(dim=1)
            examples += len(target)
            correct += int((predicted == target).sum())
    return examples, correct


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?")
    parser.add_argument("--workload", choices=sorted(WORKLOADS),
                        default="lc0")
    parser.add_argument("--classes", type=int, default=4,
                        help="audio: classes of the labels (the generated "
                             "data has 4)")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1,
                        help="sluice worker threads per rank")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint-dir",
                        help="save each rank's checkpoint here")
    parser.add_argument("--checkpoint-every", type=int, default=10,
                        help="steps between checkpoints")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the checkpoints in "
                             "--checkpoint-dir")
    args = parser.parse_args()
    workload = WORKLOADS[args.workload]

    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    torch.set_num_threads(1)
    directory = shared_data_dir(workload, args, rank)
    model = nn.parallel.DistributedDataParallel(workload.model(args))
    train(workload, model, directory, rank, world_size, args)

    shard, correct = evaluate(
        workload, model.module,
        workload.config(directory, "eval", args, rank, world_size))
    print(f"rank {rank}: eval shard {shard} {workload.unit}", flush=True)
    totals = torch.tensor([shard, correct], dtype=torch.int64)
    dist.all_reduce(totals)
    if rank == 0:
        total, right = int(totals[0]), int(totals[1])
        config = workload.config(directory, "eval", args)
        with sluice.DataLoader(config) as loader:
            everything = sum(len(workload.example(batch)[1])
                             for batch in loader)
        print(f"eval: {total} {workload.unit} over {world_size} ranks "
              f"(the data set has {everything}), accuracy "
              f"{right / max(total, 1):.3f}", flush=True)
        if total != everything:
            raise SystemExit("the ranks' shards do not add up to the data")
    dist.barrier()
    if args.data_dir is None and not args.checkpoint_dir and rank == 0:
        shutil.rmtree(directory, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
