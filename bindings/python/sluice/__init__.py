"""sluice: the training-data loading engine, driven from Python.

The C++ engine does all the work; this package configures a pipeline,
pulls its batches as numpy arrays (no copy) and observes it::

    import sluice

    config = sluice.lc0_pipeline("/data/lc0", batch_size=1024)
    with sluice.DataLoader(config) as loader:
        for planes, probs, winner, best_q, plies_left in loader:
            train_step(planes, probs, winner, best_q, plies_left)
        print(loader.metrics())

For audio, ``sluice.audio_pipeline(paths, mode="train")`` yields
``sluice.Tensors`` batches (spectrogram, label, index)::

    config = sluice.audio_pipeline("/data/clips", mode="eval")
    with sluice.DataLoader(config) as loader:
        for batch in loader:
            logits = model(torch.from_numpy(batch.spectrogram))

Configs, metrics and control messages are the protobuf classes of
``sluice.proto`` (generated from proto/*.proto by the build); the common
ones are re-exported here.
"""

from sluice._sluice import ConfigError, PipelineError
from sluice._dataset import DataProvider, DatasetConsumer
from sluice._loader import Batch, DataLoader
from sluice._pipelines import (Rescorer, audio_pipeline, generate_audio,
                               generate_games, lc0_pipeline)
from sluice._tensors import Tensors
from sluice.proto.data_loader_config_pb2 import (DataLoaderConfig,
                                                 StageConfig, TraceConfig)
from sluice.proto.data_loader_metrics_pb2 import DataLoaderMetricsProto
from sluice.proto.stage_control_pb2 import (StageControlRequest,
                                            StageControlResponse)

__all__ = [
    "Batch",
    "ConfigError",
    "DataLoader",
    "DataLoaderConfig",
    "DataLoaderMetricsProto",
    "DataProvider",
    "DatasetConsumer",
    "PipelineError",
    "Rescorer",
    "StageConfig",
    "StageControlRequest",
    "StageControlResponse",
    "Tensors",
    "TraceConfig",
    "audio_pipeline",
    "generate_audio",
    "generate_games",
    "lc0_pipeline",
]
