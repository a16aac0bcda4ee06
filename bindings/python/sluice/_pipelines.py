"""Ready-made configs and test data: the default lc0 and audio pipelines,
the synthetic game generator and the synthetic audio clip generator."""

import os

from sluice import _sluice
from sluice._sluice import ConfigError
from sluice.proto.data_loader_config_pb2 import (ChunkRescorerConfig,
                                                 DataLoaderConfig, StageConfig,
                                                 TraceConfig)


class Rescorer:
    """Rescoring of every game as Leela Chess Zero's rescorer does, for
    ``lc0_pipeline(..., rescore=sluice.Rescorer(...))`` (a stage between
    the chunk pool and the unpacker; stages/lc0/README.md).

    `syzygy_paths`: a directory or a list of directories of Syzygy
    *.rtbw/*.rtbz tables (game results and plies_left the tables prove).
    `deblunder`: None, or (threshold, width) as lc0's
    --deblunder-q-blunder-threshold/-width, e.g. (0.1, 0.03).
    `dtz_policy_boost`, `temperature`, `dist_offset`: lc0's policy options.
    `new_input_format`: -1 (keep), 1 or 3. `output_version`: 6, or 7 for
    lczero-training's V7 records (q_st, d_st, opp/next_played_idx).
    `parallelism`: games rescored at once.
    """

    def __init__(self, syzygy_paths, *, deblunder=None, dtz_policy_boost=0.0,
                 temperature=1.0, dist_offset=0.0, new_input_format=-1,
                 output_version=6, parallelism=2):
        self.syzygy_paths = _directories(syzygy_paths)
        if not self.syzygy_paths:
            raise ConfigError("Rescorer: syzygy_paths is empty")
        if deblunder is not None and len(tuple(deblunder)) != 2:
            raise ConfigError("Rescorer: deblunder is (threshold, width)")
        self.deblunder = None if deblunder is None else tuple(deblunder)
        self.dtz_policy_boost = dtz_policy_boost
        self.temperature = temperature
        self.dist_offset = dist_offset
        self.new_input_format = new_input_format
        self.output_version = output_version
        self.parallelism = parallelism

    def config(self):
        """The ChunkRescorerConfig of these options."""
        config = ChunkRescorerConfig(
            syzygy_paths=self.syzygy_paths,
            dtz_policy_boost=self.dtz_policy_boost,
            temperature=self.temperature, dist_offset=self.dist_offset,
            new_input_format=self.new_input_format,
            output_version=self.output_version, parallelism=self.parallelism)
        if self.deblunder is not None:
            config.deblunder.threshold, config.deblunder.width = self.deblunder
        return config


def _insert_rescorer(config, rescorer):
    """Puts a "rescorer" stage in front of the chunk unpacker (as the C++
    lc0::InsertRescorer)."""
    for i, stage in enumerate(config.stage):
        if not stage.HasField("chunk_unpacker"):
            continue
        new = StageConfig(name="rescorer", input=list(stage.input))
        new.chunk_rescorer.CopyFrom(rescorer.config())
        del stage.input[:]
        stage.input.append("rescorer")
        stages = []
        for old in config.stage:
            copy = StageConfig()
            copy.CopyFrom(old)
            stages.append(copy)
        stages.insert(i, new)
        del config.stage[:]
        config.stage.extend(stages)
        return


