"""Registries of agents and backends, keyed by name.

A backend is chosen by a config value (``[parser.<agent>] backend = "name"``); the only
dispatch on that value is :meth:`Registry.create`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """An unknown agent or backend name."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


class Registry:
    """Name -> class. ``create(name, params)`` instantiates ``cls(params)``."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, type] = {}

    def register(self, name: str) -> Callable[[type[T]], type[T]]:
        def deco(cls: type[T]) -> type[T]:
            self._items[name] = cls
            cls.registered_name = name  # type: ignore[attr-defined]
            return cls

        return deco

    def add(self, name: str, cls: type) -> None:
        """Register ``cls`` under ``name`` (replacing an earlier entry of that name)."""
        self._items[name] = cls
        cls.registered_name = name  # type: ignore[attr-defined]

    def remove(self, name: str) -> None:
        self._items.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._items)

    def get(self, name: str) -> type:
        try:
            return self._items[name]
        except KeyError:
            raise RegistryError(
                f"unknown {self.kind} {name!r}; registered: {', '.join(self.names()) or 'none'}"
            ) from None

    def create(self, name: str, params: Mapping[str, Any]) -> Any:
        return self.get(name)(params)


class BackendAgent:
    """An agent whose work is done by a backend chosen by name in its config table
    (``backend = "..."``, default :attr:`default_backend`). The backend is built from its own
    sub-table (``[parser.<agent>.<backend>]``); with :attr:`inherit_params` it also receives the
    agent's scalar keys, which the sub-table overrides."""

    backends: Registry
    default_backend: str = ""
    inherit_params: bool = True

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)
        self.backend_name = str(self.params.get("backend", self.default_backend))
        bp = {k: v for k, v in self.params.items() if not isinstance(v, Mapping)} if self.inherit_params else {}
        bp.update(dict(self.params.get(self.backend_name, {})))
        self.backend = self.backends.create(self.backend_name, bp)

    def fingerprint(self) -> dict[str, Any]:
        return self.backend.fingerprint()


#: Agents by name; each agent class takes its ``[parser.<name>]`` table.
AGENTS = Registry("parser agent")
