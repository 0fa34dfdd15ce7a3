"""Build the optional C extension and bundle the demo's example; all metadata lives in pyproject.toml."""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

# CALLPIN_BUILD_SPEEDUPS=1 makes a failed build fatal, so CI cannot silently
# fall back to the pure-Python codec; otherwise a machine without a compiler
# still installs callpin and runs the reference implementation.
REQUIRED = os.environ.get("CALLPIN_BUILD_SPEEDUPS") == "1"
EXTRA_CFLAGS = os.environ.get("CALLPIN_CFLAGS", "").split()


class OptionalBuildExt(build_ext):
    def finalize_options(self) -> None:
        super().finalize_options()
        # Objects built with other flags (a sanitizer's) must never be reused.
        if EXTRA_CFLAGS:
            self.force = True

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any build failure is reported the same way
            self._failed(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        if REQUIRED:
            raise exc
        sys.stderr.write(f"warning: callpin._speedups not built ({exc}); using the pure-Python codec\n")


# `callpin demo` runs the example of examples/renewals. The repository keeps its one copy
# there (its tests import it as `examples.renewals`); a built package carries it as data
# beside callpin/demo.py, so an installed callpin has it outside any checkout.
EXAMPLE = Path("examples", "renewals")
PACKAGED_EXAMPLE = Path("callpin", "_example", "renewals")


class BuildPyWithExample(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install runs the demo from the checkout itself
            return
        for source, target in self._example_files():
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, *(str(target) for _, target in self._example_files())]

    def _example_files(self) -> list[tuple[Path, Path]]:
        files = sorted(path for path in EXAMPLE.iterdir() if path.is_file() and path.suffix != ".pyc")
        if not any(path.name == "renewals.py" for path in files):
            raise FileNotFoundError(f"{EXAMPLE}/renewals.py is missing: callpin demo needs it")
        return [(path, Path(self.build_lib) / PACKAGED_EXAMPLE / path.name) for path in files]


speedups = Extension(
    "callpin._speedups",
    sources=["src/callpin/_speedups.c", "src/callpin/_speedups_diff.c"],
    extra_compile_args=["-Wall", "-Wextra", "-Wno-missing-field-initializers", *EXTRA_CFLAGS],
    extra_link_args=[flag for flag in EXTRA_CFLAGS if flag.startswith("-fsanitize")],
    optional=not REQUIRED,
)

ext_modules = [speedups] if os.path.exists("src/callpin/_speedups.c") else []
setup(ext_modules=ext_modules, cmdclass={"build_ext": OptionalBuildExt, "build_py": BuildPyWithExample})
