"""sluice.audio_pipeline end to end on generated clips: eval yields every
good clip once and matches the building blocks (decode, crop, spectrogram)
composed by hand, training crops follow the seed and change per pass, the
Hugging Face struct column, damaged clips counted by reason, Ctrl-C and
stop, metrics and errors."""

import collections
import json
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import sluice
from sluice import _sluice

SAMPLE_RATE = 16000
CLIP = 16000  # samples: 1 s
# The reason the decoder skips each kind of damaged clip for.
SKIP_REASON = {
    "random-bytes": "not_audio",
    "truncated-flac": "truncated",
    "empty": "empty_clip",
    "wav-frame-count-lie": "length_mismatch",
}


@pytest.fixture(scope="session")
def clips(tmp_path_factory):
    """120 clips in 3 files, 8 of them damaged (two of each kind), with
    their encoded bytes."""
    directory = tmp_path_factory.mktemp("clips")
    written = sluice.generate_audio(directory, 120, classes=4, files=3,
                                    rows_per_batch=16, seed=3,
                                    corrupt_every=15, with_clips=True)
    written["dir"] = directory
    written["good"] = [row for row in range(written["clips"])
                       if row not in written["corrupt"]]
    return written


def reference(clip_bytes, index, seed, train):
    """The spectrogram the pipeline must produce, from the building blocks
    (stages/audio/codec, stages/audio/dsp) called one by one."""
    waveform = _sluice.decode_audio(clip_bytes, sample_rate=SAMPLE_RATE)
    clip = _sluice.crop_or_pad(waveform, CLIP, seed, index, train=train)
    return _sluice.spectrogram(clip, sample_rate=SAMPLE_RATE, n_fft=400,
                               hop_length=160, n_mels=64, log="log")


def collect(config, until=None, limit=100000):
    """{index: [spectrogram per occurrence, in arrival order]}, the labels
    by index, the batch sizes and the final metrics; stops after `limit`
    examples or once `until(seen)` holds."""
    seen = collections.defaultdict(list)
    labels, sizes = {}, []
    with sluice.DataLoader(config) as loader:
        for batch in loader:
            assert batch.spectrogram.dtype == np.float32
            assert batch.label.dtype == np.int64
            assert batch.index.dtype == np.int64
            sizes.append(len(batch.index))
            for row, index in enumerate(batch.index.tolist()):
                seen[index].append(np.array(batch.spectrogram[row]))
                labels[index] = int(batch.label[row])
            if sum(sizes) >= limit or (until and until(seen)):
                break
    # After stop: its final snapshot. Inside, a run longer than the metrics
    # interval would give the last periodic one, older than the batches.
    metrics = loader.metrics()
    return seen, labels, sizes, metrics


def stage_totals(metrics, name):
    for stage in metrics.total_stage_metrics:
        if stage.name == name:
            return stage
    raise KeyError(name)


