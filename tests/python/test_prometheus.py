"""The Prometheus exporter (metrics_port): the page a loader serves, its
errors, and a real Prometheus server scraping a running loader."""

import json
import pathlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import sluice
from conftest import wait_until


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def scrape(port):
    """The Content-Type and the page of http://127.0.0.1:port/metrics."""
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.headers["Content-Type"], response.read().decode()


def samples(page):
    """{'name{labels}': value} of every sample on a text-format page."""
    values = {}
    for line in page.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            values[series] = float(value)
    return values


def lc0_config(games_dir, port):
    directory, _ = games_dir
    return sluice.lc0_pipeline(directory, batch_size=64, reservoir=2000,
                               min_fill=500, chunk_pool_size=40, threads=2,
                               metrics_port=port)


class Consumer:
    """Pulls batches from a started loader on a thread of its own, at most
    `per_second` a second, until stopped."""

    def __init__(self, loader, per_second=50):
        self._loader = loader
        self._period = 1.0 / per_second
        self._stop = threading.Event()
        self.batches = 0
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self._period):
            if self._loader.get_next() is None:
                return
            self.batches += 1

    def stop(self):
        self._stop.set()
        self._thread.join()


@pytest.mark.smoke
def test_builders_take_a_metrics_port(tmp_path):
    assert sluice.lc0_pipeline(tmp_path, metrics_port=9400).metrics_port == \
        9400
    assert sluice.audio_pipeline(tmp_path, metrics_port=9401).metrics_port \
        == 9401
    config = sluice.lc0_pipeline(tmp_path)
    assert config.metrics_port == 0
    assert config.metrics_address == "127.0.0.1"
    for port in (-1, 65536):
        with pytest.raises(sluice.ConfigError, match="metrics_port"):
            sluice.lc0_pipeline(tmp_path, metrics_port=port)


@pytest.mark.smoke
def test_a_loader_serves_its_metrics(games_dir):
    port = free_port()
    with sluice.DataLoader(lc0_config(games_dir, port)) as loader:
        for _ in range(20):
            loader.get_next()
        # A snapshot (every second) comes with the batches pulled.
        def batches_counted():
            return samples(scrape(port)[1]).get(
                'sluice_batches_total{output="tensors"}', 0) > 0
        assert wait_until(batches_counted, timeout=60)
        content_type, page = scrape(port)
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    values = samples(page)
    assert values['sluice_stage_info{stage="tensors",'
                  'type="tensor_generator"}'] == 1
    assert values["sluice_examples_total"] > 0
    assert values['sluice_stage_items_in_total{stage="unpacker"}'] > 0
    assert values['sluice_stage_busy_seconds_total{stage="unpacker"}'] > 0
    assert values['sluice_channel_capacity{stage="unpacker",'
                  'output="output"}'] == 1024
    assert values['sluice_tensor_generator_positions_total'
                  '{stage="tensors"}'] == values["sluice_examples_total"]
    assert sum(value for series, value in values.items()
               if series.startswith("sluice_io_read_bytes_total")) > 0
    assert values["process_resident_memory_bytes"] > 0
    assert values["sluice_pipeline_failed"] == 0
    assert "# TYPE sluice_stage_items_out_total counter" in page
    assert "# TYPE sluice_stage_load gauge" in page
    # Stopped: nothing listens.
    with pytest.raises(urllib.error.URLError):
        scrape(port)


def test_a_port_in_use_is_a_clear_error(games_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        loader = sluice.DataLoader(lc0_config(games_dir, port))
        with pytest.raises(sluice.PipelineError,
                           match=f"metrics_port.*127.0.0.1:{port}.*in use"):
            loader.start()
        loader.stop()


def prometheus_query(port, query):
    """The result vector of an instant query through the HTTP API."""
    url = (f"http://127.0.0.1:{port}/api/v1/query?"
           + urllib.parse.urlencode({"query": query}))
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            answer = json.load(response)
    except (urllib.error.URLError, ConnectionError):
        return []
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def query_value(port, query):
    """The first sample's value of an instant query, or None."""
    result = prometheus_query(port, query)
    return float(result[0]["value"][1]) if result else None


class Prometheus:
    """A Prometheus server of its own (temporary config and storage, a free
    loopback port) scraping `target_port` every second."""

    def __init__(self, directory, target_port):
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.fail("the Debian package prometheus is not installed "
                        "(scripts/setup.sh installs it)")
        directory = pathlib.Path(directory)
        config = directory / "prometheus.yml"
        config.write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            "  - job_name: sluice\n"
            "    static_configs:\n"
            f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.port = free_port()
        self.log = directory / "prometheus.log"
        with open(self.log, "wb") as log:
            self._process = subprocess.Popen(
                [binary, f"--config.file={config}",
                 f"--storage.tsdb.path={directory / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def stop(self):
        self._process.terminate()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def ready(self):
        try:
            url = f"http://127.0.0.1:{self.port}/-/ready"
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False


def test_prometheus_scrapes_a_running_loader(games_dir, tmp_path):
    port = free_port()
    with sluice.DataLoader(lc0_config(games_dir, port)) as loader:
        consumer = Consumer(loader)
        prometheus = Prometheus(tmp_path, port)
        try:
            assert wait_until(prometheus.ready, timeout=120), \
                prometheus.log.read_text()
            # The target is up: Prometheus parsed the page.
            assert wait_until(lambda: query_value(
                prometheus.port, 'up{job="sluice"}') == 1, timeout=120), \
                prometheus.log.read_text()
            batches = 'sluice_batches_total{output="tensors"}'
            assert wait_until(lambda: (query_value(prometheus.port, batches)
                                       or 0) > 0, timeout=60)
            first = query_value(prometheus.port, batches)
            # And the series move from scrape to scrape.
            assert wait_until(lambda: query_value(prometheus.port, batches)
                              > first, timeout=60)
            for series in ("sluice_examples_total",
                           'sluice_stage_load{stage="unpacker"}',
                           'sluice_stage_busy_seconds_total{stage="tensors"}',
                           'sluice_channel_items{stage="sampler"}',
                           'sluice_channel_capacity{stage="tensors"}',
                           "sluice_io_reads_total",
                           "process_resident_memory_bytes"):
                assert prometheus_query(prometheus.port, series), series
            assert query_value(prometheus.port,
                               'scrape_samples_scraped{job="sluice"}') > 100
        finally:
            prometheus.stop()
            consumer.stop()
    assert consumer.batches > 0
