"""The filesystem batch queue in Python: DatasetConsumer and DataProvider.

Same format and layout as the C++ stages (stages/batch_queue/README.md):
``<root>/meta.json`` (strict), ``<root>/queue/<split>/`` holding safetensors
files ``{utc_millis}-{seq:06}-{num_batches}.safetensors`` written as hidden
``.NAME.tmp`` files then renamed, ``<root>/quarantine/`` for corrupt files::

    class CharProvider(sluice.DataProvider):
        def build_meta(self):
            return {"dataset_name": "chars", "training_type": "LM",
                    "batch_schema": [
                        {"name": "x", "dtype": "I64", "shape": [8], "role": "input"},
                        {"name": "y", "dtype": "I64", "shape": [8], "role": "target"}],
                    "split_info": {"train": {}, "val": {}}}
        def sample_batch(self, split, rng):
            x = rng.integers(0, 65, size=(self.batch_size, 8))
            return {"x": x, "y": np.roll(x, -1, axis=1)}

    CharProvider("/data/chars", batch_size=32).run()      # producer process
    consumer = sluice.DatasetConsumer("/data/chars", timeout=60)
    x, y = consumer.get_batch("train")                    # trainer process
"""

import json
import os
import re
import struct

import numpy as np

_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16,
           "U16": np.uint16, "F16": np.float16, "I32": np.int32,
           "U32": np.uint32, "F32": np.float32, "F64": np.float64,
           "I64": np.int64, "U64": np.uint64}
_TRAINING_TYPES = ("LM", "MLM", "CLASSIFICATION", "TOKEN_CLASSIFICATION",
                   "SEQUENCE_SCORING", "LC0")
_NAME = re.compile(r"^(\d+)-(\d+)-(\d+)\.safetensors$")
_MAX_HEADER = 16 << 20


class CorruptFileError(ValueError):
    """A file that is not a valid batch file."""


def _key_error(where, key, problem):
    return ValueError(f"{where}: key '{key}' {problem}")


def _check_schema(schema, where):
    if not isinstance(schema, list) or not schema:
        raise _key_error(where, "batch_schema", "must be a non-empty list")
    names = set()
    for i, field in enumerate(schema):
        at = f"{where}: batch_schema[{i}]"
        if not isinstance(field, dict):
            raise ValueError(f"{at} not an object")
        for key in ("name", "dtype", "role"):
            if not isinstance(field.get(key), str) or not field[key]:
                raise _key_error(at, key, "is missing or not a string")
        if field["dtype"] not in _DTYPES:
            raise _key_error(at, "dtype", f"has unknown value '{field['dtype']}'")
        shape = field.get("shape")
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0
                for d in shape):
            raise _key_error(at, "shape", "must be a list of integers >= 0")
        if field["name"] in names:
            raise _key_error(at, "name", f"'{field['name']}' repeats")
        names.add(field["name"])


def validate_meta(meta, where="meta.json"):
    """Raises ValueError naming the first missing or bad key of `meta`."""
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: not a JSON object")
    for key in ("dataset_name", "training_type"):
        if not isinstance(meta.get(key), str) or not meta[key]:
            raise _key_error(where, key, "is missing or not a non-empty string")
    if meta["training_type"] not in _TRAINING_TYPES:
        raise _key_error(where, "training_type",
                         f"has unknown value '{meta['training_type']}'")
    for key, required in (("batch_size", True), ("vocab_size", False),
                          ("block_size", False), ("target_size", False)):
        if key not in meta and not required:
            continue
        value = meta.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise _key_error(where, key, "is missing or not an integer >= 1")
    if "batch_schema" not in meta:
        raise _key_error(where, "batch_schema", "is missing")
    _check_schema(meta["batch_schema"], where)
    if not isinstance(meta.get("split_info"), dict):
        raise _key_error(where, "split_info", "is missing or not an object")


def write_atomically(directory, name, chunks):
    """Writes the byte strings `chunks` to directory/name via a hidden
    temporary, fsync and rename; no temporary is left on failure."""
    temp = os.path.join(directory, f".{name}.tmp")
    try:
        with open(temp, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, os.path.join(directory, name))
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def encode_batch_file(tensors, metadata):
    """The chunks of a safetensors file holding the C-contiguous numpy
    arrays `tensors` (name -> array, in order) and string `metadata`."""
    inverse = {np.dtype(v): k for k, v in _DTYPES.items()}
    header, offset, arrays = {"__metadata__": metadata}, 0, []
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        header[name] = {"dtype": inverse[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
        arrays.append(array)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return [struct.pack("<Q", len(text)), text] + [a.tobytes() for a in arrays]


def read_batch_file(path):
    """(metadata, {name: array}) of the batch file at `path`, arrays viewing
    one buffer. CorruptFileError when it is not a valid batch file."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        (length,) = struct.unpack("<Q", data[:8])
        if length > _MAX_HEADER or 8 + length > len(data):
            raise CorruptFileError(f"{path}: bad header length {length}")
        header = json.loads(data[8:8 + length])
        meta = header.pop("__metadata__")
        info = {k: int(meta[k]) for k in
                ("batch_size", "num_batches", "sequence", "produced_at")}
        info["split"] = meta["split"]
        info["schema"] = json.loads(meta["schema"])
        _check_schema(info["schema"], path)
        rows = info["batch_size"] * info["num_batches"]
        arrays, spans, start = {}, [], 8 + length
        for field in info["schema"]:
            entry = header.pop(field["name"])
            begin, end = entry["data_offsets"]
            dtype = np.dtype(_DTYPES[entry["dtype"]])
            shape = [rows] + field["shape"]
            if (entry["dtype"] != field["dtype"] or entry["shape"] != shape or
                    end - begin != dtype.itemsize * int(np.prod(shape)) or
                    not 0 <= begin <= end <= len(data) - start):
                raise CorruptFileError(f"{path}: tensor '{field['name']}' "
                                       "does not match the schema")
            arrays[field["name"]] = np.frombuffer(
                data, dtype, int(np.prod(shape)), start + begin).reshape(shape)
            spans.append((begin, end))
        # Back to back in some order: no overlap, no gap, nothing after.
        position = 0
        for begin, end in sorted(spans):
            if begin != position:
                raise CorruptFileError(
                    f"{path}: tensors overlap or leave a gap")
            position = end
        if header or position != len(data) - start:
            raise CorruptFileError(f"{path}: tensors do not cover the data")
    except CorruptFileError:
        raise
    except (KeyError, ValueError, TypeError, struct.error) as error:
        raise CorruptFileError(f"{path}: {error!r}") from None
    return info, arrays


def list_queue(directory):
    """Final file names of a queue directory in (timestamp, seq) order."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    keyed = []
    for name in names:
        match = _NAME.match(name)
        if match:
            keyed.append(((int(match[1]), int(match[2])), name))
    return [name for _, name in sorted(keyed)]
