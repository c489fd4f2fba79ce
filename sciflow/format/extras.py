"""Optional features and the extras that install them.

The base install (``pip install sciflow-eval``) scores graphs and images with the default
backends. Heavier or rarer features live in extras of the distribution; a command that needs a
missing one stops with one line naming the extra, e.g. ``the ray executor needs the 'ray' extra:
pip install 'sciflow-eval[ray]'``.

>>> extra_hint("ray")
"pip install 'sciflow-eval[ray]'"
>>> sorted(EXTRAS)[:3]
['clip', 'detector', 'lpips']
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["DISTRIBUTION", "EXTRAS", "MissingExtra", "extra_hint", "require"]

#: the name sciflow is published under (the import name and the command stay ``sciflow``)
DISTRIBUTION = "sciflow-eval"

#: extra -> what it adds (the packages are declared in pyproject.toml's optional-dependencies)
EXTRAS: dict[str, str] = {
    "clip": "the real CLIP image-text model for the image level (open_clip_torch, torchvision)",
    "lpips": "the real LPIPS perceptual distance for the image level (lpips, torchvision)",
    "verify": "the human verification page, `sciflow verify` (starlette, uvicorn)",
    "notebook": "notebooks/inspect.ipynb and its helpers (nbformat, nbclient, ipykernel, pandas)",
    "pandas": "Results.to_pandas() and DataFrame diagnostics tables (pandas)",
    "ray": "the Ray executor, `--executor ray` (ray)",
    "detector": "training and running the ultralytics layout detector (ultralytics, onnx)",
    "tesseract": "the Tesseract text-spotter backend (pytesseract; binary: Debian tesseract-ocr)",
    "paddleocr": "the PaddleOCR text-spotter backend (paddleocr, paddlepaddle)",
    "sam": "the Segment Anything shape-hunter backend (segment-anything)",
}


class MissingExtra(ImportError):
    """An optional package is not installed; the message names the extra that installs it."""

    def __init__(self, feature: str, extra: str):
        self.feature, self.extra = feature, extra
        super().__init__(f"{feature} needs the '{extra}' extra: {extra_hint(extra)}")


def extra_hint(extra: str) -> str:
    """The install command for ``extra``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` saying that ``feature`` needs ``extra``.

    >>> require("json", "pandas", "reading JSON").__name__
    'json'
    >>> require("no_such_module_xyz", "ray", "the ray executor")
    Traceback (most recent call last):
    ...
    sciflow.format.extras.MissingExtra: the ray executor needs the 'ray' extra: pip install 'sciflow-eval[ray]'
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(sorted(EXTRAS))}")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(feature, extra) from exc
