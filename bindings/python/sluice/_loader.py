"""sluice.DataLoader: a pipeline, started, pulled from and observed."""

import collections
import os

from sluice import _sluice
from sluice._messages import parse_message
from sluice._tensors import Tensors
from sluice.proto.data_loader_config_pb2 import DataLoaderConfig
from sluice.proto.data_loader_metrics_pb2 import DataLoaderMetricsProto
from sluice.proto.stage_control_pb2 import (StageControlRequest,
                                            StageControlResponse)

Batch = collections.namedtuple(
    "Batch", ["planes", "probs", "winner", "best_q", "plies_left"])
Batch.__doc__ = """The training tuple of B positions (FORMAT.md): float32
arrays planes (B, 112, 8, 8), probs (B, 1858), winner (B, 3), best_q (B, 3)
and plies_left (B,). They view the engine's buffer without a copy and keep
it alive; it is freed when the last of them is dropped."""


class DataLoader:
    """A sluice pipeline built from a DataLoaderConfig.

    `config` is a DataLoaderConfig message, its serialized bytes or its
    text format; a bad config raises ConfigError (a ValueError) naming the
    stage and the field. Use it as a context manager (start on entry, stop
    on exit) or call start() and stop(). Iterating yields get_next() items
    until the pipeline ends. A loader that is garbage-collected without
    stop() is stopped then.

    Blocking calls release the GIL; get_next() checks for signals every
    50 ms, so Ctrl-C raises KeyboardInterrupt promptly.
    """

    def __init__(self, config, resume_from=None):
        """`resume_from`: checkpoint bytes (checkpoint()) of a run of the
        same config to continue; or a list of the checkpoints that every
        rank of a data-parallel run took at one step, [ck_0, ..., ck_N-1],
        to continue on this config's rank and world_size, which may differ
        from N (each new rank takes its share of the old ranks' state, with
        no communication; docs/guarantees.md, "Elastic resume"). ConfigError
        if they are damaged, come from another config (the message names the
        first difference) or are not every rank's of one run."""
        self._config = parse_message(config, DataLoaderConfig)
        self._loader = _sluice.DataLoader(self._config.SerializeToString())
        self._trace_error_raised = False
        if resume_from is None:
            return
        if isinstance(resume_from, (bytes, bytearray, memoryview)):
            self._loader.resume(bytes(resume_from))
        else:
            self._loader.resume_all([bytes(one) for one in resume_from])

    @property
    def config(self):
        """A copy of the DataLoaderConfig this loader was built from."""
        return parse_message(self._config, DataLoaderConfig)

    def start(self):
        """Starts the pipeline; RuntimeError if it was started before."""
        self._loader.start()

    def stop(self):
        """Stops the pipeline and joins its threads (idempotent).

        Batches already handed out stay valid. With a trace in the config
        (``trace=`` of the pipeline builders), the trace file is written
        now; OSError if it could not be (once).
        """
        self._loader.stop()
        error = self._loader.trace_error()
        if error and not self._trace_error_raised:
            self._trace_error_raised = True
            raise OSError(error)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()

    def get_next(self, output=""):
        """Blocks until the next item of `output` ("" is the first output).

        Returns a Batch for lc0 tensor outputs (the five training tensors),
        Tensors (a read-only mapping of name to array, with attribute
        access) for other tensor outputs, an int for integer outputs, and
        None once the output has ended or the loader was stopped. Raises
        PipelineError (a RuntimeError) with the stage's message if the
        pipeline failed, ConfigError for an unknown output, RuntimeError
        before start().
        """
        item = self._loader.get_next(output)
        if type(item) is dict:
            if tuple(item) == Batch._fields:
                return Batch(**item)
            return Tensors(item)
        return item

    def __iter__(self):
        return self

    def __next__(self):
        item = self.get_next()
        if item is None:
            raise StopIteration
        return item

    def checkpoint(self):
        """The loader's state after the batches handed out so far, as bytes
        to give to DataLoader(config, resume_from=...) in a new process.

        Needs a deterministic pipeline (deterministic=True): the resumed
        loader then yields exactly the batches this one would have yielded
        next; or resumable=True: it then repeats and loses nothing, but its
        batches differ (lc0 and audio/Arrow pipelines). Call it between two
        get_next() calls, from the thread that gets the batches. Frames and
        examples are saved as references (about 12 bytes each), never as
        data."""
        return self._loader.checkpoint()

    def metrics(self):
        """The latest metrics snapshot, a DataLoaderMetricsProto."""
        return DataLoaderMetricsProto.FromString(self._loader.metrics())

    def write_report(self, path, title=None):
        """Writes the HTML run report of the run so far to `path`: one
        self-contained page (no script, no network) with charts of
        throughput, each stage's load, each channel's fill, skips by reason
        and RSS over the run's time, the bottleneck with its evidence, the
        stages' totals and the config. Call it while the loader runs or
        after stop(). `title` (default: the stages in order) heads the
        page. OSError naming the path when it cannot be written."""
        if title is None:
            title = "sluice.DataLoader: " + " > ".join(
                stage.name for stage in self._config.stage)
        self._loader.write_report(os.fspath(path), str(title))

    def send_control_message(self, request):
        """Sends a StageControlRequest (message, bytes or text) to every
        stage; returns the list of StageControlResponse of those that
        answered."""
        request = parse_message(request, StageControlRequest)
        return [
            StageControlResponse.FromString(response)
            for response in self._loader.send_control_message(
                request.SerializeToString())
        ]
