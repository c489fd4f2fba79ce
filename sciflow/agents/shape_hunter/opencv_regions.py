"""Steps 4-5 of the ``opencv`` backend: same-colour fragments merged into one shape, patches of
paper dropped, the kind read from each group's contour."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import BBox, Shape, TextBox
from sciflow.agents.shape_hunter.boxes import _box_area
from sciflow.agents.shape_hunter.ink import _same_color, ink_mask
from sciflow.agents.shape_hunter.masks import _fill_holes, _grow_over_outline, surround_ink
from sciflow.agents.shape_hunter.shapes import _cap_above, _classify, _cylinder_sag, _diamond_tips


class RegionSteps:
    """Mixin of :class:`~sciflow.agents.shape_hunter.opencv.OpenCVShapes` (its parameters)."""

    color_tol: float
    merge_gap: int
    surround_frac: float
    min_solidity: float
    min_solidity_bg: float

    # -- fragments ---------------------------------------------------------------
    def _same_fill(self, a: dict[str, Any], b: dict[str, Any]) -> bool:
        """Two fragments have one fill when their median colours differ by at most their colour
        noise (``3 x`` the sum, at least 4, at most ``color_tol``): flat fills must match
        closely (a #f5f5f5 ellipse on white is its own shape), noisy ones (JPEG, gradients)
        get the full tolerance."""
        tol = min(self.color_tol, max(4.0, 3.0 * (a.get("noise", 0.0) + b.get("noise", 0.0))))
        return _same_color(a["color"], b["color"], tol)

    def _merge(self, cands: dict[int, dict[str, Any]], labels: np.ndarray, bg: np.ndarray) -> list[list[int]]:
        g = self.merge_gap
        h, w = labels.shape
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * g + 1, 2 * g + 1))
        adj: dict[int, dict[int, int]] = {}
        surrounded: set[int] = set()
        for i, c in cands.items():
            x0, y0, x1, y1 = c["box"]
            X0, Y0, X1, Y1 = max(0, x0 - g), max(0, y0 - g), min(w, x1 + g), min(h, y1 + g)
            m = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
            m[y0 - Y0 : y1 - Y0, x0 - X0 : x1 - X0] = _fill_holes(c["mask"])
            ring = cv2.dilate(m, kernel) & ~cv2.dilate(m, np.ones((3, 3), np.uint8))
            lab = labels[Y0:Y1, X0:X1][ring > 0]
            lab = lab[lab > 0]
            if lab.size == 0:
                continue
            ids, counts = np.unique(lab, return_counts=True)
            same = {}
            for j, k in zip(ids.tolist(), counts.tolist(), strict=True):
                if j != i and j in cands and self._same_fill(cands[j], c):
                    same[j] = k
            total = int(lab.size)
            if sum(same.values()) >= self.surround_frac * total:
                surrounded.add(i)
            adj[i] = {j: k / total for j, k in same.items()}
        parent = {i: i for i in cands}

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        gbox = {i: c["box"] for i, c in cands.items()}
        garea = {i: c["area"] for i, c in cands.items()}
        pairs = sorted(
            ((-frac, i, j) for i in adj for j, frac in adj[i].items() if i < j or i not in adj.get(j, {})),
        )
        for _, i, j in pairs:
            if i in surrounded or j in surrounded or -_ < 0.02:
                continue
            if adj.get(j, {}).get(i, 0.0) >= 0.6 or -_ >= 0.6:
                continue
            a, b = find(i), find(j)
            if a == b:
                continue
            # merge only when the union is a cleaner shape than its parts (fill of its bbox)
            ba, bb = gbox[a], gbox[b]
            bu = (min(ba[0], bb[0]), min(ba[1], bb[1]), max(ba[2], bb[2]), max(ba[3], bb[3]))
            fa = garea[a] / max(_box_area(ba), 1.0)
            fb = garea[b] / max(_box_area(bb), 1.0)
            fu = (garea[a] + garea[b]) / max(_box_area(bu), 1.0)
            if fu < 0.7 or fu < max(fa, fb) - 0.06:
                continue
            parent[a] = b
            gbox[b] = bu
            garea[b] = garea[a] + garea[b]
        groups: dict[int, list[int]] = {}
        for i in sorted(cands):
            groups.setdefault(find(i), []).append(i)
        return list(groups.values())

    def _enclosed_gap(
        self,
        m: np.ndarray,
        X0: int,
        Y0: int,
        image: np.ndarray,
        ink: np.ndarray,
        color: np.ndarray,
        members: list[int],
        cands: dict[int, dict[str, Any]],
        centres: list[tuple[float, float]],
    ) -> bool:
        """True for a patch of the surrounding paper closed in by connectors, container
        borders and other shapes (not a shape): it holds no text line's centre and its fill
        is the colour of at least 30 % of the non-ink pixels 3-7 px outside its outline,
        within the fragments' colour noise (:meth:`_same_fill`). A drawn shape either differs from its
        surroundings or, on diagrams with text, holds a label; an empty box of the paper's
        colour is lost, which is rarer than the spurious regions such patches make."""
        mh, mw = m.shape
        for cx, cy in centres:
            xi, yi = int(cx) - X0, int(cy) - Y0
            if 0 <= xi < mw and 0 <= yi < mh and m[yi, xi]:
                return False
        return self._fill_around(m, X0, Y0, image, ink, color, members, cands)

    def _fill_around(
        self,
        m: np.ndarray,
        X0: int,
        Y0: int,
        image: np.ndarray,
        ink: np.ndarray,
        color: np.ndarray,
        members: list[int],
        cands: dict[int, dict[str, Any]],
    ) -> bool:
        """Whether the region ``m``'s fill is the colour of at least 30 % of the non-ink pixels
        3-7 px outside its outline (within the fragments' colour noise): the paper it lies
        on, the page's or a panel's."""
        mh, mw = m.shape
        outer = cv2.dilate(m, np.ones((15, 15), np.uint8))
        ring = (outer > 0) & (cv2.dilate(m, np.ones((7, 7), np.uint8)) == 0)
        sub_ink = ink[Y0 : Y0 + mh, X0 : X0 + mw]
        pix = image[Y0 : Y0 + mh, X0 : X0 + mw][ring & ~sub_ink]
        if pix.shape[0] < 20:
            return False
        noise = max(cands[i].get("noise", 0.0) for i in members)
        tol = min(self.color_tol, max(4.0, 3.0 * noise))
        dev = np.abs(pix.astype(np.int16) - np.asarray(color, np.int16).reshape(1, 3)).max(axis=1)
        # a patch cut from a container by its border has the container's fill on part of its ring only
        return float((dev <= tol).mean()) >= 0.3

    @staticmethod
    def _labels_at_rim(m: np.ndarray, X0: int, Y0: int, text_lines: list[TextBox]) -> bool:
        """Whether every text line inside the region's fragments ``m`` (at ``X0, Y0``;
        each fragment is bounded by ink: a connector crossing the region splits it) comes
        within 0.8 of its own heights of a fragment's rim (true when none is inside): an edge
        label set beside the connector that bounds a patch of paper, not a shape's label,
        which has the shape's padding around it."""
        dist = cv2.distanceTransform((m > 0).astype(np.uint8), cv2.DIST_L2, 3)
        mh, mw = m.shape
        for t in text_lines:
            x0, y0 = max(0, int(t.bbox[0]) - X0), max(0, int(t.bbox[1]) - Y0)
            x1, y1 = min(mw, int(math.ceil(t.bbox[2])) - X0), min(mh, int(math.ceil(t.bbox[3])) - Y0)
            area = max(1.0, (t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]))
            if x1 <= x0 or y1 <= y0 or (m[y0:y1, x0:x1] > 0).sum() < 0.3 * area:
                continue  # not inside (its glyphs may cut its centre out of the region)
            d = dist[y0:y1, x0:x1][m[y0:y1, x0:x1] > 0]
            # the nearest approach of the text's box to the rim (the box may reach past it)
            if float(d.min()) > 0.8 * t.height:
                return False
        return True

    def _finish(
        self,
        groups: list[list[int]],
        cands: dict[int, dict[str, Any]],
        image: np.ndarray,
        bg: np.ndarray,
        barrier: np.ndarray,
        text_lines: list[TextBox] | None = None,
    ) -> list[Shape]:
        h, w = image.shape[:2]
        centres = [((t.bbox[0] + t.bbox[2]) / 2, (t.bbox[1] + t.bbox[3]) / 2) for t in text_lines or ()]
        ink = ink_mask(image, bg, 40) > 0
        found: list[tuple[BBox, np.ndarray, str, float, tuple[int, int, int], float]] = []
        for members in groups:
            if len(members) == 1 and cands[members[0]].get("fragment"):
                continue  # a hollow region that merged with nothing
            boxes = [cands[i]["box"] for i in members]
            x0 = min(b[0] for b in boxes)
            y0 = min(b[1] for b in boxes)
            x1 = max(b[2] for b in boxes)
            y1 = max(b[3] for b in boxes)
            pad = self.merge_gap + 12
            X0, Y0, X1, Y1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), min(h, y1 + pad)
            m = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
            for i in members:
                bx0, by0, bx1, by1 = cands[i]["box"]
                m[by0 - Y0 : by1 - Y0, bx0 - X0 : bx1 - X0] |= cands[i]["mask"]
            pieces = m.copy()  # the fragments as found, before they are closed into one
            colors = [cands[i]["color"] for i in members]
            areas = [cands[i]["mask"].sum() for i in members]
            color = colors[int(np.argmax(areas))]
            is_bg = _same_color(color, bg, self.color_tol)
            if len(members) > 1 or not is_bg:
                # A filled panel is one region even where a connector runs from a shape inside
                # it out across its border: the stroke cuts a channel (a few px) from the
                # border to that shape, which would leave the shape a bay of the panel, not a
                # hole, and the panel's outline running along the connector. Closing seals
                # every channel narrower than ``merge_gap``.
                k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (self.merge_gap, self.merge_gap))
                m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, k)
            m = _fill_holes(m)
            # The region is the interior: grow it over the outline (as thick as it is).
            m = _grow_over_outline(m, surround_ink(m, image[Y0:Y1, X0:X1], ink[Y0:Y1, X0:X1]))
            cnts, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            area = float(cv2.contourArea(cnt))
            hull_area = float(cv2.contourArea(cv2.convexHull(cnt)))
            solidity = area / max(hull_area, 1.0)
            if solidity < (self.min_solidity_bg if is_bg else self.min_solidity):
                continue
            if centres and self._enclosed_gap(m, X0, Y0, image, ink, color, members, cands, centres):
                continue
            cap = False
            if len(members) == 2:
                (a, b) = sorted(members, key=lambda i: cands[i]["box"][1])
                ba, bb = cands[a]["box"], cands[b]["box"]
                wa, ha = ba[2] - ba[0], ba[3] - ba[1]
                cap = wa >= 0.8 * (x1 - x0) and ha < 0.4 * (y1 - y0) and bb[1] >= ba[1] + 0.5 * ha
            cap_found = cap  # a cap region of its own, merged with the body
            arc = _cap_above(m, X0, Y0, image, color, [t.bbox for t in text_lines or ()])
            sag = 0.0 if arc is not None else _cylinder_sag(m)
            if arc is not None:  # a cylinder body: cover the cap's upper arc
                cap = True
                pts = np.array([[[x - X0, y - Y0]] for x, y in arc], np.int32)
                cnt = cv2.convexHull(np.concatenate([cnt.astype(np.int32), pts]))
            elif sag > 0:  # a concave-topped body whose cap region was not found
                cap = True
                up = cnt.copy()
                up[:, 0, 1] -= int(round(sag)) + 2
                cnt = cv2.convexHull(np.concatenate([cnt, up]))
            cnt = cnt + np.array([[[X0, Y0]]])
            kind, conf = _classify(cnt, area, cap)
            # a cylinder read only from a sagging top (no cap of its own above it) may be paper
            # between two arrows leaving one box, closed below by the box they meet
            loose = kind in ("polygon", "region") or (kind == "cylinder" and arc is None and not cap_found)
            if (
                loose
                and (is_bg or self._fill_around(m, X0, Y0, image, ink, color, members, cands))
                and self._labels_at_rim(pieces, X0, Y0, text_lines or [])
            ):
                # paper-coloured (the page's, or the panel's it lies on), no shape's outline,
                # and no text or only text hugging its rim: paper closed in by connectors and
                # the boxes they join, holding at most the label of one of those connectors
                # (a speech bubble's text sits well inside it)
                continue
            poly = cv2.approxPolyDP(cnt, 1.0, True).reshape(-1, 2)
            if kind == "diamond":
                tips = _diamond_tips(cnt, ink)
                if tips is not None:
                    poly = tips
                    cnt = tips.reshape(-1, 1, 2)
            bx, by, bw2, bh2 = cv2.boundingRect(cnt)
            stroke = 1.0
            found.append(
                (
                    (float(bx), float(by), float(bx + bw2), float(by + bh2)),
                    poly,
                    kind,
                    conf * float(min(1.0, solidity + 0.05)),
                    tuple(int(v) for v in color),  # type: ignore[misc]
                    stroke,
                )
            )
        found.sort(key=lambda f: (f[0][1], f[0][0], f[0][3], f[0][2]))
        shapes = [
            Shape(i, kind, box, tuple((float(x), float(y)) for x, y in poly), color, conf, _box_area(box), None, stroke)
            for i, (box, poly, kind, conf, color, stroke) in enumerate(found)
        ]
        return shapes
