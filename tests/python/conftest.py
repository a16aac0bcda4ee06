"""Shared fixtures of the sluice Python tests.

Run with the build's package on the path (scripts/test.sh does this):
    PYTHONPATH=out/release/bindings/python \\
        /usr/bin/python3 -m pytest tests/python
"""

import os
import pathlib
import time

import pytest

GOLDEN_DIR = pathlib.Path(__file__).resolve().parents[1] / "data" / "golden"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "smoke: the quick subset run against an installed wheel "
        "(scripts/test.sh)")


def thread_count():
    """Threads of this process now."""
    return len(os.listdir("/proc/self/task"))


def rss_bytes():
    """Resident set size of this process now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def wait_until(predicate, timeout=10.0):
    """Polls `predicate` until it holds or `timeout` seconds pass; returns
    its last value."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return predicate()
        time.sleep(0.005)
    return True


@pytest.fixture(scope="session")
def games_dir(tmp_path_factory):
    """A directory of 40 synthetic V6 games (loose .gz) and their count of
    positions."""
    import sluice
    directory = tmp_path_factory.mktemp("games")
    written = sluice.generate_games(directory, 40, seed=3)
    return directory, written["positions"]


@pytest.fixture
def empty_dir(tmp_path):
    """An empty data directory: a watching pipeline on it blocks forever."""
    directory = tmp_path / "empty"
    directory.mkdir()
    return directory
