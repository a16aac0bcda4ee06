"""Ready-made configs and test data: the default lc0 pipelines and the
synthetic game generator."""

import os

from sluice import _sluice
from sluice._sluice import ConfigError
from sluice.proto.data_loader_config_pb2 import DataLoaderConfig


def lc0_pipeline(directory, *, batch_size=None, chunk_pool_size=None,
                 reservoir=None, min_fill=None, mode="train", seed=None,
                 threads=None, input_format=None):
    """Returns the DataLoaderConfig of the default lc0 pipeline.

    `directory` is one data directory or a list of them (tars and loose
    .gz chunks). mode "train" watches the directories and never ends (a
    shuffled window of `chunk_pool_size` games, a reservoir of `reservoir`
    frames that starts emitting at `min_fill`); mode "eval" reads the files
    present once and yields every position exactly once. Options left None
    keep the defaults of proto/examples/lc0_{train,eval}.textproto;
    `threads` 0 means one per core. A bad option raises ConfigError (a
    ValueError).
    """
    if isinstance(directory, (str, os.PathLike)):
        directories = [os.fspath(directory)]
    else:
        directories = [os.fspath(entry) for entry in directory]
    options = dict(batch_size=batch_size, chunk_pool_size=chunk_pool_size,
                   reservoir=reservoir, min_fill=min_fill, seed=seed,
                   threads=threads, input_format=input_format)
    for name, value in options.items():
        if value is not None and value < 0:
            raise ConfigError(f"lc0 pipeline: {name} must be >= 0, "
                              f"not {value}")
    return DataLoaderConfig.FromString(
        _sluice.lc0_pipeline(directories, mode, **options))


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
