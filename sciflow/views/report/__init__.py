"""Reports people read: one self-contained HTML file for one or more results folders.

>>> from sciflow.views.report import build_report  # build_report([Path("runs/a")], Path("report.html"))
"""

from sciflow.views.report.html import build_report

__all__ = ["build_report"]
