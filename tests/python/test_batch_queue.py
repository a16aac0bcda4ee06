"""sluice.DataProvider / sluice.DatasetConsumer: the filesystem batch queue
from Python, and its interop with the C++ BatchFileReader stage."""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import sluice
from sluice import _batch_queue as bq

BLOCK = 8


class CharProvider(sluice.DataProvider):
    """An LM provider: x random tokens, y = x shifted."""

    def build_meta(self):
        return {"dataset_name": "chars", "training_type": "LM",
                "vocab_size": 65, "block_size": BLOCK,
                "batch_schema": [
                    {"name": "x", "dtype": "I64", "shape": [BLOCK],
                     "role": "input"},
                    {"name": "y", "dtype": "I64", "shape": [BLOCK],
                     "role": "target"}],
                "split_info": {"train": {}, "val": {}}}

    def sample_batch(self, split, rng):
        x = rng.integers(0, 65, size=(self.batch_size, BLOCK))
        return {"x": x, "y": np.roll(x, -1, axis=1)}


def test_round_trip_order_and_deletion(tmp_path):
    provider = CharProvider(tmp_path, batch_size=4, batches_per_file=3,
                            max_backlog_files=10)
    provider.run(splits=("train",), max_files=2)
    names = bq.list_queue(tmp_path / "queue" / "train")
    assert [n.split("-")[1] for n in names] == ["000001", "000002"]
    consumer = sluice.DatasetConsumer(tmp_path, timeout=5)
    assert consumer.meta["vocab_size"] == 65
    assert [f["name"] for f in consumer.schema("train")] == ["x", "y"]
    batches = [consumer.get_batch("train") for _ in range(6)]
    for x, y in batches:
        assert x.shape == (4, BLOCK) and x.dtype == np.int64
        np.testing.assert_array_equal(np.roll(x, -1, axis=1), y)
    # Deterministic per file: file 1 regenerated gives the same batches.
    rng = np.random.default_rng([1337, 1, __import__("zlib").crc32(b"train")])
    np.testing.assert_array_equal(batches[0][0],
                                  provider.sample_batch("train", rng)["x"])
    assert bq.list_queue(tmp_path / "queue" / "train") == []
    assert consumer.stats()["files_consumed"] == 2


def test_timeout_when_empty(tmp_path):
    CharProvider(tmp_path, batch_size=2).run(splits=("train",), max_files=0)
    consumer = sluice.DatasetConsumer(tmp_path, timeout=0.1)
    assert not consumer.wait_for_data("train", timeout=0.05)
    with pytest.raises(TimeoutError):
        consumer.get_batch("train")


def test_backpressure_and_two_threads(tmp_path):
    provider = CharProvider(tmp_path, batch_size=2, batches_per_file=2,
                            max_backlog_files=2, poll_interval=0.005)
    thread = threading.Thread(target=provider.run,
                              kwargs={"splits": ("train",), "max_files": 10})
    thread.start()
    consumer = sluice.DatasetConsumer(tmp_path, timeout=10)
    most = 0
    for _ in range(20):
        most = max(most, provider.backlog_size("train"))
        consumer.get_batch("train")
    thread.join(10)
    assert not thread.is_alive()
    assert most <= 2
    assert not consumer.wait_for_data("train", timeout=0.05)


def test_strict_meta(tmp_path):
    meta = CharProvider(tmp_path, 2).build_meta()
    meta["batch_size"] = 2
    del meta["split_info"]
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'split_info'"):
        sluice.DatasetConsumer(tmp_path).meta
    with pytest.raises(ValueError, match="'split_info'"):
        CharProvider(tmp_path, 2).run(max_files=1)


def test_corrupt_file_quarantined_and_restart_rereads(tmp_path):
    provider = CharProvider(tmp_path, batch_size=2, batches_per_file=2,
                            max_backlog_files=10)
    provider.run(splits=("train",), max_files=3)
    queue = tmp_path / "queue" / "train"
    first, second, third = bq.list_queue(queue)
    os.truncate(queue / second, 100)
    consumer = sluice.DatasetConsumer(tmp_path, timeout=1)
    consumer.get_batch("train")  # killed mid-file: `first` stays
    assert bq.list_queue(queue)[0] == first
    consumer = sluice.DatasetConsumer(tmp_path, timeout=1)
    for _ in range(4):
        consumer.get_batch("train")
    assert consumer.stats()["quarantined"] == 1
    assert os.listdir(tmp_path / "quarantine") == [f"train-{second}"]
    assert bq.list_queue(queue) == []


def test_overlapping_tensors_are_corrupt(tmp_path):
    CharProvider(tmp_path, batch_size=2, batches_per_file=1).run(
        splits=("train",), max_files=1)
    (name,) = bq.list_queue(tmp_path / "queue" / "train")
    path = tmp_path / "queue" / "train" / name
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    # y over x, and a gap as large after: the sizes still add up.
    header["y"]["data_offsets"] = header["x"]["data_offsets"]
    text = json.dumps(header, separators=(",", ":")).encode()
    assert len(text) <= length
    path.write_bytes(data[:8] + text.ljust(length) + data[8 + length:])
    with pytest.raises(bq.CorruptFileError, match="overlap"):
        bq.read_batch_file(path)


