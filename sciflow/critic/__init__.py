"""The critic: SciGen-Verifier's judgement + explanation + edit instructions, from sciflow's graph comparison.

- :func:`critique` / :func:`critique_from_result` (``critique.py``): a :class:`Critique` of a
  predicted graph against its reference, under a :class:`CritiqueRule`;
- :func:`critique_input`: the same for a file (an image is parsed first, a ``.json`` is a graph);
- :func:`format_critique`, :func:`parse_tagged` (``formats.py``): JSON, text, tagged form;
- :func:`apply_instructions` (``instructions.py``): the deterministic graph editor;
- :func:`rectify`, :func:`rectify_folder` (``rectify.py``): the critic as an online critic in a
  generate -> critique -> edit/regenerate loop.
"""

from sciflow.critic.critique import KINDS, SEVERITY, Critique, CritiqueRule, Finding, critique, critique_from_result
from sciflow.critic.formats import FORMATS, format_critique, parse_tagged, to_tagged, to_text
from sciflow.critic.instructions import OPS, Instruction, InstructionError, apply_instructions, parse_instruction
from sciflow.critic.rectify import (
    Candidate,
    GraphEditor,
    StepRecord,
    Trajectory,
    critique_input,
    graph_aware_generator,
    is_local,
    rectify,
    rectify_folder,
)

__all__ = [
    "FORMATS", "KINDS", "OPS", "SEVERITY", "Candidate", "Critique", "CritiqueRule", "Finding", "GraphEditor",
    "Instruction", "InstructionError", "StepRecord", "Trajectory", "apply_instructions", "critique",
    "critique_from_result", "critique_input", "format_critique", "graph_aware_generator", "is_local",
    "parse_instruction", "parse_tagged", "rectify", "rectify_folder", "to_tagged", "to_text",
]
