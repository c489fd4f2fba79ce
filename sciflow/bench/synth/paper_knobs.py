"""The knobs of the ``paper`` style: their values, per-item sampling and forcing.

Every knob is sampled from the item's ``random.Random(seed)`` (all knobs are always drawn, in
a fixed order, so forcing one knob leaves the others as the unforced item had them); an
explicit value overrides the sampled one. CLI strings (``"true"``, ``"dark"``, ``"1.5"``) are
converted by the type of the knob's values. A few knobs need another one to have any effect
(``panel_arrow`` needs panels or containers, ``headless`` needs operators): a sampled knob
that cannot act is switched off, a forced one switches on what it needs unless that was forced
off too (then :class:`ValueError`). ``SynthDiagram.knobs`` records the values in effect.
"""

from __future__ import annotations

import random
from typing import Any

#: knob -> the values it can take (booleans as [False, True]); ranges cover what real
#: framework figures show, not fitted to any figure set.
KNOBS: dict[str, list[Any]] = {
    "theme": ["light", "dark"],
    "transparent": [False, True],  # drawn without a page background, then composited
    "composite": ["white", "theme"],  # what a transparent figure is composited on
    "direction": ["LR", "TB"],
    "size": ["small", "medium", "large"],
    "scale": [1.0, 1.5, 2.0],
    "font": ["DejaVu Sans", "Liberation Sans", "Liberation Sans Narrow", "DejaVu Serif", "Liberation Serif"],
    "labels": ["words", "math", "short", "mixed"],
    "multiline": [False, True],
    "rotated_text": [False, True],
    "shape": ["rect", "rounded", "pill", "mixed"],
    "outline": ["solid", "none", "dashed", "dashdot", "mixed"],
    "fill": ["flat", "gradient", "white"],
    "shadow": [False, True],
    "panels": [False, True],
    "containers": [False, True],
    "panel_arrow": [False, True],
    "cards": [False, True],
    "icons": [False, True],
    "pictures": ["none", "unlabelled", "captioned", "both"],
    "free_text": [False, True],
    "operators": [False, True],
    "headless": [False, True],
    "route": ["straight", "elbow", "curved", "mixed"],
    "line_width": [1.0, 1.5, 2.0, 3.0],
    "dashed_arrows": [False, True],
    "arrow_color": ["mono", "colored"],
    "head": ["filled", "open", "chevron", "barbed", "block", "mixed"],
    "double": [False, True],
    "fan": ["none", "bus", "brace"],
    "crossing": [False, True],
    "edge_labels": ["none", "beside", "boxed", "halo", "mixed"],
    "title": [False, True],
    "caption": [False, True],
    "legend": [False, True],
    "footnote": [False, True],
    "notes": [False, True],
}

#: probability of True for the boolean knobs (the others are uniform over their values)
P_TRUE: dict[str, float] = {
    "transparent": 0.3,
    "multiline": 0.5,
    "rotated_text": 0.3,
    "shadow": 0.3,
    "panels": 0.5,
    "containers": 0.4,
    "panel_arrow": 0.35,
    "cards": 0.3,
    "icons": 0.4,
    "free_text": 0.5,
    "operators": 0.45,
    "headless": 0.5,
    "dashed_arrows": 0.35,
    "double": 0.3,
    "crossing": 0.35,
    "title": 0.4,
    "caption": 0.4,
    "legend": 0.35,
    "footnote": 0.3,
    "notes": 0.35,
}
#: non-uniform weights of some categorical knobs (same order as KNOBS values)
WEIGHTS: dict[str, list[float]] = {
    "theme": [0.8, 0.2],
    "size": [0.35, 0.4, 0.25],
    "scale": [0.5, 0.3, 0.2],
    "pictures": [0.4, 0.2, 0.2, 0.2],
    "fill": [0.5, 0.25, 0.25],
}

_TRUE = {"true", "1", "yes", "on", "y", "t"}
_FALSE = {"false", "0", "no", "off", "n", "f"}


def coerce(name: str, value: Any) -> Any:
    """``value`` (maybe a CLI string) converted to the type of knob ``name``'s values and
    checked against them; ``StyleError`` (a :class:`ValueError`) names the knob and its values."""
    from sciflow.bench.synth.styles import StyleError  # styles imports this module lazily: no cycle

    if name not in KNOBS:
        raise StyleError(f"paper style has no knob {name!r}; knobs: {', '.join(sorted(KNOBS))}")
    allowed = KNOBS[name]
    kind = type(allowed[0])
    v: Any = value
    try:
        if kind is bool:
            if isinstance(value, str):
                s = value.strip().lower()
                if s not in _TRUE | _FALSE:
                    raise ValueError
                v = s in _TRUE
            else:
                v = bool(value)
        elif kind is float:
            v = float(value)
        elif isinstance(value, str):
            by_lower = {str(a).lower(): a for a in allowed}
            v = by_lower.get(value.strip().lower(), value)
    except (TypeError, ValueError):
        raise StyleError(f"paper knob {name}={value!r}: expected one of {allowed}") from None
    if v not in allowed:
        raise StyleError(f"paper knob {name}={value!r}: expected one of {allowed}")
    return v


def sample(rng: random.Random, forced: dict[str, Any] | None = None) -> tuple[dict[str, Any], set[str]]:
    """All knobs for one item: sampled from ``rng``, ``forced`` ones overriding; returns the
    knob values in effect and the names that were forced."""
    forced = {k: coerce(k, v) for k, v in (forced or {}).items()}
    out: dict[str, Any] = {}
    for name, values in KNOBS.items():
        if name in P_TRUE:
            out[name] = rng.random() < P_TRUE[name]
        else:
            out[name] = rng.choices(values, weights=WEIGHTS.get(name))[0]
    out.update(forced)
    _needs(out, forced, "panel_arrow", ("panels", "containers"))
    _needs(out, forced, "headless", ("operators",))
    return out, set(forced)


def _needs(k: dict[str, Any], forced: dict[str, Any], knob: str, any_of: tuple[str, ...]) -> None:
    """``knob`` only acts when one of ``any_of`` is on."""
    if not k[knob] or any(k[o] for o in any_of):
        return
    if knob not in forced:
        k[knob] = False
        return
    for o in any_of:
        if o not in forced:
            k[o] = True
            return
    from sciflow.bench.synth.styles import StyleError

    raise StyleError(f"paper knob {knob}=True needs one of {', '.join(any_of)} on, but they were forced off")