def test_legacy_files_cycle(tmp_path):
    provider = CharProvider(tmp_path / "gen", batch_size=2, batches_per_file=1)
    provider.run(splits=("train",), max_files=1)
    (name,) = bq.list_queue(tmp_path / "gen" / "queue" / "train")
    os.replace(tmp_path / "gen" / "queue" / "train" / name,
               tmp_path / "train_batches_0001.safetensors")
    os.replace(tmp_path / "gen" / "meta.json", tmp_path / "meta.json")
    consumer = sluice.DatasetConsumer(tmp_path, timeout=1)
    x1, _ = consumer.get_batch("train")
    x2, _ = consumer.get_batch("train")
    np.testing.assert_array_equal(x1, x2)
    assert os.path.exists(tmp_path / "train_batches_0001.safetensors")


class Lc0Provider(sluice.DataProvider):
    """Files with the lc0 TensorBatch schema, for the C++ reader."""

    def build_meta(self):
        shapes = [("planes", [112, 8, 8], "input"), ("probs", [1858], "target"),
                  ("winner", [3], "target"), ("best_q", [3], "target"),
                  ("plies_left", [], "target")]
        return {"dataset_name": "lc0", "training_type": "LC0",
                "batch_schema": [{"name": n, "dtype": "F32", "shape": s,
                                  "role": r} for n, s, r in shapes],
                "split_info": {}}

    def sample_batch(self, split, rng):
        return {f["name"]: rng.random((self.batch_size, *f["shape"]),
                                      dtype=np.float32)
                for f in self.meta["batch_schema"]}


def read_queue_with_cpp(root):
    """Every batch of `root`'s train split, through the C++ reader stage."""
    config = sluice.DataLoaderConfig()
    stage = config.stage.add(name="reader")
    stage.batch_file_reader.root = str(root)
    stage.batch_file_reader.split = "train"
    stage.batch_file_reader.idle_timeout_ms = 200
    with sluice.DataLoader(config) as loader:
        return list(loader)


def test_cpp_reader_reads_python_files(tmp_path):
    provider = Lc0Provider(tmp_path, batch_size=3, batches_per_file=2,
                           max_backlog_files=10)
    provider.run(splits=("train",), max_files=2)
    expected = [bq.read_batch_file(tmp_path / "queue" / "train" / n)[1]
                for n in bq.list_queue(tmp_path / "queue" / "train")]
    got = read_queue_with_cpp(tmp_path)
    assert len(got) == 4
    for i, batch in enumerate(got):
        arrays = expected[i // 2]
        for name, array in zip(("planes", "probs", "winner", "best_q",
                                "plies_left"), batch):
            np.testing.assert_array_equal(
                array, arrays[name][(i % 2) * 3:(i % 2) * 3 + 3])
    assert bq.list_queue(tmp_path / "queue" / "train") == []


def test_lc0_queue_producer_example(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "..", "bindings",
                           "python", "examples", "lc0_queue_producer.py")
    result = subprocess.run(
        [sys.executable, example, str(tmp_path / "games"),
         str(tmp_path / "queue")],
        capture_output=True, text=True, timeout=300, check=True)
    consumed = int(result.stdout.split("consumed ")[1].split()[0])
    assert consumed > 0
    assert bq.list_queue(tmp_path / "queue" / "queue" / "train") == []


class TypedProvider(sluice.DataProvider):
    """Every dtype sluice carries, for the C++ reader."""

    FIELDS = [("label", "I64", [], np.int64), ("pixels", "U8", [2, 3], np.uint8),
              ("mask", "BOOL", [4], np.bool_), ("half", "F16", [2], np.float16),
              ("wide", "F64", [], np.float64), ("small", "I8", [3], np.int8),
              ("short", "I16", [], np.int16), ("word", "I32", [2], np.int32),
              ("x", "F32", [5], np.float32)]

    def build_meta(self):
        return {"dataset_name": "typed", "training_type": "CLASSIFICATION",
                "batch_schema": [{"name": n, "dtype": d, "shape": s,
                                  "role": "input" if n == "x" else "target"}
                                 for n, d, s, _ in self.FIELDS],
                "split_info": {}}

    def sample_batch(self, split, rng):
        batch = {}
        for name, _, shape, dtype in self.FIELDS:
            values = rng.integers(-100, 100, size=(self.batch_size, *shape))
            batch[name] = (values > 0 if dtype is np.bool_ else
                           values.astype(dtype))
        return batch


def test_typed_tensors_through_the_cpp_reader(tmp_path):
    provider = TypedProvider(tmp_path, batch_size=3, batches_per_file=2,
                             max_backlog_files=10)
    provider.run(splits=("train",), max_files=1)
    expected = bq.read_batch_file(
        tmp_path / "queue" / "train" /
        bq.list_queue(tmp_path / "queue" / "train")[0])[1]
    got = read_queue_with_cpp(tmp_path)
    assert len(got) == 2
    for i, batch in enumerate(got):
        # Not lc0's five tensors: a read-only mapping with attribute access.
        assert isinstance(batch, sluice.Tensors)
        assert list(batch) == [name for name, *_ in TypedProvider.FIELDS]
        for name, _, shape, dtype in TypedProvider.FIELDS:
            array = batch[name]
            assert array.dtype == np.dtype(dtype), name
            assert array.shape == (3, *shape), name
            np.testing.assert_array_equal(array,
                                          expected[name][i * 3:i * 3 + 3])
        assert batch.label is batch["label"]
        with pytest.raises(AttributeError, match="no tensor 'nope'"):
            batch.nope
        with pytest.raises(AttributeError, match="read-only"):
            batch.label = None
        plain = batch.to_dict()
        assert type(plain) is dict and plain.keys() == batch.keys()
        plain["extra"] = 1  # a plain dict is mutable; the batch is not
        assert "extra" not in batch
        assert "label: int64[3]" in repr(batch)
    # The arrays own their buffer: they stay valid after the loader is gone.
    np.testing.assert_array_equal(got[1].label, expected["label"][3:6])
