"""bindings: what each call site of a module is bound to, read with ast alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from callpin import bindings
from callpin.call_site import matches


def targets(source: str, module: str = "shop.orders", **kwargs: object) -> dict[str, tuple[str | None, str]]:
    found = bindings.analyze(source, module, **kwargs)  # type: ignore[arg-type]
    return {site.text: (site.target, site.binding) for site in found.calls}


@pytest.mark.parametrize(
    ("source", "text", "target", "binding"),
    [
        ("import billing\nbilling.charge(1)\n", "billing.charge", "billing.charge", "import"),
        ("import billing as b\nb.charge(1)\n", "b.charge", "billing.charge", "import"),
        ("import pkg.billing\npkg.billing.charge(1)\n", "pkg.billing.charge", "pkg.billing.charge", "import"),
        ("from pkg import billing\nbilling.charge(1)\n", "billing.charge", "pkg.billing.charge", "from-import"),
        ("from billing import charge as c\nc(1)\n", "c", "billing.charge", "from-import"),
        ("from . import billing\nbilling.charge(1)\n", "billing.charge", "shop.billing.charge", "from-import"),
        ("import billing\npay = billing\npay.charge(1)\n", "pay.charge", "billing.charge", "alias"),
        (
            "import billing\ndef renew(gateway=billing):\n    gateway.charge(1)\n",
            "gateway.charge",
            "billing.charge",
            "default",
        ),
        ("from billing import *\ncharge(1)\n", "charge", "billing.charge", "star-import"),
        ("def helper():\n    pass\ndef f():\n    helper()\n", "helper", "shop.orders.helper", "module"),
        ("len([])\n", "len", "builtins.len", "builtin"),
    ],
)
def test_a_binding_the_code_shows_resolves_to_its_dotted_target(
    source: str, text: str, target: str, binding: str
) -> None:
    assert targets(source)[text] == (target, binding)


def test_self_and_cls_resolve_to_the_class_and_a_local_instance_to_its_method() -> None:
    source = (
        "from billing import Gateway\n"
        "class Cart:\n"
        "    def add(self):\n        pass\n"
        "    @classmethod\n    def make(cls):\n        return cls.build()\n"
        "    @classmethod\n    def build(cls):\n        pass\n"
        "    def fill(self):\n        self.add()\n        g = Gateway()\n        g.charge(1)\n"
        "        g.lines.append(1)\n"
        "        lines = g.lines\n        lines.append(2)\n"
    )
    found = targets(source)
    # What an instance of a class not read here holds is not shown: no target, also
    # through a name.
    assert found["g.lines.append"] == (None, "attribute")
    assert found["lines.append"] == (None, "attribute")
    assert found["self.add"] == ("shop.orders.Cart.add", "self")
    assert found["cls.build"] == ("shop.orders.Cart.build", "cls")
    assert found["g.charge"] == ("billing.Gateway.charge", "instance")
    [construct] = [s for s in bindings.analyze(source, "shop.orders").calls if s.text == "Gateway"]
    assert construct.constructs


@pytest.mark.parametrize(
    ("source", "text", "reason"),
    [
        ("def f(gateway):\n    gateway.charge(1)\n", "gateway.charge", "parameter"),
        ("def f():\n    low = open('f')\n    low.send(1)\n", "low.send", "call result"),
        ("charge(1)\n", "charge", "unbound"),
        ("import a, b\nx = a\nif b:\n    x = b\nx.go()\n", "x.go", "conflict"),
    ],
)
def test_a_binding_the_code_does_not_show_is_unresolved_with_the_reason(source: str, text: str, reason: str) -> None:
    assert targets(source)[text] == (None, reason)


def test_a_logger_and_a_compiled_pattern_are_standard_library_objects() -> None:
    source = (
        "import logging\nimport re\nfrom logging import getLogger\n"
        "logger = logging.getLogger(__name__)\nlog = getLogger('x')\nWORD = re.compile('w')\n"
        "def f(text):\n    logger.debug('a')\n    log.info('b')\n    return WORD.match(text)\n"
    )
    found = {site.text: site for site in bindings.analyze(source, "shop.orders").calls}
    assert [(found[text].target, found[text].origin) for text in ("logger.debug", "log.info", "WORD.match")] == [
        ("logging.Logger.debug", "stdlib"),
        ("logging.Logger.info", "stdlib"),
        ("re.Pattern.match", "stdlib"),
    ]
    assert not found["logging.getLogger"].constructs


def test_origins_tell_the_module_the_project_third_parties_and_the_standard_library(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "billing.py").write_text("def charge():\n    pass\nclass Gateway:\n    pass\n")
    source = (
        "import uuid\nimport requests\nfrom shop import billing\n"
        "def own():\n    pass\n"
        "def f():\n    uuid.uuid4()\n    requests.get('x')\n    billing.charge()\n    billing.Gateway()\n    own()\n"
    )
    found = {s.text: s for s in bindings.analyze(source, "shop.orders", roots=[tmp_path]).calls}
    assert found["uuid.uuid4"].origin == "stdlib"
    assert found["requests.get"].origin == "third-party"
    assert found["billing.charge"].origin == "project"
    assert found["own"].origin == "module"
    assert found["billing.Gateway"].constructs and not found["billing.charge"].constructs


def test_a_file_is_named_by_the_packages_above_it(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    path = tmp_path / "shop" / "orders.py"
    path.write_text("from . import billing\ndef f():\n    billing.charge()\n")
    found = bindings.analyze_file(path)
    assert found.module == "shop.orders"
    assert [s.target for s in found.calls] == ["shop.billing.charge"]


def test_calls_to_labels_match_by_binding_and_by_name_only_when_loose() -> None:
    source = "import billing\ndef f(conn):\n    conn.send(1)\n    billing.send(2)\n"
    found = bindings.analyze(source, "m")
    assert [m.site.line for m in found.calls_to(["billing.send"])] == [4]
    assert [(m.site.line, m.loose) for m in found.calls_to(["billing.send"], loose=True)] == [(3, True), (4, False)]


def test_functions_are_listed_with_their_kind_and_private_ones_flagged() -> None:
    source = "def _helper():\n    pass\nclass Cart:\n    def add(self):\n        pass\n"
    found = bindings.analyze(source, "m")
    assert [(f.qualname, f.kind, f.private) for f in found.functions] == [
        ("_helper", "function", True),
        ("Cart", "class", False),
        ("Cart.add", "method", False),
    ]


@pytest.mark.parametrize(
    ("target", "label", "same"),
    [
        ("billing.charge", "billing.charge", True),
        ("examples.renewals.billing.charge", "billing.charge", True),
        ("billing.charge", "examples.renewals.billing.charge", True),
        ("mybilling.charge", "billing.charge", False),
        ("billing.charge_card", "billing.charge", False),
    ],
)
def test_a_target_and_a_label_match_when_one_ends_the_other_at_a_dot(target: str, label: str, same: bool) -> None:
    assert matches(target, label) is same


def test_reading_never_imports_the_code(tmp_path: Path) -> None:
    path = tmp_path / "boom.py"
    path.write_text("raise SystemExit('imported')\nimport os\nos.getcwd()\n")
    assert [s.target for s in bindings.analyze_file(path).calls] == ["builtins.SystemExit", "os.getcwd"]


def test_a_relative_import_climbs_the_packages_of_the_module() -> None:
    source = "from ..core import billing\nbilling.charge(1)\n"
    assert targets(source, "shop.sales.orders")["billing.charge"] == ("shop.core.billing.charge", "from-import")
    assert targets(source, "orders")["billing.charge"] == (None, "relative import")
