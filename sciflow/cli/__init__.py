"""The ``sciflow`` command line: argument parsing and presentation only (one module per command
group; :mod:`sciflow.cli.arguments` defines every command and option).

Errors end a command with one line on stderr and a non-zero exit code, never a traceback
(``sciflow -v ...`` adds it):

- an expected error, rc 2: ``error: <what went wrong>`` (``config error: ...`` for a config
  file). Expected are sciflow's own exception classes (each raised on purpose, with a message for
  the person running the command: an invalid graph file, a missing folder, a model that cannot be
  loaded ...) and ``OSError`` (a missing or unreadable file, a full disk);
- anything else, rc 1: ``error: unexpected <ExceptionType>: <message> (a bug: rerun with
  `sciflow -v ...` for the traceback)``;
- Ctrl+C, rc 130: ``interrupted``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Sequence

from rich.logging import RichHandler

from sciflow.cli.arguments import build_parser as _build_parser
from sciflow.cli.claims import add_claims_command
from sciflow.cli.common import console, err_console, error_text, leaderboard_table, print_error, qmsg
from sciflow.cli.grammar import check_out, finish_parser, quiet_libraries
from sciflow.config import ConfigError

__all__ = ["build_parser", "console", "err_console", "is_expected_error", "leaderboard_table", "main"]

#: words of an ImageModelUnavailable message about weights that are not on this machine
_MISSING_WEIGHTS = ("unavailable", "not cached", "cannot download", "offline mode is set")
_WEIGHTS_HINT = ("fetch them with `sciflow download-models` on a machine with internet, or let the config fall back "
                 "(image.semantic_backend / image.perceptual_backend = \"auto\")")


def is_expected_error(exc: BaseException) -> bool:
    """True for an error the person running the command can act on: an exception class of
    sciflow's own (every one is raised on purpose, with a message meant for the user) or an
    ``OSError`` (a missing or unreadable file, a full disk)."""
    if isinstance(exc, OSError):
        return True
    return any(cls.__module__.split(".")[0] == "sciflow" for cls in type(exc).__mro__)


def _hint(exc: BaseException, text: str) -> str:
    """``text``, with how to get the weights when ``exc`` says a model's weights are missing."""
    missing = any(cls.__name__ == "ImageModelUnavailable" for cls in type(exc).__mro__)
    if missing and "download-models" not in text and any(w in text for w in _MISSING_WEIGHTS):
        return f"{text} ({_WEIGHTS_HINT})"
    return text


def report_error(exc: BaseException, verbose: bool = False) -> int:
    """Print one line for ``exc`` (the traceback before it with ``verbose``); the exit code."""
    if verbose:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    if isinstance(exc, ConfigError):
        print_error(exc, "config error")
        return 2
    if is_expected_error(exc):
        print_error(_hint(exc, error_text(exc)))
        return 2
    err_console.print(f"[red]error:[/red] unexpected {type(exc).__name__}: {qmsg(error_text(exc))} "
                      "(a bug: rerun with `sciflow -v ...` for the traceback)")
    return 1


def build_parser() -> argparse.ArgumentParser:
    """Every command of :mod:`sciflow.cli.arguments`, and ``sciflow claims`` (:mod:`sciflow.cli.claims`)."""
    return finish_parser(add_claims_command(_build_parser()))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_libraries(args.verbose)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )
    problem = check_out(args)  # a file where a folder is wanted (or back): before any work
    if problem:
        print_error(problem)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    except BrokenPipeError:  # `sciflow ... | head`: the reader is gone, nothing to say
        return 1
    except Exception as exc:
        return report_error(exc, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
