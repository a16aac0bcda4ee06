"""Start/stop, Ctrl-C, garbage collection, failures, metrics and control."""

import gc
import json
import signal
import subprocess
import sys

import pytest

import sluice
from conftest import rss_bytes, thread_count, wait_until

COUNTING = """
worker_threads: 1
stage { name: "numbers" counting_source {} }
"""

INTERRUPT_SCRIPT = """
import json, os, signal, sys, threading, time
import sluice

# A launcher may start us with SIGINT ignored (a background job of a
# non-interactive shell); the test needs Python's Ctrl-C handling.
signal.signal(signal.SIGINT, signal.default_int_handler)

config = sluice.lc0_pipeline(sys.argv[1], reservoir=16, min_fill=1,
                             threads=2)
threads_before = len(os.listdir("/proc/self/task"))
sent = []

def interrupt():
    sent.append(time.monotonic())
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

timer = threading.Timer(0.3, interrupt)
if sys.argv[2] == "uncaught":
    loader = sluice.DataLoader(config)  # never stopped: exit must stop it
    loader.start()
    timer.start()
    loader.get_next()
latency = None
with sluice.DataLoader(config) as loader:
    timer.start()
    try:
        loader.get_next()
    except KeyboardInterrupt:
        latency = time.monotonic() - sent[0]
timer.join()
print(json.dumps({"latency": latency, "threads_before": threads_before,
                  "threads_after": len(os.listdir("/proc/self/task"))}))
"""


def run_interrupt_script(directory, variant):
    return subprocess.run(
        [sys.executable, "-c", INTERRUPT_SCRIPT, str(directory), variant],
        capture_output=True, text=True, timeout=60)


def test_ctrl_c_interrupts_a_blocked_get_next(empty_dir):
    done = run_interrupt_script(empty_dir, "caught")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["latency"] is not None
    assert report["latency"] < 1.0
    assert report["threads_after"] == report["threads_before"]


def test_uncaught_ctrl_c_exits_cleanly(empty_dir):
    done = run_interrupt_script(empty_dir, "uncaught")
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "KeyboardInterrupt" in done.stderr
    assert "Fatal" not in done.stderr and "terminate" not in done.stderr


def test_garbage_collecting_a_running_loader_stops_it():
    baseline = thread_count()
    loader = sluice.DataLoader(COUNTING)
    loader.start()
    assert loader.get_next() == 0
    assert thread_count() > baseline
    del loader
    gc.collect()
    assert wait_until(lambda: thread_count() == baseline)


def test_create_start_stop_cycles_do_not_grow():
    def cycle():
        with sluice.DataLoader(COUNTING) as loader:
            assert loader.get_next() == 0

    for _ in range(20):
        cycle()
    threads, rss = thread_count(), rss_bytes()
    for _ in range(1000):
        cycle()
    assert thread_count() == threads
    assert rss_bytes() - rss < 32 << 20


def test_lifecycle_errors_and_idempotent_stop():
    loader = sluice.DataLoader(COUNTING)
    with pytest.raises(RuntimeError, match="start"):
        loader.get_next()
    loader.start()
    with pytest.raises(RuntimeError, match="already started"):
        loader.start()
    loader.stop()
    loader.stop()
    assert loader.get_next() is None
    assert list(loader) == []


def test_stop_from_another_thread_ends_a_blocked_get_next(empty_dir):
    import threading
    loader = sluice.DataLoader(
        sluice.lc0_pipeline(empty_dir, reservoir=16, min_fill=1))
    loader.start()
    stopper = threading.Timer(0.2, loader.stop)
    stopper.start()
    assert loader.get_next() is None
    stopper.join()


def test_pipeline_failure_raises_runtime_error():
    config = """
    worker_threads: 1
    stage { name: "numbers" counting_source {} }
    stage { name: "flaky" input: "numbers"
            pass_through { fail_after_items: 5 } }
    """
    with sluice.DataLoader(config) as loader:
        with pytest.raises(RuntimeError) as raised:
            for _ in loader:
                pass
        assert isinstance(raised.value, sluice.PipelineError)
        assert "stage 'flaky'" in str(raised.value)
        assert "injected failure after 5 items" in str(raised.value)
        assert "injected failure" in loader.metrics().error


def test_outputs_without_a_python_form_raise_type_error(empty_dir):
    config = sluice.lc0_pipeline(empty_dir, reservoir=16, min_fill=1)
    config.output.append("files:files")
    with sluice.DataLoader(config) as loader:
        with pytest.raises(TypeError, match="DiscoveredFile"):
            loader.get_next("files")


def test_metrics_round_trip():
    with sluice.DataLoader(COUNTING) as loader:
        for _ in range(100):
            loader.get_next()
        metrics = loader.metrics()
    assert isinstance(metrics, sluice.DataLoaderMetricsProto)
    stopped = loader.metrics()
    assert [stage.name for stage in stopped.total_stage_metrics] == ["numbers"]
    assert stopped.total_stage_metrics[0].counting_source.items_produced >= 100
    assert stopped.total_stage_metrics[0].type == "counting_source"
    assert stopped.snapshot_index >= metrics.snapshot_index


def test_control_round_trip(games_dir):
    directory, _ = games_dir
    config = sluice.lc0_pipeline(directory, reservoir=100, min_fill=10)
    with sluice.DataLoader(config) as loader:
        request = sluice.StageControlRequest()
        request.chunk_pool_request.set_chunk_anchor = "training.100000005.gz"
        for form in (request, request.SerializeToString(), str(request)):
            responses = loader.send_control_message(form)
            assert len(responses) == 1
            assert isinstance(responses[0], sluice.StageControlResponse)
            assert responses[0].stage_name == "pool"
            assert (responses[0].chunk_pool_response.chunk_anchor ==
                    "training.100000005.gz")
        assert loader.send_control_message(sluice.StageControlRequest()) == []
