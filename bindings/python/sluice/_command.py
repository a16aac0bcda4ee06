"""The `sluice` command of an installed package: the console script that
``pip install`` puts on PATH runs the C++ binary shipped in sluice/bin."""

import os
import pathlib
import sys


def main():
    """Replaces this process with sluice/bin/sluice and the same arguments
    (so signals such as Ctrl-C reach it directly)."""
    binary = pathlib.Path(__file__).resolve().parent / "bin" / "sluice"
    if not os.access(binary, os.X_OK):
        sys.exit(f"sluice: the command's binary is missing from "
                 f"{binary.parent}; reinstall the package (pip install .)")
    os.execv(binary, ["sluice", *sys.argv[1:]])
