"""The three metric levels (graph, text, image) and the node matcher they share.

``METRIC_VERSION`` names the definitions these modules implement. It is recorded in every
``manifest.json`` and every results row, and a row scored under another version is never
reused on resume. Bump it whenever a change can move a score.

History: 1 = the first release; 2 = skip arrows are excused instead of credited, structural
tie-breaking of repeated labels by the best edge agreement, edgeless references scored by the
node F1, text-level relation precision and duplication costs, free OCR text in faithfulness.
"""

METRIC_VERSION = 2
