"""Build the optional C extension callpin._speedups; all metadata lives in pyproject.toml."""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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


speedups = Extension(
    "callpin._speedups",
    sources=["src/callpin/_speedups.c"],
    extra_compile_args=["-Wall", "-Wextra", "-Wno-missing-field-initializers", *EXTRA_CFLAGS],
    extra_link_args=[flag for flag in EXTRA_CFLAGS if flag.startswith("-fsanitize")],
    optional=not REQUIRED,
)

ext_modules = [speedups] if os.path.exists("src/callpin/_speedups.c") else []
setup(ext_modules=ext_modules, cmdclass={"build_ext": OptionalBuildExt})
