#!/usr/bin/env python3
"""Data-parallel training on CPU with one sluice loader per rank.

    torchrun --nproc_per_node 2 bindings/python/examples/ddp_train.py \\
        [DATA_DIR] [--steps 50]

(with PYTHONPATH=out/release/bindings/python and Debian's python3, whose
torch has the gloo backend; with Debian's torch on Python 3.11+ add
``--redirects 1 --tee 1``: its torchrun cannot parse the default
``--redirects 0``). Each process is one rank of a
torch.distributed gloo group; its sluice pipeline reads only its shard of
the lc0 data (``rank=`` and ``world_size=`` of sluice.lc0_pipeline: the
shards are disjoint and together hold every chunk), and DistributedDataParallel
averages the gradients. Without DATA_DIR, rank 0 generates 200 synthetic
games into a temporary directory (or DIR/games with --checkpoint-dir DIR)
that every rank then reads. After
training, every rank runs one eval pass over its shard; the positions of
all ranks add up to the whole data set, which rank 0 checks and prints.

With ``--checkpoint-dir DIR`` each rank saves, every ``--checkpoint-every``
steps, its own checkpoint: its loader's (``loader.checkpoint()``: a few
bytes per frame the loader holds, as references) and the model's and
optimizer's state. A later run with ``--resume`` continues from them, on
any number of ranks: every new rank's loader takes the loader checkpoints
of all the old ranks (``DataLoader(config, resume_from=[ck_0, ...])``) and
takes its share of them alone. On as many ranks as before, each rank sees
exactly the batches the interrupted run would have seen next; on another
number, the rest of the interrupted pass is split among the new ranks
without repeats and what the old ranks' reservoirs held is dealt among
them (docs/guarantees.md, "Elastic resume"). The model and optimizer
state, the same on every rank, comes from rank 0's file.
"""

import argparse
import os
import shutil
import tempfile
import time

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


def shared_data_dir(args, rank):
    """DATA_DIR, or a directory rank 0 fills with generated games."""
    holder = [args.data_dir]
    if args.data_dir is None and rank == 0:
        # Beside the checkpoints, generated data stays for a resume (a
        # checkpoint names its config's directories).
        if args.checkpoint_dir:
            holder = [os.path.join(args.checkpoint_dir, "games")]
        else:
            holder = [tempfile.mkdtemp(prefix="sluice_ddp_")]
        if not os.path.isdir(holder[0]) or not os.listdir(holder[0]):
            os.makedirs(holder[0], exist_ok=True)
            sluice.generate_games(holder[0], 200, seed=5, tar=True,
                                  games_per_tar=50)
    dist.broadcast_object_list(holder, src=0)
    return holder[0]


def write_atomically(path, write):
    """Calls write(file) on a temporary file, then renames it to `path`."""
    with open(path + ".tmp", "wb") as out:
        write(out)
    os.replace(path + ".tmp", path)


def train(model, directory, rank, world_size, args):
    config = sluice.lc0_pipeline(
        directory, batch_size=args.batch_size, reservoir=20000,
        min_fill=2000, threads=args.threads, seed=args.seed, rank=rank,
        world_size=world_size, deterministic=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    prefix = (os.path.join(args.checkpoint_dir, f"rank{rank}")
              if args.checkpoint_dir else None)
    resume_from, done = None, 0
    first = os.path.join(args.checkpoint_dir or "", "rank0")
    if prefix and args.resume and os.path.exists(first + ".pt"):
        state = torch.load(first + ".pt")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        done = state["step"]
        # Every old rank's loader checkpoint, of that step.
        old_ranks = state.get("world_size", world_size)
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
            planes = torch.from_numpy(batch.planes)
            target = torch.from_numpy(batch.winner).argmax(dim=1)
            optimizer.zero_grad()
            loss = loss_fn(model(planes), target)
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
                     "world_size": world_size},
                    out))
            if step % 10 == 0 or step == args.steps:
                rate = ((step - done) * args.batch_size /
                        (time.monotonic() - started))
                print(f"rank {rank}: step {step} loss {loss.item():.3f} "
                      f"({rate:,.0f} positions/s)", flush=True)
            if step == args.steps:
                break


def evaluate(model, directory, rank, world_size, args):
    """One eval pass over this rank's shard; returns (positions, correct)."""
    config = sluice.lc0_pipeline(
        directory, mode="eval", batch_size=args.batch_size,
        threads=args.threads, rank=rank, world_size=world_size)
    positions = correct = 0
    model.eval()
    with torch.no_grad(), sluice.DataLoader(config) as loader:
        for batch in loader:
            predicted = model(torch.from_numpy(batch.planes)).argmax(dim=1)
            target = torch.from_numpy(batch.winner).argmax(dim=1)
            positions += len(target)
            correct += int((predicted == target).sum())
    return positions, correct


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?")
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

    dist.init_process_group("gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    torch.set_num_threads(1)
    directory = shared_data_dir(args, rank)
    model = nn.parallel.DistributedDataParallel(ResultNet())
    train(model, directory, rank, world_size, args)

    positions, correct = evaluate(model.module, directory, rank, world_size,
                                  args)
    print(f"rank {rank}: eval shard {positions} positions", flush=True)
    totals = torch.tensor([positions, correct], dtype=torch.int64)
    dist.all_reduce(totals)
    if rank == 0:
        total, right = int(totals[0]), int(totals[1])
        everything = 0
        config = sluice.lc0_pipeline(directory, mode="eval",
                                     batch_size=args.batch_size)
        with sluice.DataLoader(config) as loader:
            everything = sum(len(batch.winner) for batch in loader)
        print(f"eval: {total} positions over {world_size} ranks "
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
