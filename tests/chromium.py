"""Headless Chromium driven over the DevTools protocol on a pipe, with the standard library only.

`Browser(path, profile)` starts Chromium with `--remote-debugging-pipe` (commands on
its fd 3, replies on fd 4, each a JSON message ended by a NUL byte); `open(url,
width, height)` loads a page in a fresh tab and waits for its load event;
`evaluate`, `press`, `screenshot` act on that tab. Used by the HTML report tests
and benchmarks/bench_html.py; it installs nothing.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from typing import Any

TIMEOUT = 120.0


def find_chromium() -> str | None:
    """The Chromium to drive: $CALLPIN_CHROMIUM, else `chromium` on PATH."""
    return os.environ.get("CALLPIN_CHROMIUM") or shutil.which("chromium")


class BrowserError(RuntimeError):
    pass


def _above(fd: int, lowest: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, lowest)
    os.close(fd)
    return moved


class Browser:
    def __init__(self, path: str, profile: str) -> None:
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # The browser's ends move above fd 4 first, so that placing them at 3 and 4
        # in the child never overwrites one with the other.
        to_browser_read, from_browser_write = (_above(fd, 10) for fd in (to_browser_read, from_browser_write))
        flags = [
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--force-device-scale-factor=1",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            "about:blank",
        ]
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser_read} 4>&{from_browser_write}', path, *flags],
            pass_fds=(to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -- the protocol

    def _send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            data = os.read(self._from_browser, 1 << 20)
            if not data:
                raise BrowserError("Chromium closed its DevTools pipe")
            self._buffer += data
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)  # type: ignore[no-any-return]

    def call(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> dict[str, Any]:
        """Send one command (to the open tab unless `page` is False) and return its result."""
        wanted = self._send(method, params, session=self.session if page else None)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._receive(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})  # type: ignore[no-any-return]
            if "method" in message:
                self._events.append(message)

    def wait_for(self, event: str) -> dict[str, Any]:
        """The next event of that name (kept ones first), with the time it arrived."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for k, message in enumerate(self._events):
                if message["method"] == event:
                    del self._events[k]
                    return message
            message = self._receive(deadline)
            if "method" in message:
                message["arrived"] = time.monotonic()
                self._events.append(message)

    # -- a tab

    def open(self, url: str, width: int, height: int, *, script: bool = True) -> dict[str, float]:
        """Load `url` in a new tab of that size (with JavaScript off unless `script`);
        the seconds until DOMContentLoaded and load."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, page=False)["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, page=False)
        self.session = attached["sessionId"]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        if not script:
            self.call("Emulation.setScriptExecutionDisabled", {"value": True})
        self.call("Page.enable")
        self._events.clear()
        start = time.monotonic()
        self.call("Page.navigate", {"url": url})
        ready = self.wait_for("Page.domContentEventFired")
        loaded = self.wait_for("Page.loadEventFired")
        return {
            "domcontentloaded": ready.get("arrived", time.monotonic()) - start,
            "load": loaded.get("arrived", time.monotonic()) - start,
        }

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the tab (promises awaited)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """One key press (down and up) of a printable key."""
        code = f"Key{key.upper()}"
        virtual = ord(key.upper())
        for kind in ("keyDown", "keyUp"):
            params: dict[str, Any] = {"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": virtual}
            if kind == "keyDown":
                params["text"] = key
            self.call("Input.dispatchKeyEvent", params)

    def screenshot(self, path: str | os.PathLike[str], *, full_page: bool = False) -> None:
        """A PNG of the viewport (or of the whole page)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", page=False)
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
