"""The distributions as a user gets them: the wheel and the sdist, built, installed outside the checkout, run.

The metadata checks read pyproject.toml. The rest is marked slow (`make test-all`, or
`pytest -m slow`): it builds the sdist and the wheel from a clean copy of the source
tree, installs each in a fresh virtual environment in a temporary folder, and runs the
installed `callpin` there, with no checkout on its path.
"""

from __future__ import annotations

import email.parser
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import callpin

ROOT = Path(__file__).resolve().parents[2]
SUPPORTED = ("3.11", "3.12", "3.13")
EXAMPLE = ROOT / "examples" / "renewals"
TIMEOUT = 900


def _project() -> dict[str, object]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        project: dict[str, object] = tomllib.load(file)["project"]
    return project


def test_the_metadata_names_every_supported_python_and_typing():
    classifiers = _project()["classifiers"]
    assert isinstance(classifiers, list)
    for version in SUPPORTED:
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Typing :: Typed" in classifiers
    assert (ROOT / "src" / "callpin" / "py.typed").exists()


def test_the_version_is_written_once_in_the_package():
    project = _project()
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    with open(ROOT / "pyproject.toml", "rb") as file:
        dynamic = tomllib.load(file)["tool"]["setuptools"]["dynamic"]
    assert dynamic == {"version": {"attr": "callpin.__version__"}}


def test_the_declared_license_is_in_the_repository():
    project = _project()
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


# ---------------------------------------------------------------------------
# Built and installed (slow).


def _clean_env(home: Path) -> dict[str, str]:
    """The environment of a user's shell with no checkout, venv or test settings in it."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "CALLPIN_", "PYTHON", "VIRTUAL_ENV", "COV_"))
        and key not in ("CI", "PATH", "HOME")
    }
    git = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    env["PATH"] = os.pathsep.join(dict.fromkeys([git, "/usr/bin", "/bin"]))
    env["HOME"] = str(home)
    return env


def _run(argv: list[str | Path], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [os.fspath(arg) for arg in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        check=False,
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@dataclass
class Built:
    wheel: Path
    sdist: Path
    place: Path  # a folder outside the checkout
    env: dict[str, str]

    def venv(self, name: str) -> Path:
        """A fresh virtual environment of this interpreter; its bin folder."""
        folder = self.place / name
        _ok(_run([sys.executable, "-m", "venv", folder], cwd=self.place, env=self.env))
        return folder / "bin"

    def install(self, bin_folder: Path, *requirements: str | Path, **env: str) -> None:
        argv = [bin_folder / "python", "-m", "pip", "install", "--quiet", "--no-cache-dir", *requirements]
        _ok(_run(argv, cwd=self.place, env={**self.env, **env}))

    def callpin(self, bin_folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([bin_folder / "callpin", *args], cwd=self.place, env=self.env)


def _source_copy(target: Path) -> Path:
    """The source tree as committed or about to be (tracked and new files), without build outputs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    if shutil.which("git") is None:
        pytest.skip("needs git to list the source tree")
    place = tmp_path_factory.mktemp("packaging")
    env = _clean_env(place)
    source = _source_copy(place / "source")
    out = place / "dist"
    # The sdist through setuptools' own build hook (what `python -m build --sdist` calls),
    # in an environment holding the build requirements of pyproject.toml.
    builder = place / "builder"
    _ok(_run([sys.executable, "-m", "venv", builder], cwd=place, env=env))
    _ok(
        _run([builder / "bin/python", "-m", "pip", "install", "--quiet", "setuptools>=77", "wheel"], cwd=place, env=env)
    )
    build_sdist = "import sys, setuptools.build_meta as hooks; print(hooks.build_sdist(sys.argv[1]))"
    sdist = out / _ok(_run([builder / "bin/python", "-c", build_sdist, out], cwd=source, env=env)).splitlines()[-1]
    # The wheel as pip builds it, with C speedups required so a broken build cannot pass.
    wheel_argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir", "-w", out, source]
    _ok(_run(wheel_argv, cwd=place, env={**env, "CALLPIN_BUILD_SPEEDUPS": "1"}))
    (wheel,) = out.glob("callpin-*.whl")
    return Built(wheel=wheel, sdist=sdist, place=place, env=env)


def _assert_the_demo_ran(done: subprocess.CompletedProcess[str]) -> None:
    output = _ok(done)
    assert "identical: 3 events" in output
    assert "bite: 4 mutants in git worktrees: 4 caught (drift 4), 0 timeout, 0 survived, 0 error" in output
    assert "VOLATILE: none" in output


