"""A hand-written characterization of cookiecutter 2.6.0: `cookiecutter.main.cookiecutter` and
`cookiecutter.hooks.run_hook`, pinned with `callpin.record`.

The spy lists below were chosen by reading the two modules, before `callpin seams` was run on
them: they are the reference the scenario compares seams with. Each target has the reason
the pin needs it. Everything runs on local folders under one temporary root: the templates
are local (no clone, no download), the one case that would ask the user stubs the prompt.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from cookiecutter import exceptions, hooks, main

import callpin

# cookiecutter.main.cookiecutter: the collaborator calls that are its contract.
MAIN_TARGETS = {
    "cookiecutter.config.get_user_config": "which user config is read (config_file, default_config)",
    "cookiecutter.repository.determine_repo_dir": "where the template comes from: clone, unzip or a folder, "
    "with the abbreviations and cookiecutters_dir of the config",
    "cookiecutter.hooks.run_pre_prompt_hook": "the template's pre_prompt script runs before any question "
    "(skipped with accept_hooks=False)",
    "cookiecutter.replay.load": "a replay reads the saved answers from replay_dir",
    "cookiecutter.generate.generate_context": "the context from cookiecutter.json, the config's default_context "
    "and extra_context",
    "cookiecutter.prompt.choose_nested_template": "a nested template asks which sub-template to use",
    "cookiecutter.prompt.prompt_for_config": "the questions put to the user, and when they are skipped",
    "cookiecutter.replay.dump": "the answers saved for a later replay (a file in replay_dir)",
    "cookiecutter.generate.generate_files": "the project written: repo_dir, context, output_dir and the "
    "overwrite/skip/hooks flags",
    "cookiecutter.utils.rmtree": "the temporary template copy or unzipped archive deleted afterwards",
}

# cookiecutter.hooks.run_hook: what its internal helpers (find_hook, run_script_with_context,
# run_script) end up doing to the outside world.
HOOK_TARGETS = {
    "subprocess.Popen": "the hook process started: the command (interpreter and rendered script) and its cwd, "
    "then its wait() for the exit status",
    "cookiecutter.utils.make_executable": "the rendered script is made executable before it runs",
}

# Spying a class records its construction (the command and cwd, labelled with the class) and
# its public methods (wait).
HOOK_SPY = list(HOOK_TARGETS)

Case = Callable[[Path], object]


def _template(root: Path, name: str, context: dict[str, object], *, hook: str | None = None) -> Path:
    """A local template folder: cookiecutter.json, one templated file, an optional hook script."""
    folder = root / name
    (folder / "{{cookiecutter.slug}}").mkdir(parents=True)
    (folder / "cookiecutter.json").write_text(json.dumps(context), encoding="utf-8")
    (folder / "{{cookiecutter.slug}}" / "README.md").write_text("# {{cookiecutter.name}}\n", encoding="utf-8")
    if hook is not None:
        (folder / "hooks").mkdir()
        (folder / "hooks" / hook).write_text(
            "import pathlib\npathlib.Path('hook-ran.txt').write_text('{{cookiecutter.slug}}')\n", encoding="utf-8"
        )
    return folder


def _config(root: Path) -> str:
    """A user config that keeps cookiecutter's folders inside the temporary root, not in $HOME."""
    path = root / "cookiecutterrc.yaml"
    path.write_text(
        f"cookiecutters_dir: {root / 'cookiecutters'}\nreplay_dir: {root / 'replay'}\ndefault_context:\n  name: Ada\n",
        encoding="utf-8",
    )
    return str(path)


CONTEXT = {"name": "Demo", "slug": "{{ cookiecutter.name.lower() }}"}


def plain(root: Path) -> object:
    template = _template(root, "plain", CONTEXT)
    return main.cookiecutter(
        str(template),
        no_input=True,
        extra_context={"name": "Grace"},
        output_dir=str(root / "out"),
        config_file=_config(root),
    )


def replayed(root: Path) -> object:
    """A first run saves its answers; the replay reads them back instead of prompting."""
    template = _template(root, "again", CONTEXT)
    config = _config(root)
    main.cookiecutter(str(template), no_input=True, output_dir=str(root / "first"), config_file=config)
    return main.cookiecutter(str(template), replay=True, output_dir=str(root / "second"), config_file=config)


def prompted(root: Path) -> object:
    """Without no_input the user answers: prompt_for_config is stubbed (see STUBS)."""
    template = _template(root, "asked", CONTEXT)
    return main.cookiecutter(str(template), output_dir=str(root / "out"), config_file=_config(root))


