"""A pytest module that pins one function's collaborators with the fixture, its inputs left to fill in.

`callpin seams --skeleton FUNCTION` prints it. The generated test fails, saying so, until
CASES holds at least one case: a skeleton that passed would pin nothing and look green.
"""

from __future__ import annotations

import ast

from .seams import FunctionSeams


def skeleton(function: FunctionSeams) -> str:
    """The text of a pytest module pinning `function`'s collaborators, one baseline per case."""
    module, qualname = function.module, function.function.qualname
    head, _, last = module.rpartition(".")
    importing = f"from {head} import {last}" if head else f"import {module}"
    parameters = _parameters(function.node, method=function.function.kind == "method")
    owner, _, name = qualname.rpartition(".")
    callee = f"subject().{name}" if owner else f"{last}.{qualname}"
    asynchronous = isinstance(function.node, ast.AsyncFunctionDef)
    call = f"asyncio.run({callee}(**CASES[name]))" if asynchronous else f"{callee}(**CASES[name])"
    spy = "".join(f"    {target!r},\n" for target in function.spy()) or "    # no collaborator found: name one\n"
    ambient = "".join(
        f"#   {seam.name} (line {', '.join(map(str, seam.lines))}): {seam.hint}\n" for seam in function.of("ambient")
    )
    extra_import = "\nimport asyncio" if asynchronous else ""
    fill = f"the arguments of {qualname}({', '.join(parameters)})"
    example = ", ".join(f"{parameter!r}: ..." for parameter in parameters)
    text = f'''"""Pins the interactions of {module}.{qualname} with its collaborators.

Written by `callpin seams --skeleton {qualname}`. The inputs are yours to fill in: until
CASES holds a case, the test fails and says so. Run `pytest --callpin-mode=new` once to
write one baseline per case, review and commit them; a plain `pytest` then fails any
change to which calls are made, in what order, how often, or with which arguments.
"""

from __future__ import annotations
{extra_import}
import pytest

{importing}

SPY = [
{spy}]
'''
    if ambient:
        text += f"\n# Ambient calls that can make the log differ between runs, and how to tame each:\n{ambient}"
    if owner:
        text += f'''

def subject():
    """The {owner} whose {name}() is pinned: build it as the code under test would."""
    raise NotImplementedError("build a {owner} for the test in subject()")
'''
    text += f"""

# One entry per case: its name, then {fill}, e.g.
#     "an active case": {{{example}}},
CASES: dict[str, dict[str, object]] = {{}}


@pytest.mark.parametrize("name", sorted(CASES) or ["no case yet"])
def test_{_identifier(qualname)}(callpin, name):
    if name not in CASES:
        pytest.fail("fill in CASES with {fill}: this test pins nothing until then")
    with callpin.pin(name, spy=SPY) as recording:
        recording.mark("returned", {call})
"""
    return text


def _parameters(node: ast.AST | None, *, method: bool) -> list[str]:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    args = node.args
    names = [arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
    if method and names and "staticmethod" not in decorators:
        names = names[1:]
    return names


def _identifier(qualname: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in qualname.replace(".", "_")).strip("_").lower() or "function"