def _version_line(implementation: str) -> str:
    return f"callpin {callpin.__version__} (implementation: {implementation}; Python {platform.python_version()})\n"


@pytest.mark.slow
def test_the_wheel_installed_outside_the_checkout_runs_version_and_the_demo(built):
    venv = built.venv("wheel-venv")
    built.install(venv, built.wheel)
    where = _ok(
        _run([venv / "python", "-c", "import callpin; print(callpin.__file__)"], cwd=built.place, env=built.env)
    )
    assert Path(where.strip()).is_relative_to(venv.parent)
    assert _ok(built.callpin(venv, "--version")) == _version_line("c")
    # `pip install callpin` brings no pytest, which the example's tests need.
    without_pytest = built.callpin(venv, "demo")
    assert without_pytest.returncode == 2
    assert without_pytest.stderr.strip().endswith("which is not installed: pip install pytest")
    built.install(venv, "pytest")
    _assert_the_demo_ran(built.callpin(venv, "demo"))


@pytest.mark.slow
def test_the_sdist_builds_a_wheel_that_installs_runs_and_carries_its_tests(built):
    venv = built.venv("sdist-venv")
    built.install(venv, f"callpin[test] @ {built.sdist.as_uri()}")
    assert _ok(built.callpin(venv, "--version")) == _version_line("c")
    _assert_the_demo_ran(built.callpin(venv, "demo"))
    # Its tests find what they import (conftest, sample logs, vectors) inside the sdist.
    unpacked = built.place / "unpacked"
    with tarfile.open(built.sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (tree,) = unpacked.iterdir()
    collected = _run([venv / "python", "-m", "pytest", "--collect-only", "-q", "-m", ""], cwd=tree, env=built.env)
    assert " error" not in _ok(collected).splitlines()[-1]
    _ok(
        _run(
            [venv / "python", "-m", "pytest", "-q", "-p", "no:xdist", "tests/test_vectors.py"], cwd=tree, env=built.env
        )
    )


@pytest.mark.slow
def test_the_license_is_in_the_wheel_and_the_sdist(built):
    license_text = (ROOT / "LICENSE").read_bytes()
    with zipfile.ZipFile(built.wheel) as wheel:
        names = wheel.namelist()
        (licence_name,) = [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]
        assert wheel.read(licence_name) == license_text
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = email.parser.Parser().parsestr(wheel.read(metadata_name).decode("utf-8"))
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    with tarfile.open(built.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        extracted = sdist.extractfile(f"{top}/LICENSE")
        assert extracted is not None and extracted.read() == license_text


@pytest.mark.slow
def test_the_wheel_carries_the_repository_example_byte_for_byte(built):
    # examples/renewals is the one copy in the repository; setup.py packages it.
    expected = {path.name: path.read_bytes() for path in EXAMPLE.iterdir() if path.suffix == ".py"}
    with zipfile.ZipFile(built.wheel) as wheel:
        packaged = {
            name.rsplit("/", 1)[1]: wheel.read(name)
            for name in wheel.namelist()
            if name.startswith("callpin/_example/renewals/")
        }
    assert packaged == expected


@pytest.mark.slow
def test_without_a_c_compiler_the_sdist_still_installs_and_runs_the_python_implementation(built):
    out = built.place / "no-compiler"
    argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir", "-w", out, built.sdist]
    _ok(_run(argv, cwd=built.place, env={**built.env, "CC": "false"}))
    (wheel,) = out.glob("callpin-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith(".so")]
    venv = built.venv("no-compiler-venv")
    built.install(venv, wheel)
    assert _ok(built.callpin(venv, "--version")) == _version_line("python")
    shown = _ok(built.callpin(venv, "show", str(ROOT / "tests" / "vectors" / "small-log.cpin")))
    assert shown.startswith("# callpin log: 5 events")


@pytest.mark.slow
def test_the_wheel_and_the_sdist_carry_the_report_script_byte_for_byte(built):
    # The HTML report inlines render_html/report.js, read from the installed package.
    script = (ROOT / "src/callpin/render_html/report.js").read_bytes()
    with zipfile.ZipFile(built.wheel) as wheel:
        assert wheel.read("callpin/render_html/report.js") == script
    with tarfile.open(built.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        extracted = sdist.extractfile(f"{top}/src/callpin/render_html/report.js")
        assert extracted is not None and extracted.read() == script