def test_config_options_and_shape(tmp_path):
    config = sluice.audio_pipeline(tmp_path, mode="eval", sample_rate=8000,
                                   clip_seconds=2, n_mels=40, hop_length=100,
                                   batch_size=8, shuffle_buffer=50,
                                   min_fill=5, seed=4, threads=2,
                                   audio_column="audio.bytes",
                                   label_column="class")
    assert isinstance(config, sluice.DataLoaderConfig)
    stages = {stage.name: stage for stage in config.stage}
    assert list(stages["files"].file_path_provider.directory) == [
        str(tmp_path)]
    assert config.seed == 4 and config.worker_threads == 2
    assert stages["decoder"].audio_decoder.sample_rate == 8000
    assert stages["crop"].crop_or_pad.samples == 16000
    assert stages["crop"].crop_or_pad.mode == stages["crop"].crop_or_pad.EVAL
    assert [(c.name, c.field) for c in stages["clips"].arrow_source.column] \
        == [("audio.bytes", "audio"), ("class", "label")]
    assert stages["shuffle"].shuffle_buffer.size == 50
    assert stages["shuffle"].shuffle_buffer.min_fill == 5
    batcher = stages["batches"].batcher
    assert batcher.batch_size == 8
    assert list(batcher.field[0].shape) == [40, 1 + 16000 // 100]
    train = sluice.audio_pipeline([tmp_path, tmp_path / "b"])
    stages = {stage.name: stage for stage in train.stage}
    assert len(stages["files"].file_path_provider.directory) == 2
    assert stages["shuffle"].shuffle_buffer.size == 10000
    assert stages["shuffle"].shuffle_buffer.min_fill == 8000


def test_bad_options_and_paths_raise_config_error(tmp_path):
    cases = [
        (dict(mode="test"), "mode"),
        (dict(batch_size=0), "batch_size"),
        (dict(n_mels=-1), "n_mels"),
        (dict(clip_seconds=0), "clip_seconds"),
        (dict(shuffle_buffer=10, min_fill=20), "min_fill"),
        (dict(audio_column=""), "audio_column"),
    ]
    for options, name in cases:
        with pytest.raises(sluice.ConfigError, match=name):
            sluice.audio_pipeline(tmp_path, **options)
    with pytest.raises(ValueError, match="directory"):
        sluice.audio_pipeline([])
    (tmp_path / "one.arrow").write_bytes(b"x")
    with pytest.raises(ValueError, match="is a file"):
        sluice.audio_pipeline(tmp_path / "one.arrow")
    with pytest.raises(ValueError, match="files.*missing"):
        sluice.DataLoader(sluice.audio_pipeline(tmp_path / "missing"))


def test_eval_yields_every_good_clip_once_and_counts_the_rest(clips):
    config = sluice.audio_pipeline(clips["dir"], mode="eval", batch_size=16,
                                   threads=2)
    seen, labels, sizes, metrics = collect(config)
    assert sorted(seen) == clips["good"]
    assert all(len(occurrences) == 1 for occurrences in seen.values())
    assert all(labels[index] == clips["labels"][index] for index in seen)
    assert sizes[:-1] == [16] * (len(sizes) - 1) and 0 < sizes[-1] <= 16
    assert seen[clips["good"][0]][0].shape == (64, 101)
    decoder = stage_totals(metrics, "decoder")
    skipped = {skip.reason: skip.count for skip in decoder.skipped}
    expected = collections.Counter(
        SKIP_REASON[kind] for kind in clips["corrupt"].values())
    assert skipped == dict(expected)
    assert decoder.audio_decoder.clips_decoded == len(clips["good"])
    assert stage_totals(metrics, "batches").batcher.examples == len(
        clips["good"])
    assert metrics.error == ""


def test_eval_matches_the_building_blocks_and_repeats(clips):
    config = sluice.audio_pipeline(clips["dir"], mode="eval", batch_size=32,
                                   threads=2)
    first, _, _, _ = collect(config)
    second, _, _, _ = collect(config)
    for index in clips["good"]:
        expected = reference(clips["clip_bytes"][index], index, 0, False)
        np.testing.assert_array_equal(first[index][0], expected)
        np.testing.assert_array_equal(second[index][0], first[index][0])


def train_passes(clips, seed):
    """Pass 0 and pass 1 spectrograms by index. A one-example reservoir
    passes examples straight through, so an index's first occurrence is
    its pass-0 example and its second its pass-1 one (the in-flight
    reordering of the parallel stages is far shorter than a pass)."""
    config = sluice.audio_pipeline(clips["dir"], mode="train", batch_size=16,
                                   shuffle_buffer=1, min_fill=0, seed=seed,
                                   threads=2)
    good = len(clips["good"])
    seen, _, _, metrics = collect(
        config, until=lambda seen: len(seen) == good and all(
            len(occurrences) >= 2 for occurrences in seen.values()),
        limit=4 * good)
    assert sorted(seen) == clips["good"]
    assert stage_totals(metrics, "clips").arrow_source.passes >= 2
    return ({index: spectrograms[0] for index, spectrograms in seen.items()},
            {index: spectrograms[1] for index, spectrograms in seen.items()})


def test_train_crops_follow_the_seed_and_change_per_pass(clips):
    seed = 11
    pass0, pass1 = train_passes(clips, seed)
    again0, _ = train_passes(clips, seed)
    other0, _ = train_passes(clips, seed + 100)
    mask = (1 << 64) - 1
    long_clips = 0
    for index in clips["good"]:
        data = clips["clip_bytes"][index]
        # Seed 004: pass p's example seed is (seed + p) + index.
        for p, spectrograms in enumerate((pass0, pass1)):
            expected = reference(data, index, (seed + p + index) & mask, True)
            np.testing.assert_array_equal(spectrograms[index], expected)
        np.testing.assert_array_equal(again0[index], pass0[index])
        duration = clips["durations"][index]
        if duration > 1.1:
            long_clips += 1
            assert not np.array_equal(pass1[index], pass0[index]), index
            assert not np.array_equal(other0[index], pass0[index]), index
        elif duration < 0.95:
            # Shorter than the clip: padded at the end, the same each pass.
            np.testing.assert_array_equal(pass1[index], pass0[index])
    assert long_clips > 30


def test_hugging_face_audio_struct_column(tmp_path):
    written = sluice.generate_audio(tmp_path, 40, classes=3, seed=5,
                                    corrupt_every=0, hf_audio_struct=True)
    config = sluice.audio_pipeline(tmp_path, mode="eval", batch_size=8,
                                   audio_column="audio.bytes", threads=2)
    seen, labels, _, _ = collect(config)
    assert sorted(seen) == list(range(40))
    assert [labels[index] for index in range(40)] == written["labels"]


def test_metrics_of_every_stage(clips):
    config = sluice.audio_pipeline(clips["dir"], mode="eval", batch_size=16,
                                   threads=2)
    _, _, _, metrics = collect(config)
    good = len(clips["good"])
    assert stage_totals(metrics, "clips").arrow_source.rows_emitted == 120
    crop = stage_totals(metrics, "crop").crop_or_pad
    assert crop.cropped + crop.padded + crop.unchanged == good
    assert crop.cropped > 0 and crop.padded > 0
    assert (stage_totals(metrics, "spectrogram").spectrogram.spectrograms ==
            good)
    assert (stage_totals(metrics, "decoder").audio_decoder.audio_seconds ==
            pytest.approx(clips["audio_seconds"], rel=1e-3))


def test_stop_from_another_thread_within_100_ms(clips):
    # The reservoir never fills: get_next blocks until stop().
    config = sluice.audio_pipeline(clips["dir"], shuffle_buffer=100000,
                                   min_fill=100000, threads=2)
    loader = sluice.DataLoader(config)
    loader.start()
    stopped = []

    def stop():
        stopped.append(time.monotonic())
        loader.stop()

    stopper = threading.Timer(0.3, stop)
    stopper.start()
    assert loader.get_next() is None
    returned = time.monotonic()
    stopper.join()
    assert returned - stopped[0] < 0.1


INTERRUPT_SCRIPT = """
import json, signal, sys, threading, time
import sluice

# A launcher may start us with SIGINT ignored (a background job of a
# non-interactive shell); the test needs Python's Ctrl-C handling.
signal.signal(signal.SIGINT, signal.default_int_handler)

config = sluice.audio_pipeline(sys.argv[1], shuffle_buffer=100000,
                               min_fill=100000, threads=2)
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
print(json.dumps({"latency": latency}))
"""


def run_interrupt_script(directory, variant):
    return subprocess.run(
        [sys.executable, "-c", INTERRUPT_SCRIPT, str(directory), variant],
        capture_output=True, text=True, timeout=60)


def test_ctrl_c_interrupts_within_100_ms(clips):
    done = run_interrupt_script(clips["dir"], "caught")
    assert done.returncode == 0, done.stderr
    latency = json.loads(done.stdout)["latency"]
    assert latency is not None and latency < 0.1


def test_uncaught_ctrl_c_exits_cleanly(clips):
    done = run_interrupt_script(clips["dir"], "uncaught")
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "KeyboardInterrupt" in done.stderr
    assert "Fatal" not in done.stderr and "terminate" not in done.stderr


def test_audio_train_loop_example():
    pytest.importorskip("torch", reason="needs python3-torch")
    example = pathlib.Path(__file__).resolve().parents[2] / "bindings" / \
        "python" / "examples" / "audio_train_loop.py"
    done = subprocess.run(
        [sys.executable, str(example), "--steps", "5", "--threads", "2"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "step     5  loss" in done.stdout
    assert "trained on 160 clips" in done.stdout
    assert "eval: " in done.stdout and "/396 clips right" in done.stdout


def test_memory_budget_plans_within_it_and_refuses_below_the_minimum(clips):
    config = sluice.audio_pipeline(clips["dir"], clip_seconds=0.25, n_mels=16,
                                   batch_size=16, shuffle_buffer=64,
                                   min_fill=16)
    config.worker_threads = 2
    config.memory_budget_bytes = 1 << 50
    with sluice.DataLoader(config) as loader:
        plan = loader.metrics().memory_budget
    assert plan.planned_bytes == plan.configured_bytes
    assert plan.minimum_bytes < plan.configured_bytes

    config.memory_budget_bytes = plan.minimum_bytes
    with sluice.DataLoader(config) as loader:
        batches = [batch for _, batch in zip(range(3), loader)]
    assert len(batches) == 3
    planned = loader.metrics().memory_budget
    assert planned.budget_bytes == plan.minimum_bytes
    assert planned.planned_bytes == plan.minimum_bytes
    reservoir = [setting for setting in planned.setting
                 if setting.setting == "shuffle_buffer.size"]
    assert [(s.configured, s.planned) for s in reservoir] == [(64, 6)]

    config.memory_budget_bytes = plan.minimum_bytes - 1
    with pytest.raises(ValueError, match="memory_budget_bytes.*minimum"):
        sluice.DataLoader(config)
