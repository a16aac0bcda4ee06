"""bindings/python/examples/plot_training.py draws a cpp_trainer report."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "bindings",
                       "python", "examples", "plot_training.py")


def write_report(path, steps):
    """A report as cpp_trainer --workload lc0 writes it: training rows and
    one evaluation row."""
    with open(path, "w") as f:
        f.write("step,loss,loss_policy,loss_value,loss_moves_left,accuracy,"
                "data_wait_ms,step_ms,positions_per_s,eval_loss,"
                "eval_accuracy\n")
        for step in range(1, steps + 1):
            loss = 6.0 / step
            f.write(f"{step},{loss},{loss / 2},{loss / 3},{loss / 6},"
                    f"{step / steps},{0.5 if step % 2 else 0},120.0,250.0,,\n")
        f.write(f"{steps},,,,,,,,,1.5,0.4\n")


def test_plots_a_report(tmp_path):
    report = tmp_path / "run.csv"
    write_report(report, 30)
    output = tmp_path / "run.png"
    result = subprocess.run(
        [sys.executable, EXAMPLE, str(report), "-o", str(output),
         "--smooth", "5"],
        capture_output=True, text=True, timeout=120, check=True)
    assert f"wrote {output}" in result.stdout
    with open(output, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_report_without_training_rows_is_an_error(tmp_path):
    report = tmp_path / "empty.csv"
    report.write_text("step,loss,accuracy,data_wait_ms,step_ms,clips_per_s,"
                      "eval_loss,eval_accuracy\n")
    result = subprocess.run(
        [sys.executable, EXAMPLE, str(report), "-o", str(tmp_path / "x.png")],
        capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "no training rows" in result.stderr
