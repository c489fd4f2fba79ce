"""The fixed words of the structured prompt template (:mod:`sciflow.bench.prompts` builds the
prompts; the text level strips these words before it looks for mentions).

Bump ``PROMPT_VERSION`` whenever the template text changes.
"""

PROMPT_VERSION = "1"
DEFAULT_LAYOUT = "left-to-right"
INSTRUCTION = (
    "Draw a scientific framework diagram with exactly the components and directed arrows "
    "listed below."
)