def lc0_pipeline(directory, *, batch_size=None, chunk_pool_size=None,
                 reservoir=None, min_fill=None, mode="train", seed=None,
                 threads=None, input_format=None, rank=0, world_size=1,
                 deterministic=False, resumable=False, metrics_port=0,
                 rescore=None, trace=None):
    """Returns the DataLoaderConfig of the default lc0 pipeline.

    `directory` is one data directory or a list of them (tars and loose
    .gz chunks). mode "train" watches the directories and never ends (a
    shuffled window of `chunk_pool_size` games, a reservoir of `reservoir`
    frames that starts emitting at `min_fill`); mode "eval" reads the files
    present once and yields every position exactly once. Options left None
    keep the defaults of proto/examples/lc0_{train,eval}.textproto;
    `threads` 0 means one per core. A bad option raises ConfigError (a
    ValueError).

    Data-parallel training runs one loader per process: `rank` of
    `world_size` reads only its shard (disjoint shards that together hold
    every chunk, each rank within a chunk per tar of its share).
    `deterministic` gives the same batches at any thread count (see
    docs/guarantees.md). `resumable` lets DataLoader.checkpoint() work
    without it: a resume then repeats and loses nothing, but its batches
    differ from those an uninterrupted run would have given.

    `metrics_port` (0: off) serves the loader's metrics for Prometheus on
    http://127.0.0.1:metrics_port/metrics while it runs (set
    ``config.metrics_address = "0.0.0.0"`` to listen on every interface).

    `rescore`: a sluice.Rescorer to rescore every game (Syzygy tablebases,
    deblunder) before it is unpacked.

    `trace` records a trace of the run for Perfetto UI or chrome://tracing:
    a file path, or a TraceConfig for its bounds (see _set_trace).
    """
    directories = _directories(directory)
    options = dict(batch_size=batch_size, chunk_pool_size=chunk_pool_size,
                   reservoir=reservoir, min_fill=min_fill, seed=seed,
                   threads=threads, input_format=input_format)
    for name, value in options.items():
        if value is not None and value < 0:
            raise ConfigError(f"lc0 pipeline: {name} must be >= 0, "
                              f"not {value}")
    config = DataLoaderConfig.FromString(
        _sluice.lc0_pipeline(directories, mode, **options,
                             **_data_parallel("lc0", rank, world_size,
                                              deterministic)))
    config.resumable = bool(resumable)
    config.metrics_port = _metrics_port("lc0", metrics_port)
    if rescore is not None:
        _insert_rescorer(config, rescore)
    _set_trace(config, trace)
    return config


def _metrics_port(pipeline, port):
    if not 0 <= port <= 65535:
        raise ConfigError(f"{pipeline} pipeline: metrics_port must be a TCP "
                          f"port, 1-65535 (0: off), not {port}")
    return port


def _set_trace(config, trace):
    """Sets config.trace from `trace`: None (no trace), a path (str or
    os.PathLike; the other bounds keep their defaults: 1,000,000 events,
    the whole run) or a TraceConfig. The file is written when the loader
    stops; a path that cannot be written raises ConfigError when the
    DataLoader is built."""
    if trace is None:
        return
    if isinstance(trace, TraceConfig):
        config.trace.CopyFrom(trace)
    elif isinstance(trace, (str, os.PathLike)):
        config.trace.file = os.fspath(trace)
    else:
        raise ConfigError("trace must be a path or a TraceConfig, not "
                          f"{type(trace).__name__}")


def _data_parallel(pipeline, rank, world_size, deterministic):
    if world_size < 1:
        raise ConfigError(f"{pipeline} pipeline: world_size must be >= 1, "
                          f"not {world_size}")
    if not 0 <= rank < world_size:
        raise ConfigError(f"{pipeline} pipeline: rank must be in [0, "
                          f"world_size={world_size}), not {rank}")
    return dict(rank=rank, world_size=world_size,
                deterministic=bool(deterministic))


def _directories(paths):
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(entry) for entry in paths]


