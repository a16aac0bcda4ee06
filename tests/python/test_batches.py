"""Batches: shapes, dtypes and values against the golden fixtures, every
position exactly once in eval mode, and the zero-copy hand-over."""

import collections
import gc
import shutil

import numpy as np
import pytest

import sluice
from conftest import GOLDEN_DIR, rss_bytes

# Quick enough for the installed-wheel check of scripts/test.sh.
pytestmark = pytest.mark.smoke

FIXTURES = sorted(path.stem for path in GOLDEN_DIR.glob("*.gz"))
TENSORS = ("planes", "probs", "winner", "best_q", "plies_left")
ROW_SHAPES = {
    "planes": (112, 8, 8),
    "probs": (1858,),
    "winner": (3,),
    "best_q": (3,),
    "plies_left": (),
}


def rows(batch):
    """One bytes key per position: its five tensors' bytes."""
    return [
        b"".join(getattr(batch, name)[i].tobytes() for name in TENSORS)
        for i in range(len(batch.plies_left))
    ]


def eval_batches(directory, **options):
    config = sluice.lc0_pipeline(directory, mode="eval", **options)
    with sluice.DataLoader(config) as loader:
        return list(loader)


def golden(name):
    with np.load(GOLDEN_DIR / f"{name}.npz") as npz:
        return {key: npz[key] for key in npz.files}


def golden_dir(tmp_path, names):
    directory = tmp_path / "data"
    directory.mkdir()
    for name in names:
        shutil.copy(GOLDEN_DIR / f"{name}.gz", directory)
    return directory


def test_fixtures_exist():
    assert len(FIXTURES) >= 10


@pytest.mark.parametrize("name", FIXTURES)
def test_batches_match_the_golden_fixture(tmp_path, name):
    expected = golden(name)
    batches = eval_batches(golden_dir(tmp_path, [name]), batch_size=5,
                           input_format=int(expected["input_format"]))
    for batch in batches:
        assert isinstance(batch, tuple) and len(batch) == 5
        size = len(batch.plies_left)
        assert 1 <= size <= 5
        for tensor in TENSORS:
            array = getattr(batch, tensor)
            assert array.dtype == np.float32
            assert array.shape == (size,) + ROW_SHAPES[tensor]
            assert array.flags.c_contiguous
    expected_rows = rows(
        sluice.Batch(*(expected[tensor] for tensor in TENSORS)))
    # The reservoir may reorder positions: compare as multisets, bit for bit.
    got = collections.Counter(row for batch in batches for row in rows(batch))
    assert got == collections.Counter(expected_rows)


def test_eval_yields_every_golden_position_exactly_once(tmp_path):
    names = ["v6_fmt1_a", "v6_fmt1_b", "v6_fmt1_plies0", "v5_fmt1", "v4", "v3"]
    expected = collections.Counter()
    for name in names:
        arrays = golden(name)
        expected.update(rows(sluice.Batch(*(arrays[t] for t in TENSORS))))
    batches = eval_batches(golden_dir(tmp_path, names), batch_size=7)
    got = collections.Counter(row for batch in batches for row in rows(batch))
    assert sum(got.values()) == 16 * len(names)
    assert got == expected


def test_eval_ends_after_every_generated_position_once(games_dir):
    directory, positions = games_dir
    first = collections.Counter(
        row for batch in eval_batches(directory, batch_size=256, seed=1)
        for row in rows(batch))
    second = collections.Counter(
        row for batch in eval_batches(directory, batch_size=100, seed=2)
        for row in rows(batch))
    assert sum(first.values()) == positions
    assert first == second


def test_arrays_outlive_the_loader(tmp_path):
    expected = golden("v6_fmt1_a")
    config = sluice.lc0_pipeline(golden_dir(tmp_path, ["v6_fmt1_a"]),
                                 mode="eval", batch_size=16)
    loader = sluice.DataLoader(config)
    loader.start()
    batch = loader.get_next()
    assert loader.get_next() is None
    loader.stop()
    del loader
    gc.collect()
    # Churn the allocator so a freed buffer would likely be reused.
    garbage = [np.ones(1 << 20, np.float32) for _ in range(64)]
    del garbage
    expected_rows = collections.Counter(
        rows(sluice.Batch(*(expected[t] for t in TENSORS))))
    assert collections.Counter(rows(batch)) == expected_rows


def data_address(array):
    return array.__array_interface__["data"][0]


def test_arrays_view_one_engine_buffer_without_copy(games_dir):
    directory, _ = games_dir
    config = sluice.lc0_pipeline(directory, mode="eval", batch_size=32)
    with sluice.DataLoader(config) as loader:
        batch = loader.get_next()
    base = batch.planes.base
    assert base is not None and not isinstance(base, np.ndarray)
    assert type(base).__name__ == "PyCapsule"
    addresses = [data_address(array) for array in batch]
    for array in batch:
        assert not array.flags.owndata
        assert array.base is base
    # One allocation: 64-byte aligned tensors back to back, in tuple order.
    assert all(address % 64 == 0 for address in addresses)
    assert addresses == sorted(addresses)
    for array, following in zip(batch[:-1], addresses[1:]):
        gap = following - (data_address(array) + array.nbytes)
        assert 0 <= gap < 64
    # Handing the arrays on (views, numpy functions) keeps the address.
    view = np.asarray(batch.planes).reshape(32, -1)
    assert data_address(view) == addresses[0]
    assert np.shares_memory(view, batch.planes)


def test_dropped_batches_are_freed(games_dir):
    directory, _ = games_dir
    config = sluice.lc0_pipeline(directory, batch_size=1024, reservoir=2000,
                                 min_fill=1000, chunk_pool_size=100)
    batch_bytes = 1024 * (112 * 64 + 1858 + 3 + 3 + 1) * 4
    with sluice.DataLoader(config) as loader:
        for _ in range(5):
            loader.get_next()
        before = rss_bytes()
        for _ in range(40):
            batch = loader.get_next()
            assert batch.planes.shape == (1024, 112, 8, 8)
            del batch
        grown = rss_bytes() - before
    # 40 leaked batches would be 40 * 30 MB.
    assert grown < 10 * batch_bytes
