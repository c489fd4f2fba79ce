"""One headless Chromium kept open across items, for the browser-drawn styles (Mermaid, paper).

The browser is Debian's ``chromium`` driven by Playwright (a test dependency; no browser is
ever downloaded). :class:`Browser` opens it once; :meth:`Browser.render` loads an HTML page,
waits until the page's script sets ``window.__ready``, reads ``window.__result`` (whatever
geometry the page measured with the browser's own layout: ``getBoundingClientRect``,
``getBBox``, ``getTotalLength``…) and screenshots the page at device scale 1.

>>> # with Browser() as b: png, result = b.render("<html>...</html>", 640, 480)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--font-render-hinting=none",
                 "--force-color-profile=srgb", "--disable-lcd-text"]


class BrowserUnavailable(RuntimeError):
    """Chromium or Playwright is missing; the message says what to install."""


def chromium_path() -> str:
    """The Chromium executable (``SCIFLOW_CHROMIUM`` overrides), or :class:`BrowserUnavailable`."""
    for c in (os.environ.get("SCIFLOW_CHROMIUM", ""), *CHROMIUM_CANDIDATES, shutil.which("chromium") or ""):
        if c and Path(c).is_file():
            return c
    raise BrowserUnavailable("no Chromium found: install Debian's chromium (apt-get install chromium; "
                             "`make install-bench` does it) or set SCIFLOW_CHROMIUM")


class Browser:
    """A Chromium page reused for every render (context manager)."""

    def __init__(self, timeout_s: float = 30.0):
        self.timeout_ms = int(timeout_s * 1000)
        self._pw: Any = None
        self._browser: Any = None
        self._page: Any = None

    def __enter__(self) -> Browser:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        if self._page is not None:
            return
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:  # pragma: no cover - playwright is a dev dependency
            raise BrowserUnavailable("playwright is not installed: pip install playwright "
                                     "(it drives Debian's chromium; no browser download is needed)") from exc
        path = chromium_path()
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        self._page = self._browser.new_page(device_scale_factor=1)

    def close(self) -> None:
        for obj, meth in ((self._browser, "close"), (self._pw, "stop")):
            if obj is not None:
                with contextlib.suppress(Exception):  # closing a dead browser must not raise
                    getattr(obj, meth)()
        self._pw = self._browser = self._page = None

    def render(self, html: str, width: int, height: int, selector: str | None = None) -> tuple[np.ndarray, Any]:
        """Load ``html`` in a ``width`` x ``height`` viewport, wait for ``window.__ready``,
        and return the screenshot (RGB uint8; of ``selector``'s box when given, else the full
        page) and ``window.__result``."""
        self.open()
        page = self._page
        page.set_viewport_size({"width": int(width), "height": int(height)})
        # page globals survive set_content: never let a page read the previous page's result
        page.evaluate("window.__ready = false; window.__result = undefined; window.__error = undefined")
        page.set_content(html, wait_until="load", timeout=self.timeout_ms)
        page.wait_for_function("window.__ready === true", timeout=self.timeout_ms)
        error = page.evaluate("window.__error || null")
        if error:
            raise RuntimeError(f"page script failed: {error}")
        result = json.loads(page.evaluate("JSON.stringify(window.__result ?? null)"))
        shot = page.locator(selector).screenshot() if selector else page.screenshot(full_page=True)
        return np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")), result
