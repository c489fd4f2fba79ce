"""Human verification of parsed graphs (SciFlow-Bench, Appendix B): a local page that shows a
figure beside its parsed graph and records identity-consistent edits, and the agreement of the
automatic parse with the verified graphs.

- :func:`sciflow.verify.server.serve` / :func:`~sciflow.verify.server.create_app`: the page
  (``sciflow verify FIGURES_DIR --out VERIFIED_DIR``),
- :mod:`sciflow.verify.store`: items, edits, audit log, atomic saving,
- :func:`sciflow.verify.agreement.agreement`: node/edge precision, recall, F1 from the edit logs
  (``sciflow agreement VERIFIED_DIR``).

The web stack (starlette, uvicorn) is imported only by ``server``.
"""

from sciflow.verify.agreement import AgreementReport, Counts, agreement
from sciflow.verify.store import EditError, ItemError, VerifyStore, atomic_write_text

__all__ = ["AgreementReport", "Counts", "EditError", "ItemError", "VerifyStore", "agreement", "atomic_write_text"]
