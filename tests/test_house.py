"""The house keeps its shape: small modules (the import contracts run in `make test`)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sciflow"
MAX_LINES = 600
MAX_PARSER_LINES = 500  # the parser's agents are split into small steps
VENDORED = ("verify/static/vendor",)


def sizes() -> dict[str, int]:
    return {
        str(p.relative_to(PACKAGE)): len(p.read_text("utf-8").splitlines())
        for p in sorted(PACKAGE.rglob("*.py"))
        if not any(str(p.relative_to(PACKAGE)).startswith(v) for v in VENDORED)
    }


def test_no_module_is_too_long():
    limit = {name: (MAX_PARSER_LINES if name.startswith("agents/") else MAX_LINES) for name in sizes()}
    too_long = {name: n for name, n in sizes().items() if n > limit[name]}
    assert too_long == {}, "split these modules: " + ", ".join(f"{k} ({v} lines)" for k, v in too_long.items())


def test_the_layers_are_folders():
    for layer in ("format", "models", "agents", "metrics", "bench", "critic", "runs", "views", "cli", "verify"):
        assert (PACKAGE / layer / "__init__.py").is_file(), layer
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "api.py", "config.py", "pipeline.py"]  # api.py: the Python face
