"""sluice.DatasetConsumer and sluice.DataProvider: the two ends of a
filesystem batch queue (see sluice._batch_queue for format and layout)."""

import json
import os
import threading
import time
import zlib

import numpy as np

from sluice import _batch_queue as bq


def _legacy_files(root, split):
    prefix = f"{split}_batches_"
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    return sorted(n for n in names
                  if n.startswith(prefix) and n.endswith(".safetensors"))


class DatasetConsumer:
    """Reads batches from a queue, in (timestamp, seq) order, deleting each
    file once all its batches were returned (the producer's signal to make
    more; a process killed mid-file re-reads it: at-least-once).

    get_batch blocks until a file is there, up to `timeout` seconds (None:
    forever), then raises TimeoutError. Corrupt files are moved to
    <root>/quarantine/ and counted; a valid file whose schema differs from
    meta.json raises ValueError naming the field (the file stays). When
    <root>/queue/ is absent, reads the legacy <root>/{split}_batches_*
    .safetensors files in name order, cyclically, never deleting them."""

    def __init__(self, root, split="train", timeout=None, poll_interval=0.02,
                 delete_attempts=6):
        self.root = os.fspath(root)
        self.split = split
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.delete_attempts = delete_attempts
        self._meta = None
        self._state = {}
        self._stats = {"batches": 0, "files_consumed": 0, "quarantined": 0,
                       "delete_retries": 0, "wait_seconds": 0.0}

    @property
    def meta(self):
        """meta.json, validated (ValueError naming a missing or bad key)."""
        if self._meta is None:
            with open(os.path.join(self.root, "meta.json")) as f:
                meta = json.load(f)
            bq.validate_meta(meta, os.path.join(self.root, "meta.json"))
            self._meta = meta
        return self._meta

    def schema(self, split=None):
        """The batch schema (a list of field dicts) of `split`."""
        return self.meta["batch_schema"]

    def stats(self):
        """Counters, plus the current file and batch index per split."""
        out = dict(self._stats)
        for split, state in self._state.items():
            out[f"{split}_file"] = state.get("name")
            out[f"{split}_batch_index"] = state.get("index", 0)
        return out

    def _legacy(self):
        return not os.path.isdir(os.path.join(self.root, "queue"))

    def _queue_dir(self, split):
        return os.path.join(self.root, "queue", split)

    def _available(self, split):
        if self._legacy():
            return _legacy_files(self.root, split)
        return bq.list_queue(self._queue_dir(split))

    def wait_for_data(self, split=None, timeout=None):
        """True once `split` has a file (or a loaded batch); False after
        `timeout` seconds (None: wait forever)."""
        split = split or self.split
        if self._state.get(split, {}).get("arrays") is not None:
            return True
        start = time.monotonic()
        while not self._available(split):
            if timeout is not None and time.monotonic() - start >= timeout:
                return False
            time.sleep(self.poll_interval)
            self._stats["wait_seconds"] += self.poll_interval
        return True

    def _quarantine(self, directory, name, split):
        target = os.path.join(self.root, "quarantine")
        os.makedirs(target, exist_ok=True)
        try:
            os.replace(os.path.join(directory, name),
                       os.path.join(target, f"{split}-{name}"))
        except FileNotFoundError:
            pass
        self._stats["quarantined"] += 1

    def _load(self, split):
        state = self._state.setdefault(split, {"legacy_next": 0})
        while True:
            if not self.wait_for_data(split, self.timeout):
                raise TimeoutError(
                    f"no batch file for split '{split}' in {self.timeout} s")
            legacy = self._legacy()
            directory = self.root if legacy else self._queue_dir(split)
            names = self._available(split)
            if not names:
                continue
            if legacy:
                name = names[state["legacy_next"] % len(names)]
                state["legacy_next"] += 1
            else:
                name = names[0]
            try:
                info, arrays = bq.read_batch_file(os.path.join(directory, name))
            except FileNotFoundError:
                continue
            except bq.CorruptFileError:
                if legacy:
                    raise
                self._quarantine(directory, name, split)
                continue
            if info["schema"] != self.schema(split):
                raise ValueError(
                    f"{os.path.join(directory, name)}: schema mismatch with "
                    f"meta.json: {info['schema']} != {self.schema(split)}")
            state.update(name=name, directory=directory, info=info,
                         arrays=arrays, index=0, legacy=legacy)
            return state

    def _delete(self, path):
        wait = 0.01
        for attempt in range(1, self.delete_attempts + 1):
            try:
                os.unlink(path)
                return
            except FileNotFoundError:
                return
            except OSError as error:
                if attempt == self.delete_attempts:
                    raise OSError(error.errno, f"cannot delete consumed batch "
                                  f"file {path} after {attempt} attempts: "
                                  f"{error.strerror}") from error
                self._stats["delete_retries"] += 1
                time.sleep(wait)
                wait *= 2

    def get_batch(self, split=None):
        """The next batch of `split`: a dict of numpy arrays, or (x, y) when
        the schema is exactly the fields x and y."""
        split = split or self.split
        state = self._state.get(split)
        if state is None or state.get("arrays") is None:
            state = self._load(split)
        size = state["info"]["batch_size"]
        start = state["index"] * size
        batch = {k: v[start:start + size] for k, v in state["arrays"].items()}
        state["index"] += 1
        self._stats["batches"] += 1
        if state["index"] == state["info"]["num_batches"]:
            state["arrays"] = None
            if not state["legacy"]:
                self._delete(os.path.join(state["directory"], state["name"]))
            self._stats["files_consumed"] += 1
        if [f["name"] for f in self.schema(split)] == ["x", "y"]:
            return batch["x"], batch["y"]
        return batch