def audio_pipeline(paths, mode="train", sample_rate=16000, clip_seconds=1.0,
                   n_fft=400, hop_length=160, n_mels=64, batch_size=256,
                   shuffle_buffer=None, min_fill=None, seed=0, threads=0,
                   audio_column="audio", label_column="label", rank=0,
                   world_size=1, deterministic=False, resumable=False,
                   metrics_port=0, trace=None):
    """Returns the DataLoaderConfig of the default audio pipeline (seed
    004's loader; proto/examples/audio_{train,eval}.textproto).

    `paths` is one directory or a list of directories of Arrow IPC files
    (``*.arrow``, ``*.feather``, ``*.ipc``, searched recursively) with an
    encoded clip per row (WAV, FLAC, Ogg Vorbis, MP3) in `audio_column`
    and an int64 class in `label_column`; a file path raises ConfigError
    (give its directory). For Hugging Face's Audio feature (a struct of
    bytes and path) pass ``audio_column="audio.bytes"``.

    Each clip is decoded, mixed to mono and resampled to `sample_rate`,
    cropped or zero-padded to ``round(clip_seconds * sample_rate)``
    samples, turned into a log-mel spectrogram (`n_fft`, `hop_length`,
    `n_mels`; n_mels 0: n_fft // 2 + 1 linear bins), shuffled through a
    reservoir of `shuffle_buffer` examples that emits once `min_fill` are
    in, and batched: each batch is a ``sluice.Tensors`` with
    ``spectrogram`` float32 (B, n_mels, frames) (frames = 1 +
    samples // hop_length), ``label`` int64 (B,) and ``index`` int64 (B,),
    the row's place in the sorted data set.

    mode "train": endless passes, the file order reshuffled and a new
    random crop per clip each pass (a function of `seed`, the pass and the
    index); reservoir 10000 / min_fill 8000 unless given. mode "eval": one
    pass, every good clip exactly once, the centre crop; reservoir 1000 /
    min_fill 0 unless given; the last batch may be smaller. Clips that
    cannot be decoded are skipped and counted by reason in the metrics of
    the "decoder" stage. `threads` 0 means one per core. A bad option
    raises ConfigError (a ValueError) naming it.

    `rank` of `world_size` reads only its shard: of each file one
    contiguous run of rows, the shards disjoint and together every row.
    `deterministic` gives the same batches at any thread count;
    `resumable` lets DataLoader.checkpoint() work without it (as for
    lc0_pipeline). `metrics_port` serves Prometheus metrics and `trace`
    records a trace of the run (as for
    lc0_pipeline).
    """
    directories = _directories(paths)
    options = dict(sample_rate=sample_rate, clip_seconds=clip_seconds,
                   n_fft=n_fft, hop_length=hop_length, n_mels=n_mels,
                   batch_size=batch_size, shuffle_buffer=shuffle_buffer,
                   min_fill=min_fill, seed=seed, threads=threads)
    for name, value in options.items():
        if value is not None and value < 0:
            raise ConfigError(f"audio pipeline: {name} must be >= 0, "
                              f"not {value}")
    if clip_seconds is not None:
        options["clip_seconds"] = float(clip_seconds)
    config = DataLoaderConfig.FromString(
        _sluice.audio_pipeline(directories, mode, **options,
                               audio_column=audio_column,
                               label_column=label_column,
                               **_data_parallel("audio", rank, world_size,
                                                deterministic)))
    config.resumable = bool(resumable)
    config.metrics_port = _metrics_port("audio", metrics_port)
    _set_trace(config, trace)
    return config


def generate_audio(directory, clips, *, classes=8, files=1,
                   rows_per_batch=256, seed=1, corrupt_every=100,
                   hf_audio_struct=False, with_clips=False):
    """Writes `clips` synthetic labelled clips (what ``sluice gen audio``
    writes) into `files` Arrow files in `directory`: per class a tone,
    chirp, noise band or click train, 0.5-3 s at 8 to 48 kHz, as WAV
    (16-bit or float), FLAC or Ogg Vorbis, in column "audio" (binary, or
    with hf_audio_struct Hugging Face's struct<bytes, path>) with int64
    "label" and float32 "duration_seconds". One row in `corrupt_every` is
    damaged (0: none). Output is a pure function of the arguments.

    Returns {"paths": [...], "clips": n, "labels": [label per row],
    "durations": [seconds per row, None for a damaged one], "corrupt":
    {row: kind}, "audio_seconds": s}, and with with_clips=True
    "clip_bytes": each row's encoded clip as written (None for a damaged
    one), to check a pipeline's output against; bad options raise
    ConfigError.
    """
    return _sluice.generate_audio(os.fspath(directory), clips, classes,
                                  files, rows_per_batch, seed, corrupt_every,
                                  hf_audio_struct, with_clips)


def generate_games(directory, games, *, seed=1, version=6, input_format=1,
                   tar=False, games_per_tar=100, first_game=0):
    """Writes `games` synthetic lc0 games (60-250 positions each) into
    `directory`, as loose training.<id>.gz chunks or, with tar=True, tar
    archives of `games_per_tar` games. Output is a pure function of the
    arguments. Returns {"paths": [...], "games": n, "positions": n}; bad
    options raise ConfigError (a ValueError).
    """
    return _sluice.generate_games(os.fspath(directory), games, seed, version,
                                  input_format, tar, games_per_tar,
                                  first_game)
