"""The three metric levels (graph, text, image) and the node matcher they share.

``METRIC_VERSION`` names the definitions these modules implement. It is recorded in every
``manifest.json`` and every results row, and a row scored under another version is never
reused on resume. Bump it whenever a change can move a score.

History: 1 = the first release; 2 = skip arrows are excused instead of credited, structural
tie-breaking of repeated labels by the best edge agreement, edgeless references scored by the
node F1, text-level relation precision and duplication costs, free OCR text in faithfulness;
3 = the image level sees the reference: visual flow's direction term reads the prompt's relations
as drawn, the ``ocr-text-embedding`` fallback adds relation agreement, the ``ssim`` fallback
averages over the ink (a blank, reversed or shuffled drawing now scores below the clean one);
4 = labels fold the symbols drawn with the same glyph as a letter or a hyphen
(:data:`sciflow.metrics.matching.CONFUSABLES`: ∑ and Σ, ∆ and Δ, − and -, × and x).
"""

METRIC_VERSION = 4
