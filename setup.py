"""Builds the sluice Python package through CMake, as pybind11's
cmake_example does: `pip install .` (offline: `pip install
--no-build-isolation .`) or `python3 -m build --wheel --no-isolation`.

By default the extension is built for the interpreter that runs this
script in a build directory of its own, out/wheel (at the depth of
out/release, so ccache hits what a release build compiled).
SLUICE_CMAKE_BUILD_DIR=out/release instead packages what an existing
CMake build made: its configuration is left as it is and only the
package's targets are brought up to date (nothing when it is built), so a
wheel costs no second compile of the project. Its Python module must have
been built for this interpreter's version.

`cmake --install --component python` stages the package (the extension,
the Python sources, the protobuf classes and the `sluice` command in
sluice/bin), which is copied where setuptools packs the wheel.
CMAKE_BUILD_PARALLEL_LEVEL sets the build jobs (default: one per CPU).
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
EXISTING_BUILD = os.environ.get("SLUICE_CMAKE_BUILD_DIR")
BUILD_DIR = pathlib.Path(EXISTING_BUILD or ROOT / "out" / "wheel").resolve()


class CMakeExtension(Extension):
    """The extension sluice._sluice, built by CMake rather than setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


def cache_value(name):
    """A variable of BUILD_DIR's CMakeCache.txt, or None."""
    text = (BUILD_DIR / "CMakeCache.txt").read_text()
    found = re.search(rf"^{name}:[A-Z]+=(.*)$", text, re.MULTILINE)
    return found.group(1) if found else None


class CMakeBuild(build_ext):
    """Configures (unless reusing a build), builds the package's targets and
    installs the `python` component into the directory setuptools makes the
    wheel from."""

    def build_extension(self, ext):
        if EXISTING_BUILD is None or not (BUILD_DIR /
                                          "CMakeCache.txt").exists():
            self.configure()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL",
                              str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(BUILD_DIR), "--target",
                        "_sluice", "sluice_python_protos", "sluice",
                        "--parallel", jobs], check=True)
        self.check_interpreter()
        package = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        with tempfile.TemporaryDirectory() as stage:
            subprocess.run(["cmake", "--install", str(BUILD_DIR),
                            "--component", "python", "--prefix", stage],
                           check=True)
            staged = pathlib.Path(stage) / cache_value(
                "SLUICE_PYTHON_INSTALL_DIR") / "sluice"
            shutil.copytree(staged, package, dirs_exist_ok=True)

    def configure(self):
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(BUILD_DIR),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DSLUICE_BUILD_TESTS=OFF", "-DSLUICE_BUILD_BENCH=OFF",
            f"-DSLUICE_PYTHON_EXECUTABLE={sys.executable}",
        ]
        if (not (BUILD_DIR / "CMakeCache.txt").exists()
                and shutil.which("ninja")):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)

    @staticmethod
    def check_interpreter():
        """Fails unless the build made the extension for this Python."""
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = BUILD_DIR / "bindings" / "python" / "sluice"
        if not (built / f"_sluice{suffix}").exists():
            made = sorted(path.name for path in built.glob("_sluice*"))
            sys.exit(f"setup.py: {BUILD_DIR} has no _sluice{suffix} for "
                     f"{sys.executable} (it has {made or 'no extension'}); "
                     f"build it for this interpreter (SLUICE_PYTHON) or "
                     f"unset SLUICE_CMAKE_BUILD_DIR")


def project_version():
    """The version in the top CMakeLists.txt's project() line."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(sluice VERSION ([0-9.]+)", text).group(1)


SCRATCH = ROOT / "out" / "setuptools"
SCRATCH.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    package_dir={"": "bindings/python"},
    packages=["sluice", "sluice.proto"],
    ext_modules=[CMakeExtension("sluice._sluice")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space, out of the source tree.
    options={"build": {"build_base": str(SCRATCH)},
             "egg_info": {"egg_base": str(SCRATCH)}},
    zip_safe=False,
)
