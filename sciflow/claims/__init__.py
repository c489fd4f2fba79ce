"""Structural claims: check what a figure asserts, by reasoning type, with evidence.

- the claim format (``model.py``; schema ``sciflow/format/schema/claim.schema.json``): direct,
  parallel, sequential and analytical claims as JSON lines;
- grounding names on the diagram with the metrics' one-to-one matcher (``grounding.py``);
- the checks, one per kind (``rules.py``, on ``structure.py``), and the verdicts (``check.py``);
- pixel evidence of a parse (``evidence.py``), text and JSON reports (``report.py``);
- claims from sentences: the grammar (``grammar.py``), the optional judge (``judge.py``);
- the claim benchmark's generator and gold labels (``generate.py``);
- :func:`check_claims` (``inputs.py``): all of it for one image or graph.
"""

from sciflow.claims.check import NEI, REFUTED, SUPPORTED, VERDICTS, ClaimReport, ClaimResult, check_claim, check_graph
from sciflow.claims.grammar import GrammarError, claims_from_text
from sciflow.claims.grounding import Grounding, ground_group, ground_names
from sciflow.claims.inputs import ClaimsInputError, check_claims
from sciflow.claims.model import Claim, ClaimFormatError, dump_claims, load_claims, parse_claims
from sciflow.claims.report import format_report

__all__ = [
    "NEI", "REFUTED", "SUPPORTED", "VERDICTS", "Claim", "ClaimFormatError", "ClaimReport", "ClaimResult",
    "ClaimsInputError", "GrammarError", "Grounding", "check_claim", "check_claims", "check_graph", "claims_from_text",
    "dump_claims", "format_report", "ground_group", "ground_names", "load_claims", "parse_claims",
]
