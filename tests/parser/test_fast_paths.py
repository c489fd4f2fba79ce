"""The shape hunter's fast image helpers equal their plain numpy definitions exactly
(they replaced those definitions for speed; parse outputs must not move)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sciflow.agents.shape_hunter import _running_median5, channel_difference, ink_mask

images = arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9), st.just(3)))


@settings(max_examples=200, deadline=None)
@given(images, st.data())
def test_channel_difference_is_max_abs_channel_difference(a: np.ndarray, data: st.DataObject) -> None:
    b = data.draw(arrays(np.uint8, a.shape))
    expected = np.abs(a.astype(np.int16) - b.astype(np.int16)).max(axis=2)
    got = channel_difference(a, b)
    assert got.dtype == np.uint8 and got.shape == a.shape[:2]
    assert np.array_equal(got, expected)


@settings(max_examples=200, deadline=None)
@given(images, st.lists(st.floats(0, 255), min_size=3, max_size=3), st.integers(0, 255))
def test_ink_mask_thresholds_the_difference_from_the_truncated_background(
    a: np.ndarray, bg: list[float], thr: int
) -> None:
    bg_a = np.array(bg)
    diff = np.abs(a.astype(np.int16) - bg_a.astype(np.int16).reshape(1, 1, 3)).max(axis=2)
    assert np.array_equal(ink_mask(a, bg_a, thr), ((diff > thr) * 255).astype(np.uint8))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=40))
def test_running_median5_is_the_shrinking_window_median(values: list[int]) -> None:
    a = np.array(values, float)
    expected = [np.median(a[max(0, i - 2) : i + 3]) for i in range(len(a))]
    assert _running_median5(a).tolist() == expected


def test_running_median5_removes_a_single_spike() -> None:
    assert _running_median5(np.array([0.0, 0, 9, 0, 0, 0])).tolist() == [0.0] * 6