class DataProvider:
    """Base of a dataset's producer: subclasses implement build_meta() (the
    meta.json dict; batch_size is filled in) and sample_batch(split, rng)
    (a dict of arrays shaped [batch_size] + field shape). run() writes files
    of `batches_per_file` batches per split, waiting while a split holds
    `max_backlog_files` files; file `seq` of a split uses the RNG
    numpy.random.default_rng([seed, seq, crc32(split)]), so reruns are
    reproducible."""

    def __init__(self, root, batch_size, batches_per_file=100,
                 max_backlog_files=2, poll_interval=0.05, seed=1337):
        self.root = os.fspath(root)
        self.batch_size = batch_size
        self.batches_per_file = batches_per_file
        self.max_backlog_files = max_backlog_files
        self.poll_interval = poll_interval
        self.seed = seed
        self.stop_event = threading.Event()
        self.meta = None

    def build_meta(self):
        raise NotImplementedError

    def sample_batch(self, split, rng):
        raise NotImplementedError

    def backlog_size(self, split):
        """Final files waiting in `split`'s queue."""
        return len(bq.list_queue(os.path.join(self.root, "queue", split)))

    def _prepare(self, splits):
        meta = dict(self.build_meta())
        meta["batch_size"] = self.batch_size
        bq.validate_meta(meta, "build_meta()")
        for split in splits:  # queue/ first: a consumer must not see legacy
            directory = os.path.join(self.root, "queue", split)
            os.makedirs(directory, exist_ok=True)
            for name in os.listdir(directory):
                if name.startswith(".") and name.endswith(".tmp"):
                    os.unlink(os.path.join(directory, name))
        path = os.path.join(self.root, "meta.json")
        if os.path.exists(path):
            with open(path) as f:
                existing = json.load(f)
            bq.validate_meta(existing, path)
            for key, value in meta.items():
                if existing.get(key) != value:
                    raise ValueError(f"{path}: key '{key}' differs from "
                                     "build_meta()")
        else:
            bq.write_atomically(self.root, "meta.json",
                                [json.dumps(meta, indent=2).encode()])
        self.meta = meta

    def produce_one_file(self, split, seq):
        """Samples batches_per_file batches and writes them as file `seq`."""
        rng = np.random.default_rng([self.seed, seq, zlib.crc32(split.encode())])
        schema = self.meta["batch_schema"]
        parts = {f["name"]: [] for f in schema}
        for _ in range(self.batches_per_file):
            batch = self.sample_batch(split, rng)
            for field in schema:
                array = np.asarray(batch[field["name"]])
                want = (self.batch_size, *field["shape"])
                if (array.shape != want or
                        array.dtype != np.dtype(bq._DTYPES[field["dtype"]])):
                    raise ValueError(
                        f"sample_batch: field '{field['name']}' is "
                        f"{array.dtype}{list(array.shape)}, expected "
                        f"{field['dtype']}{list(want)}")
                parts[field["name"]].append(array)
        now = int(time.time() * 1000)
        metadata = {"batch_size": str(self.batch_size),
                    "num_batches": str(self.batches_per_file),
                    "sequence": str(seq), "split": split,
                    "produced_at": str(now),
                    "schema": json.dumps(schema, separators=(",", ":"))}
        tensors = {k: np.concatenate(v) for k, v in parts.items()}
        name = f"{now}-{seq:06d}-{self.batches_per_file}.safetensors"
        bq.write_atomically(os.path.join(self.root, "queue", split), name,
                            bq.encode_batch_file(tensors, metadata))
        return name

    def run(self, splits=("train", "val"), max_files=None):
        """Produces files for `splits` until stop_event is set (or, when
        given, `max_files` files per split were written)."""
        self._prepare(splits)
        seqs = {}
        for split in splits:
            names = bq.list_queue(os.path.join(self.root, "queue", split))
            seqs[split] = 1 + max((int(n.split("-")[1]) for n in names),
                                  default=0)
        written = dict.fromkeys(splits, 0)
        while not self.stop_event.is_set():
            pending = [s for s in splits
                       if max_files is None or written[s] < max_files]
            if not pending:
                return
            produced = False
            for split in pending:
                if self.backlog_size(split) < self.max_backlog_files:
                    self.produce_one_file(split, seqs[split])
                    seqs[split] += 1
                    written[split] += 1
                    produced = True
            if not produced:
                self.stop_event.wait(self.poll_interval)
