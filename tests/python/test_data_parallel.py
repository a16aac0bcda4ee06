"""Ranks and deterministic mode from Python: sluice.lc0_pipeline and
sluice.audio_pipeline with rank / world_size / deterministic."""

import hashlib

import numpy as np
import pytest

import sluice


def position_digests(config):
    """A digest of every position of every batch, in order."""
    digests = []
    with sluice.DataLoader(config) as loader:
        for batch in loader:
            for i in range(batch.planes.shape[0]):
                digest = hashlib.sha1()
                for tensor in batch:
                    digest.update(np.ascontiguousarray(tensor[i]).tobytes())
                digests.append(digest.hexdigest())
    return digests


@pytest.mark.parametrize("world_size", [2, 3])
def test_two_ranks_eval_passes_partition_the_data_exactly(games_dir,
                                                          world_size):
    directory, positions = games_dir
    everything = position_digests(
        sluice.lc0_pipeline(directory, mode="eval", batch_size=128))
    assert len(everything) == positions
    shards = [position_digests(
        sluice.lc0_pipeline(directory, mode="eval", batch_size=128,
                            rank=rank, world_size=world_size))
              for rank in range(world_size)]
    for shard in shards:
        assert 0 < len(shard) < positions
    together = sorted(digest for shard in shards for digest in shard)
    assert together == sorted(everything)


def test_deterministic_batches_do_not_depend_on_threads(games_dir):
    directory, _ = games_dir
    runs = []
    for threads in (1, 2, 4):
        config = sluice.lc0_pipeline(directory, mode="eval", batch_size=64,
                                     threads=threads, deterministic=True)
        for stage in config.stage:
            if stage.HasField("chunk_unpacker"):
                stage.chunk_unpacker.parallelism = threads
            if stage.HasField("tensor_generator"):
                stage.tensor_generator.parallelism = threads
        runs.append(position_digests(config))
    assert runs[0] == runs[1] == runs[2]


def test_audio_ranks_partition_the_rows(tmp_path):
    written = sluice.generate_audio(tmp_path, 60, files=2, corrupt_every=0)
    assert written["clips"] == 60

    def indexes(**ranks):
        config = sluice.audio_pipeline(tmp_path, mode="eval", batch_size=8,
                                       clip_seconds=0.2, n_mels=8, **ranks)
        with sluice.DataLoader(config) as loader:
            return sorted(int(i) for batch in loader for i in batch.index)

    everything = indexes()
    assert everything == list(range(60))
    first, second = indexes(rank=0, world_size=2), indexes(rank=1,
                                                           world_size=2)
    assert abs(len(first) - 30) <= 2
    assert sorted(first + second) == everything


@pytest.mark.parametrize("ranks, message", [
    (dict(rank=2, world_size=2), "rank must be in [0, world_size=2)"),
    (dict(rank=-1, world_size=2), "rank must be in"),
    (dict(world_size=0), "world_size must be >= 1"),
])
def test_bad_ranks_raise_config_error(games_dir, ranks, message):
    directory, _ = games_dir
    with pytest.raises(sluice.ConfigError, match=message.replace(
            "[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        sluice.lc0_pipeline(directory, mode="eval", **ranks)


@pytest.mark.parametrize("workload, unit", [("lc0", "positions"),
                                            ("audio", "clips")])
def test_ddp_train_example_runs_two_ranks_and_resumes(tmp_path, workload,
                                                      unit):
    pytest.importorskip("torch", reason="needs python3-torch")
    import pathlib
    import subprocess
    import sys
    example = pathlib.Path(__file__).resolve().parents[2] / "bindings" / \
        "python" / "examples" / "ddp_train.py"

    def torchrun(*args, ranks=2):
        done = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone",
             "--nproc_per_node", str(ranks),
             # Debian's torchrun fails to parse its own default
             # "--redirects 0" on Python 3.11+ (IntFlag no longer yields
             # Std.NONE).
             "--redirects", "1", "--tee", "1", str(example),
             "--workload", workload, "--batch-size", "64",
             "--checkpoint-dir", str(tmp_path), "--checkpoint-every", "2",
             *args],
            capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    first = torchrun("--steps", "4")
    assert "rank 0: step 4 loss" in first
    assert "rank 1: step 4 loss" in first
    assert f"{unit} over 2 ranks (the data set has" in first
    for rank in (0, 1):
        assert (tmp_path / f"rank{rank}.sluice").stat().st_size > 0
        assert (tmp_path / f"rank{rank}.pt").exists()
    # On another number of ranks (writing no checkpoint, so that each
    # resume starts from the two ranks' checkpoints of step 4).
    for ranks in (3, 1):
        elastic = torchrun("--steps", "6", "--resume", "--checkpoint-every",
                           "100", ranks=ranks)
        for rank in range(ranks):
            assert (f"rank {rank}: resumed from step 4 (the checkpoints of 2 "
                    "ranks)") in elastic
        assert f"rank {ranks - 1}: step 6 loss" in elastic
        assert f"{unit} over {ranks} ranks (the data set has" in elastic
    resumed = torchrun("--steps", "6", "--resume")
    assert "rank 0: resumed from step 4" in resumed
    assert "rank 1: resumed from step 4" in resumed
    assert "rank 0: step 6 loss" in resumed
