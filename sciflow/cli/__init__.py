"""The ``sciflow`` command line: argument parsing and presentation only (one module per command
group; :mod:`sciflow.cli.arguments` defines every command and option)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from rich.logging import RichHandler

from sciflow.cli.arguments import build_parser
from sciflow.cli.common import console, err_console, leaderboard_table
from sciflow.config import ConfigError

__all__ = ["build_parser", "console", "err_console", "leaderboard_table", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )
    try:
        return args.func(args)
    except ConfigError as exc:
        err_console.print(f"[red]config error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
