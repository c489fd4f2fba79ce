"""Named, versioned benchmarks shipped inside the package, and the one resolver every command
and the Python API use for ``--refs``.

A benchmark is a frozen set of reference graphs: ``sciflow-bench-60@1`` is the 60 reference
graphs of ``sciflow/data/sciflow-bench-60/`` as of version 1. Its content is pinned by the
SHA-256 that :func:`references_sha256` computes (the same fingerprint a run's manifest records
under ``references.sha256``); a change to any reference needs a new version, so two runs that
name the same version scored against the same bytes.

``--refs`` takes a folder or a benchmark name (``NAME@VERSION``, or ``NAME`` for its latest
version); ``NAME@VERSION/SUBPATH`` names a path inside the benchmark, such as its bundled
example predictions (``sciflow-bench-60@1/examples/perturbed-k2``).

>>> resolve_refs("sciflow-bench-60@1").name
'sciflow-bench-60'
>>> len(list(resolve_refs("sciflow-bench-60").glob("*.json")))
60
>>> resolve_refs("sciflow-bench-60@1/examples/perturbed-k2").name
'perturbed-k2'
>>> resolve_refs("sciflow-bench-60@7")
Traceback (most recent call last):
...
sciflow.format.benchmarks.BenchmarkError: benchmark sciflow-bench-60 has no version 7 (versions: 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sciflow.format.hashing import file_sha256, json_sha256

__all__ = ["BENCHMARKS", "DEFAULT_BENCHMARK", "Benchmark", "BenchmarkError", "benchmark_name", "references_sha256",
           "resolve_refs"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


class BenchmarkError(ValueError):
    """A benchmark name that names no bundled benchmark, or a refs argument that is neither."""


@dataclass(frozen=True)
class Benchmark:
    """One version of a bundled benchmark."""

    name: str
    version: int
    folder: str  # under sciflow/data/
    n_items: int
    sha256: str  # :func:`references_sha256` of its reference files
    description: str

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def path(self) -> Path:
        return DATA_DIR / self.folder

    def examples(self) -> list[Path]:
        """The bundled example prediction folders (``examples/<run>/``)."""
        root = self.path / "examples"
        return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


BENCHMARKS: dict[str, dict[int, Benchmark]] = {
    "sciflow-bench-60": {
        1: Benchmark(
            "sciflow-bench-60", 1, "sciflow-bench-60", 60,
            "438dc52dee325b8aedb1822c63681ce8430f1243ac5be6c09c3b5d05d230315b",
            "60 framework diagrams from published papers, 12 per research area (computer vision, NLP, "
            "machine learning, robotics, integrated circuits), with structured prompts and difficulty tiers",
        ),
    },
}

#: what ``refs`` means when it is not given
DEFAULT_BENCHMARK = "sciflow-bench-60@1"


def references_sha256(folder: Path) -> str:
    """SHA-256 over ``[stem, SHA-256 of the file]`` of every ``*.json`` in ``folder``, sorted by
    stem: the fingerprint :func:`sciflow.runs.scoring.reference_fingerprint` records."""
    pairs = sorted([p.stem, file_sha256(p)] for p in folder.glob("*.json") if p.is_file())
    return json_sha256(pairs)


def _lookup(name: str, version: str | None) -> Benchmark:
    versions = BENCHMARKS.get(name)
    if versions is None:
        raise BenchmarkError(f"unknown benchmark {name!r} (bundled: {', '.join(sorted(BENCHMARKS))})")
    if version is None:
        return versions[max(versions)]
    try:
        return versions[int(version)]
    except (ValueError, KeyError):
        known = ", ".join(str(v) for v in sorted(versions))
        raise BenchmarkError(f"benchmark {name} has no version {version} (versions: {known})") from None


def benchmark_name(refs: str | Path) -> str | None:
    """``NAME@VERSION`` when ``refs`` names a bundled benchmark (or its folder), else None."""
    if isinstance(refs, str) and not Path(refs).exists():
        head = refs.split("/", 1)[0]
        name, _, version = head.partition("@")
        if name in BENCHMARKS and "/" not in refs:
            return _lookup(name, version or None).spec
        return None
    try:
        resolved = Path(refs).resolve()
    except OSError:
        return None
    for versions in BENCHMARKS.values():
        for b in versions.values():
            if resolved == b.path.resolve():
                return b.spec
    return None


def resolve_refs(refs: str | Path) -> Path:
    """The folder ``refs`` names: an existing path as it is; ``NAME``, ``NAME@VERSION`` or
    ``NAME@VERSION/SUBPATH`` of a bundled benchmark (:data:`BENCHMARKS`) as its folder in the
    package. Anything else is returned as a path too (the caller reports a missing folder),
    except a string that looks like a benchmark name (it has an ``@``, or it is a bundled name
    with a subpath): :class:`BenchmarkError`."""
    if isinstance(refs, Path) or Path(refs).exists():
        return Path(refs)
    head, _, sub = refs.partition("/")
    name, at, version = head.partition("@")
    if name not in BENCHMARKS and not at:
        return Path(refs)
    bench = _lookup(name, version or None)
    path = bench.path / sub if sub else bench.path
    if not path.exists():
        raise BenchmarkError(f"{refs}: no {sub!r} in benchmark {bench.spec}")
    return path
