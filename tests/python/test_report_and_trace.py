"""The HTML run report (DataLoader.write_report) and traces (trace= of the
pipeline builders) from Python."""

import json

import pytest

import sluice


def run_eval(games_dir, **options):
    """Runs the lc0 eval pipeline over the games to its end; returns the
    stopped loader and its batch count."""
    directory, _ = games_dir
    config = sluice.lc0_pipeline(directory, mode="eval", batch_size=64,
                                 threads=2, **options)
    config.metrics_interval_seconds = 0.05
    loader = sluice.DataLoader(config)
    with loader:
        batches = sum(1 for _ in loader)
    return loader, batches


def test_write_report_writes_one_self_contained_page(games_dir, tmp_path):
    loader, batches = run_eval(games_dir)
    assert batches > 0
    path = tmp_path / "run.html"
    loader.write_report(path, title="python eval")
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "python eval" in html
    assert html.count("<svg") >= 5
    assert "<script" not in html and "http" not in html
    assert "positions per second" in html
    assert "bottleneck" in html.lower()


def test_write_report_to_a_path_that_cannot_be_written_raises(games_dir,
                                                              tmp_path):
    loader, _ = run_eval(games_dir)
    missing = tmp_path / "no_such_dir" / "run.html"
    with pytest.raises(OSError, match="no_such_dir"):
        loader.write_report(missing)
    with pytest.raises(OSError, match="is a directory"):
        loader.write_report(tmp_path)


def test_trace_option_writes_a_perfetto_trace(games_dir, tmp_path):
    path = tmp_path / "run.json"
    loader, batches = run_eval(games_dir, trace=path)
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    spans = {}
    for event in events:
        if event["ph"] == "X":
            spans[event["cat"]] = spans.get(event["cat"], 0) + 1
    assert spans["output"] == batches
    assert spans["busy"] > 0 and spans["io"] > 0
    assert any(event["ph"] == "C" for event in events)
    names = {event["args"]["name"] for event in events
             if event["ph"] == "M" and event["name"] == "process_name"}
    assert "stage unpacker (chunk_unpacker)" in names
    assert trace["otherData"]["dropped_events"] == 0


def test_trace_bounds_come_from_a_trace_config(games_dir, tmp_path):
    path = tmp_path / "bounded.json"
    bounds = sluice.TraceConfig(file=str(path), max_events=10)
    run_eval(games_dir, trace=bounds)
    trace = json.loads(path.read_text())
    assert sum(1 for event in trace["traceEvents"] if event["ph"] != "M") <= 10
    assert trace["otherData"]["dropped_events"] > 0


def test_a_trace_path_that_cannot_be_written_fails_before_the_run(games_dir,
                                                                  tmp_path):
    directory, _ = games_dir
    config = sluice.lc0_pipeline(directory, mode="eval",
                                 trace=tmp_path / "missing" / "run.json")
    with pytest.raises(sluice.ConfigError, match="trace.file"):
        sluice.DataLoader(config)
    with pytest.raises(sluice.ConfigError, match="trace"):
        sluice.lc0_pipeline(directory, trace=42)
