"""Headless Chromium driven over the DevTools protocol: open a page, wait, screenshot.

WebGL renders in software (SwiftShader). Flags known to work as root in a container:
--headless --no-sandbox --disable-gpu plus the quiet-network ones; a fresh profile per run.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-unsafe-swiftshader", "--use-angle=swiftshader", "--hide-scrollbars",
)


def chromium_path() -> str | None:
    """The chromium executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class HeadlessChromium:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1280, height: int = 800, timeout: float = 60.0) -> None:
        path = chromium_path()
        if path is None:
            raise FileNotFoundError("chromium not found (scripts/setup.sh installs Debian's chromium)")
        self._profile = tempfile.mkdtemp(prefix="humanoid_sim_chromium_")
        self.process = subprocess.Popen(
            [path, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
             "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        self.port = self._devtools_port(timeout)
        self._ws = None
        self._next_id = 0

    def _devtools_port(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        assert self.process.stderr is not None
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                return int(match.group(1))
        self.close()
        raise RuntimeError("chromium did not open its DevTools port")

    def _call(self, method: str, **params) -> dict:
        self._next_id += 1
        self._ws.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._ws.recv(timeout=60.0))
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def open(self, url: str) -> None:
        """Load ``url`` in the page."""
        from websockets.sync.client import connect

        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10))
        page = next(p for p in pages if p.get("type") == "page")
        self._ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self._call("Page.enable")
        self._call("Page.navigate", url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        result = self._call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def press_space(self) -> None:
        """Press and release the space bar in the page."""
        for kind in ("keyDown", "keyUp"):
            self._call("Input.dispatchKeyEvent", type=kind, key=" ", code="Space", windowsVirtualKeyCode=32, text=" ")

    def screenshot(self, path: Path) -> Path:
        """Write a PNG of the page."""
        data = self._call("Page.captureScreenshot", format="png")["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> HeadlessChromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
