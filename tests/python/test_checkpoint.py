"""Checkpoint and resume from Python: DataLoader.checkpoint() and
DataLoader(config, resume_from=...) in deterministic mode, across
processes and after kill -9 of the first one."""

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import sluice


def train_config(directory):
    return sluice.lc0_pipeline(directory, batch_size=64, chunk_pool_size=30,
                               reservoir=1200, min_fill=400, seed=5,
                               deterministic=True)


def digest(batch):
    hasher = hashlib.sha1()
    for tensor in batch:
        hasher.update(np.ascontiguousarray(tensor).tobytes())
    return hasher.hexdigest()


def take(loader, count):
    return [digest(loader.get_next()) for _ in range(count)]


# Run in a second process: takes N batches, writes the checkpoint (to a
# temporary name, then renamed), says so, and goes on pulling batches until
# it is killed.
CHECKPOINTING_PROCESS = textwrap.dedent("""
    import os, sys
    import sluice
    directory, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    config = sluice.lc0_pipeline(directory, batch_size=64,
                                 chunk_pool_size=30, reservoir=1200,
                                 min_fill=400, seed=5, deterministic=True)
    loader = sluice.DataLoader(config)
    loader.start()
    for _ in range(count):
        loader.get_next()
    with open(path + ".tmp", "wb") as out:
        out.write(loader.checkpoint())
    os.replace(path + ".tmp", path)
    print("checkpointed", flush=True)
    while True:
        loader.get_next()
""")


