"""Reports people read: one self-contained HTML file for one or more results folders.

>>> from sciflow.report import build_report   # build_report([Path("runs/a"), Path("runs/b")], Path("report.html"))
"""

from sciflow.report.html import build_report

__all__ = ["build_report"]
