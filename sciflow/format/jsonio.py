"""Safe JSON reading: every JSON document sciflow reads from a user goes through :func:`load_json`
(a file) or :func:`parse_json` (text or bytes already in memory).

Both refuse, before any parsing, what would crash or stall the standard parser and the code
that walks the result (the schema validator, the metrics, ``json.dumps`` on save):

* nesting deeper than :data:`MAX_JSON_DEPTH` levels of arrays/objects (``[[[...]]]``). The
  depth is measured by a bracket scan that does not recurse (strings are skipped), so a
  document of 100,000 nested lists is refused in milliseconds instead of raising
  ``RecursionError``;
* documents larger than :data:`MAX_JSON_BYTES` (a file's size is checked before it is read);
* ``NaN``, ``Infinity`` and ``-Infinity``, which are not JSON (RFC 8259) although Python's
  ``json`` module accepts them;
* text that is not UTF-8. A leading UTF-8 byte-order mark is skipped, not an error;
* for files: anything but a regular file (a FIFO, a device), which could block or never end.

Every refusal is a :class:`JSONError`, a subclass of :class:`json.JSONDecodeError` (so every
``except json.JSONDecodeError`` / ``except ValueError`` already in place catches it).
``str(error)`` is the one-line reason (``nested deeper than 64 levels``, ``not valid JSON:
Expecting value at line 1 column 1``); ``error.source`` names the file or document, and
``error.msg`` is the reason without the ``not valid JSON:`` prefix.

>>> parse_json('{"a": [1, 2]}')
{'a': [1, 2]}
>>> parse_json("[" * 100_000 + "]" * 100_000, source="deep.json")
Traceback (most recent call last):
...
sciflow.format.jsonio.JSONError: nested deeper than 64 levels
>>> parse_json('{"x": NaN}')
Traceback (most recent call last):
...
sciflow.format.jsonio.JSONError: not valid JSON: NaN is not a JSON value (JSON has no NaN or Infinity)
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

#: Deepest nesting of arrays and objects accepted. sciflow's own documents nest at most ~8
#: levels (a verification log entry holding a graph); 64 leaves room for free-form ``meta``
#: and stays far below Python's recursion limit in every consumer (jsonschema uses a few frames
#: per level).
MAX_JSON_DEPTH = 64
#: Largest JSON document accepted (bytes). A 10,000-node graph is about 1 MB.
MAX_JSON_BYTES = 64 * 1024 * 1024

# Escapes first, then strings: both patterns match in linear time whatever the input (an
# unterminated string or a run of backslashes cannot make them backtrack).
_ESCAPE = re.compile(rb"\\.", re.S)
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_BOM = b"\xef\xbb\xbf"


class JSONError(json.JSONDecodeError):
    """A JSON document sciflow refuses. ``source`` names it; ``str()`` is the one-line reason;
    ``msg`` is the reason without the ``not valid JSON:`` prefix; ``lineno``/``colno`` are 0
    when the reason has no position (a depth or size limit)."""

    def __init__(self, source: str, msg: str, *, syntax: bool = True, doc: str = "", pos: int = 0,
                 lineno: int = 0, colno: int = 0):
        # json.JSONDecodeError's own __init__ formats "msg: line L column C (char P)"; the
        # attributes it sets are set here, with a message of our own.
        ValueError.__init__(self, msg)
        self.source = str(source)
        self.msg = msg
        self.syntax = syntax
        self.doc = doc
        self.pos = pos
        self.lineno = lineno
        self.colno = colno
        where = f" at line {lineno} column {colno}" if lineno else ""
        self.reason = f"not valid JSON: {msg}{where}" if syntax else msg
        self.args = (self.reason,)

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self) -> Any:  # picklable across process pools
        return (_rebuild, (self.source, self.msg, self.syntax, self.pos, self.lineno, self.colno))


def _rebuild(source: str, msg: str, syntax: bool, pos: int, lineno: int, colno: int) -> JSONError:
    return JSONError(source, msg, syntax=syntax, pos=pos, lineno=lineno, colno=colno)


def json_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays/objects in a JSON text, without parsing or recursing
    (brackets inside strings do not count; brackets need not balance).

    >>> json_depth(b'{"a": [[1], "]]]"], "b": {}}')
    3
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    brackets = _STRING.sub(b"", _ESCAPE.sub(b"", raw)).translate(None, _NOT_BRACKETS)
    opens = brackets.count(b"[") + brackets.count(b"{")
    if opens <= 1:
        return opens
    import numpy as np  # noqa: PLC0415 - only for documents with many brackets

    a = np.frombuffer(brackets, dtype=np.uint8)
    steps = ((a == 0x5B) | (a == 0x7B)).astype(np.int8) * 2 - 1
    return int(np.cumsum(steps, dtype=np.int64).max())


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


def parse_json(
    text: str | bytes | bytearray,
    *,
    source: str = "<json>",
    max_depth: int = MAX_JSON_DEPTH,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """Parse one JSON document held in memory, within the limits in the module docstring.

    ``source`` names the document in errors (a file name, ``<request body>``). Raises
    :class:`JSONError`."""
    if isinstance(text, (bytes, bytearray)):
        raw = bytes(text)
        if len(raw) > max_bytes:
            raise JSONError(source, f"document is {len(raw)} bytes, over the limit of {max_bytes}", syntax=False)
        if raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONError(source, f"not UTF-8 text: {exc.reason} at byte {exc.start}", syntax=False) from exc
    else:
        if text.startswith("\ufeff"):
            text = text[1:]
        raw = text.encode("utf-8", "surrogatepass")
        if len(raw) > max_bytes:
            raise JSONError(source, f"document is {len(raw)} bytes, over the limit of {max_bytes}", syntax=False)
    if not text.strip():
        raise JSONError(source, "empty document")
    if json_depth(raw) > max_depth:
        raise JSONError(source, f"nested deeper than {max_depth} levels", syntax=False)
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise JSONError(source, exc.msg, doc="", pos=exc.pos, lineno=exc.lineno, colno=exc.colno) from exc
    except ValueError as exc:  # _refuse_constant
        raise JSONError(source, str(exc)) from exc
    except RecursionError as exc:  # not reachable under the depth limit; never let it escape
        raise JSONError(source, f"nested deeper than {max_depth} levels", syntax=False) from exc


def load_json(
    path: str | Path,
    *,
    source: str | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    max_bytes: int = MAX_JSON_BYTES,
) -> Any:
    """Read and parse one JSON file, within the limits in the module docstring.

    ``source`` names the file in errors (default: ``str(path)``). Raises :class:`JSONError`
    for every problem, a file that cannot be read included (``cannot read file: ...``)."""
    path = Path(path)
    name = str(path) if source is None else source
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused just below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise JSONError(name, "not a regular file", syntax=False)
            if st.st_size > max_bytes:
                raise JSONError(name, f"file is {st.st_size} bytes, over the limit of {max_bytes}", syntax=False)
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise JSONError(name, f"cannot read file: {exc.strerror or exc}", syntax=False) from exc
    return parse_json(raw, source=name, max_depth=max_depth, max_bytes=max_bytes)
