"""Builds the sluice Python package through CMake, as pybind11's
cmake_example does: `pip install .` (offline: `pip install
--no-build-isolation .`) or `python3 -m build --wheel --no-isolation`.

The extension is built for the interpreter that runs this script, in
out/wheel (SLUICE_WHEEL_BUILD_DIR to change it; at the depth of
out/release, so ccache hits what a release build compiled), and `cmake
--install --component python` puts the package (the extension, the Python
sources, the protobuf classes and the `sluice` command in sluice/bin) where
setuptools packs the wheel. CMAKE_BUILD_PARALLEL_LEVEL sets the build jobs
(default: one per CPU).
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
BUILD_DIR = pathlib.Path(
    os.environ.get("SLUICE_WHEEL_BUILD_DIR", ROOT / "out" / "wheel"))


class CMakeExtension(Extension):
    """The extension sluice._sluice, built by CMake rather than setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures, builds and installs the `python` component into the
    directory setuptools makes the wheel from."""

    def build_extension(self, ext):
        package_root = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        prefix = package_root.parent.resolve()
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(BUILD_DIR),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DSLUICE_BUILD_TESTS=OFF", "-DSLUICE_BUILD_BENCH=OFF",
            f"-DSLUICE_PYTHON_EXECUTABLE={sys.executable}",
            "-DSLUICE_PYTHON_INSTALL_DIR=.",
        ]
        if (not (BUILD_DIR / "CMakeCache.txt").exists()
                and shutil.which("ninja")):
            configure += ["-G", "Ninja"]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL",
                              str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(BUILD_DIR), "--target",
                        "_sluice", "sluice_python_protos", "sluice",
                        "--parallel", jobs], check=True)
        subprocess.run(["cmake", "--install", str(BUILD_DIR), "--component",
                        "python", "--prefix", str(prefix)], check=True)


def project_version():
    """The version in the top CMakeLists.txt's project() line."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(sluice VERSION ([0-9.]+)", text).group(1)


BUILD_DIR.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    package_dir={"": "bindings/python"},
    packages=["sluice", "sluice.proto"],
    ext_modules=[CMakeExtension("sluice._sluice")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space, out of the source tree.
    options={"build": {"build_base": str(BUILD_DIR / "setuptools")},
             "egg_info": {"egg_base": str(BUILD_DIR)}},
    zip_safe=False,
)
