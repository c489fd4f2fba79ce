"""Benchmark content: renderers (``synth``), the detector's data and training, generators,
perturbations, adversaries, prompts, difficulty tiers and statistics of the references."""