def test_resume_after_kill_9_yields_the_batches_that_followed(games_dir,
                                                             tmp_path):
    directory, _ = games_dir
    with sluice.DataLoader(train_config(directory)) as loader:
        reference = take(loader, 30)
    path = tmp_path / "loader.checkpoint"
    process = subprocess.Popen(
        [sys.executable, "-c", CHECKPOINTING_PROCESS, str(directory),
         str(path), "12"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "checkpointed"
        time.sleep(0.2)  # it runs on past the checkpoint
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    checkpoint = path.read_bytes()
    with sluice.DataLoader(train_config(directory),
                           resume_from=checkpoint) as resumed:
        assert take(resumed, 18) == reference[12:30]


def test_resumed_eval_pass_yields_every_position_once(games_dir):
    directory, positions = games_dir
    config = sluice.lc0_pipeline(directory, mode="eval", batch_size=64,
                                 deterministic=True)
    with sluice.DataLoader(config) as loader:
        reference = [digest(batch) for batch in loader]
    with sluice.DataLoader(config) as loader:
        first = take(loader, 5)
        checkpoint = loader.checkpoint()
    with sluice.DataLoader(config, resume_from=checkpoint) as resumed:
        rest = [digest(batch) for batch in resumed]
    assert first + rest == reference


def rows(batch):
    """A digest per position of a batch (its bytes in every tensor)."""
    count = len(batch[0])
    return [hashlib.sha1(b"".join(np.ascontiguousarray(t[i]).tobytes()
                                  for t in batch)).hexdigest()
            for i in range(count)]


def test_resume_from_every_rank_on_another_number_of_ranks(games_dir):
    """Two ranks' checkpoints of an eval pass, resumed on three ranks
    (resume_from=[ck_0, ck_1]): every position not delivered before comes
    once."""
    directory, positions = games_dir

    def config(rank, world_size):
        return sluice.lc0_pipeline(directory, mode="eval", batch_size=64,
                                   rank=rank, world_size=world_size,
                                   deterministic=True)

    delivered, checkpoints = [], []
    for rank in range(2):
        with sluice.DataLoader(config(rank, 2)) as loader:
            for _ in range(2):
                delivered += rows(loader.get_next())
            checkpoints.append(loader.checkpoint())
    for rank in range(3):
        with sluice.DataLoader(config(rank, 3),
                               resume_from=checkpoints) as resumed:
            delivered += [row for batch in resumed for row in rows(batch)]
    with sluice.DataLoader(config(0, 1)) as loader:
        every = sorted(row for batch in loader for row in rows(batch))
    assert len(every) == positions
    assert sorted(delivered) == every
    with pytest.raises(sluice.ConfigError, match="two checkpoints of rank 0"):
        sluice.DataLoader(config(0, 3),
                          resume_from=[checkpoints[0], checkpoints[0]])


def test_resumable_eval_pass_without_deterministic_mode(games_dir):
    """resumable=True: checkpoints without deterministic mode; the resumed
    eval pass gives the positions not given yet, each once."""
    directory, positions = games_dir
    config = sluice.lc0_pipeline(directory, mode="eval", batch_size=64,
                                 resumable=True)
    assert not config.deterministic
    with sluice.DataLoader(config) as loader:
        every = sorted(row for batch in loader for row in rows(batch))
    assert len(every) == positions
    with sluice.DataLoader(config) as loader:
        first = [row for _ in range(5) for row in rows(loader.get_next())]
        checkpoint = loader.checkpoint()
    with sluice.DataLoader(config, resume_from=checkpoint) as resumed:
        rest = [row for batch in resumed for row in rows(batch)]
    assert sorted(first + rest) == every


def test_bad_checkpoints_raise_config_error(games_dir):
    directory, _ = games_dir
    config = train_config(directory)
    with sluice.DataLoader(config) as loader:
        take(loader, 2)
        checkpoint = loader.checkpoint()
    with pytest.raises(sluice.ConfigError, match="checkpoint"):
        sluice.DataLoader(config, resume_from=checkpoint[:-5])
    with pytest.raises(sluice.ConfigError, match="seed"):
        other = train_config(directory)
        other.seed = 6
        sluice.DataLoader(other, resume_from=checkpoint)
    not_deterministic = sluice.lc0_pipeline(directory, batch_size=64)
    with sluice.DataLoader(not_deterministic) as loader:
        take(loader, 1)
        with pytest.raises(sluice.ConfigError, match="deterministic"):
            loader.checkpoint()


def test_audio_train_and_eval_resume_where_they_stopped(tmp_path):
    """The audio pipelines checkpoint too: a resumed train run yields the
    batches that followed, a resumed eval pass every clip once."""
    sluice.generate_audio(tmp_path, 90, classes=3, files=3, rows_per_batch=16,
                          seed=4)

    def config(mode):
        return sluice.audio_pipeline(tmp_path, mode=mode, clip_seconds=0.25,
                                     n_mels=16, batch_size=16,
                                     shuffle_buffer=48, min_fill=16, seed=2,
                                     deterministic=True)

    def take_named(loader, count):
        return [digest(loader.get_next().values()) for _ in range(count)]

    with sluice.DataLoader(config("train")) as loader:
        reference = take_named(loader, 14)
    with sluice.DataLoader(config("train")) as loader:
        assert take_named(loader, 5) == reference[:5]
        checkpoint = loader.checkpoint()
    with sluice.DataLoader(config("train"), resume_from=checkpoint) as loader:
        assert take_named(loader, 9) == reference[5:]

    with sluice.DataLoader(config("eval")) as loader:
        every = sorted(int(i) for batch in loader for i in batch.index)
    with sluice.DataLoader(config("eval")) as loader:
        first = [int(i) for _ in range(2) for i in loader.get_next().index]
        checkpoint = loader.checkpoint()
    with sluice.DataLoader(config("eval"), resume_from=checkpoint) as loader:
        rest = [int(i) for batch in loader for i in batch.index]
    assert len(every) > 40
    assert sorted(first + rest) == every


def test_audio_eval_resumes_on_another_number_of_ranks(tmp_path):
    """Two ranks' checkpoints of an audio eval pass, resumed on three ranks
    and on one: every clip not delivered before comes once."""
    sluice.generate_audio(tmp_path, 90, classes=3, files=3, rows_per_batch=16,
                          seed=4)

    def config(rank, world_size):
        return sluice.audio_pipeline(tmp_path, mode="eval", clip_seconds=0.25,
                                     n_mels=16, batch_size=8, rank=rank,
                                     world_size=world_size,
                                     deterministic=True)

    with sluice.DataLoader(config(0, 1)) as loader:
        every = sorted(int(i) for batch in loader for i in batch.index)
    assert len(every) > 80  # less the damaged clips
    delivered, checkpoints = [], []
    for rank in range(2):
        with sluice.DataLoader(config(rank, 2)) as loader:
            for _ in range(rank + 1):
                delivered += [int(i) for i in loader.get_next().index]
            checkpoints.append(loader.checkpoint())
    for world_size in (3, 1):
        resumed = list(delivered)
        for rank in range(world_size):
            with sluice.DataLoader(config(rank, world_size),
                                   resume_from=checkpoints) as loader:
                resumed += [int(i) for batch in loader for i in batch.index]
        assert sorted(resumed) == every