def zipped(root: Path) -> object:
    """A local .zip template is unpacked to a temporary folder, deleted after generation."""
    template = _template(root / "src", "packed", CONTEXT)
    archive = root / "packed.zip"
    with zipfile.ZipFile(archive, "w") as packed:
        for path in sorted(template.parent.rglob("*")):
            name = path.relative_to(template.parent).as_posix() + ("/" if path.is_dir() else "")
            if path.is_dir():
                packed.writestr(name, "")
            else:
                packed.write(path, name)
    return main.cookiecutter(str(archive), no_input=True, output_dir=str(root / "out"), config_file=_config(root))


def hooked(root: Path) -> object:
    """A pre_prompt hook runs in a temporary copy of the template, deleted afterwards."""
    template = _template(root, "hooked", CONTEXT, hook="pre_prompt.py")
    return main.cookiecutter(str(template), no_input=True, output_dir=str(root / "out"), config_file=_config(root))


def nested(root: Path) -> object:
    """A template of templates: the choice made, then the chosen one generated."""
    outer = root / "nested"
    _template(outer, "inner", CONTEXT)
    (outer / "cookiecutter.json").write_text(
        json.dumps({"templates": {"inner": {"path": "./inner", "title": "Inner", "description": "the inner one"}}}),
        encoding="utf-8",
    )
    return main.cookiecutter(str(outer), no_input=True, output_dir=str(root / "out"), config_file=_config(root))


def refused(root: Path) -> object:
    """replay with extra_context is refused before anything is read."""
    try:
        main.cookiecutter("anything", replay=True, extra_context={"name": "x"}, config_file=_config(root))
    except exceptions.InvalidModeException as exc:
        return f"refused: {exc}"
    return "accepted"


def post_hook(root: Path) -> object:
    """run_hook renders the template's post_gen_project.py with the context and runs it in the project."""
    template = _template(root, "posthook", CONTEXT, hook="post_gen_project.py")
    project = root / "project"
    project.mkdir()
    context = {"cookiecutter": {"name": "Grace", "slug": "grace"}}
    before = os.getcwd()
    os.chdir(template)  # run_hook finds hooks/ in the working directory, as generate_files arranges
    try:
        hooks.run_hook("post_gen_project", str(project), context)
    finally:
        os.chdir(before)
    return (project / "hook-ran.txt").read_text(encoding="utf-8")


MAIN_CASES: dict[str, Case] = {
    "plain": plain,
    "replayed": replayed,
    "prompted": prompted,
    "zipped": zipped,
    "hooked": hooked,
    "nested": nested,
    "refused": refused,
}
HOOK_CASES: dict[str, Case] = {"post_hook": post_hook}
# The cases whose log names a temporary folder inside a PurePosixPath argument
# (generate_files(repo_dir=Path(...)) after the hooked copy): normalization rules rewrite
# strings, not paths, so that log differs between two folders.
UNSTABLE = {"hooked"}

# The user, in the one case that would ask: answers given, no terminal read.
STUBS = {"prompted": {"cookiecutter.prompt.prompt_for_config": callpin.returns({"name": "Linus", "slug": "linus"})}}


def _rules() -> callpin.RuleSet:
    """Paths under the test's roots (`callpin-seams-*`) and the system temporary folder
    (tempfile.mkdtemp, NamedTemporaryFile) numbered, and the interpreter's path named, so
    that two runs in two folders give the same bytes."""
    temp = re.escape(os.path.realpath(tempfile.gettempdir()))
    return callpin.DEFAULT_RULES.with_rules(
        [
            callpin.rule(temp + r"/callpin-seams-[A-Za-z0-9_]+", "root"),
            callpin.rule(temp + r"/tmp[A-Za-z0-9_]+", "temp"),
            callpin.rule(re.escape(sys.executable), "python"),
        ]
    )


def run(root: Path, logs: Path) -> dict[str, list[str]]:
    """Run every case under its pin, writing `<case>.cpin` into `logs`; the call labels recorded per case."""
    logs.mkdir(parents=True, exist_ok=True)
    recorded: dict[str, list[str]] = {}
    plan: list[tuple[str, Case, list[str]]] = [(name, case, list(MAIN_TARGETS)) for name, case in MAIN_CASES.items()]
    plan += [(name, case, HOOK_SPY) for name, case in HOOK_CASES.items()]
    for name, case, targets in plan:
        folder = root / name
        folder.mkdir(parents=True)
        with callpin.record(logs / f"{name}.cpin", spy=targets, stub=STUBS.get(name), normalize=_rules()) as recording:
            recording.mark("returned", case(folder))
        recorded[name] = [event.label for event in recording.events if event.kind == "call"]
    return recorded
