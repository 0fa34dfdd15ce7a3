"""A small DOM for the HTML report tests, built with the standard library's html.parser.

`parse(text)` gives the root `Element`; `root.find_all(tag, cls=..., **attrs)` finds
elements below it and `element.text()` joins their text with entities decoded, as a
browser shows it; `packed_rows(block)` unpacks the rows a lazy block keeps compressed
as markup, `packed_frames(block)` the chunks of events it keeps as frames.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import NamedTuple

VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "area", "base", "col"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Element | str] = []

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def walk(self) -> Iterator[Element]:
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.walk()

    def find_all(self, tag: str | None = None, *, cls: str | None = None, **attrs: str) -> list[Element]:
        return [
            element
            for element in self.walk()
            if (tag is None or element.tag == tag)
            and (cls is None or cls in element.classes)
            and all(element.attrs.get(name.replace("_", "-")) == value for name, value in attrs.items())
        ]

    def find(self, tag: str | None = None, *, cls: str | None = None, **attrs: str) -> Element:
        found = self.find_all(tag, cls=cls, **attrs)
        assert found, f"no <{tag or '*'}> with class {cls!r} and {attrs}"
        return found[0]

    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text() for child in self.children)

    def __repr__(self) -> str:
        return f"<{self.tag} {self.attrs}>"


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {name: value or "" for name, value in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Element(tag, {name: value or "" for name, value in attrs}, self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(text: str) -> Element:
    builder = _Builder()
    builder.feed(text)
    builder.close()
    return builder.root


def stylesheet_rules(root: Element) -> dict[str, str]:
    """The inline stylesheet as {selector: declarations}, one entry per selector of a rule."""
    css = "".join(style.text() for style in root.find_all("style"))
    rules: dict[str, str] = {}
    for block in css.split("}"):
        selectors, _, declarations = block.partition("{")
        for selector in selectors.split(","):
            if selector.strip():
                rules[selector.strip()] = rules.get(selector.strip(), "") + declarations.strip() + ";"
    return rules


def packed_rows(element: Element) -> Element:
    """The rows a lazy block keeps packed (base64 of raw deflate), parsed as the page's script draws them."""
    markup = "".join(
        zlib.decompress(base64.b64decode(script.text()), -15).decode("utf-8")
        for script in element.find_all("script", type="text/x-callpin-rows")
    )
    return parse(markup)


class FramesChunk(NamedTuple):
    new: int
    old: int | None
    new_frames: list[bytes]
    old_frames: list[bytes] | None  # None: the same as new_frames
    stacks: list[list[list[int]]]


def packed_frames(element: Element) -> list[FramesChunk]:
    """The chunks of frames a lazy block keeps (render_html/packing.py), unpacked."""
    chunks = []
    for script in element.find_all("script", type="text/x-callpin-frames"):
        data = zlib.decompress(base64.b64decode(script.text()), -15)
        count = int(script.attrs["data-count"])
        sides = []
        at = 0
        for _ in range(2 if "data-pairs" in script.attrs else 1):
            lengths = struct.unpack_from(f"<{count}I", data, at)
            at += 4 * count
            frames = []
            for length in lengths:
                frames.append(data[at : at + length])
                at += length
            sides.append(frames)
        assert at == len(data)
        old = script.attrs["data-old"]
        chunks.append(
            FramesChunk(
                int(script.attrs["data-new"]),
                int(old) if old else None,
                sides[0],
                sides[1] if len(sides) == 2 else None,
                json.loads(script.attrs["data-stacks"]),
            )
        )
    return chunks
