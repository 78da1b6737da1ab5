"""Image sampling ops: GridSample, AffineGrid, RoiAlign and NonMaxSuppression.

GridSample opsets 16 (4-D; bilinear / nearest / bicubic), 20 and 22 (N-D; linear / nearest / cubic), padding modes
zeros / border / reflection, align_corners. AffineGrid opset 20 (2-D and 3-D). RoiAlign opsets 10 (no pixel shift)
and 16 (coordinate_transformation_mode), avg and max. NonMaxSuppression opsets 10 and 11 (its output size depends
on the data, so it is ``dynamic_shape``).
"""

from __future__ import annotations

import itertools

import numpy as np

from . import register


# -- GridSample -----------------------------------------------------------------------------------------------------
def _reflect(x, lo, hi):
    """Reflects coordinates into [lo, hi] by the nearest border, repeatedly (as torch's grid_sample does)."""
    rng = hi - lo
    if rng <= 0:
        return np.full_like(x, lo)
    below, above = x < lo, x > hi
    dx = np.where(below, lo - x, np.where(above, x - hi, 0.0))
    n = np.floor(dx / rng)
    r = dx - n * rng
    even = n % 2 == 0
    from_lo = np.where(even, lo + r, hi - r)
    from_hi = np.where(even, hi - r, lo + r)
    return np.where(below, from_lo, np.where(above, from_hi, x))


def _cubic_weights(t, a=-0.75):
    """Keys cubic weights of the 4 taps floor(x)-1 .. floor(x)+2 for the fraction t (shape (..., 4))."""
    d = np.stack([t + 1, t, 1 - t, 2 - t], axis=-1)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far)


def _grid_sample(x, grid, mode, padding_mode, align_corners):
    if mode not in ("linear", "nearest", "cubic"):
        raise ValueError(f"unknown mode {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"unknown padding_mode {padding_mode!r}")
    n, c, *dims = x.shape
    r = len(dims)
    out_sp = grid.shape[1:-1]
    if grid.shape[-1] != r:
        raise ValueError(f"grid's last dimension is {grid.shape[-1]}, expected {r}")
    if x.size == 0 or grid.size == 0:
        return np.zeros((n, c, *out_sp), x.dtype)
    g = grid.reshape(n, -1, r).astype(np.float64)[..., ::-1]  # (N, P, r), in the order of x's spatial dims
    size = np.array(dims, dtype=np.float64)
    if align_corners:
        pos, lo, hi = (g + 1) / 2 * (size - 1), np.zeros(r), size - 1
    else:
        pos, lo, hi = ((g + 1) * size - 1) / 2, np.full(r, -0.5), size - 0.5
    pos = pos.astype(np.float32).astype(np.float64)
    if mode == "nearest":
        pos = np.rint(pos)
    if padding_mode == "border":
        pos = np.where((pos < lo) | (pos > hi), np.clip(pos, 0, size - 1), pos)
    elif padding_mode == "reflection":
        pos = np.stack([_reflect(pos[..., i], lo[i], hi[i]) for i in range(r)], axis=-1)
    # per spatial dim: tap indices (N, P, k) and weights (N, P, k)
    taps = []
    for i in range(r):
        p = pos[..., i]
        if mode == "nearest":
            idx, w = np.trunc(p)[..., None], np.ones(p.shape + (1,))
        else:
            base = np.floor(p)
            t = p - base
            if mode == "linear":
                idx, w = base[..., None] + np.array([0.0, 1.0]), np.stack([1 - t, t], axis=-1)
            else:
                idx, w = base[..., None] + np.array([-1.0, 0.0, 1.0, 2.0]), _cubic_weights(t)
        d = dims[i]
        if padding_mode == "zeros":
            w = np.where((idx >= 0) & (idx < d), w, 0.0)
            idx = np.clip(idx, 0, d - 1)
        elif padding_mode == "border":
            idx = np.clip(idx, 0, d - 1)
        else:
            idx = np.clip(np.trunc(_reflect(idx, lo[i], hi[i])), 0, d - 1)
        taps.append((idx.astype(np.int64), w))
    work = np.float64 if x.dtype == np.float64 else np.float32
    flat = x.reshape(n, c, -1).astype(work, copy=False)
    strides = np.cumprod([1] + dims[::-1])[:-1][::-1]
    out = np.zeros((n, c, g.shape[1]), work)
    for combo in itertools.product(*[range(t[0].shape[-1]) for t in taps]):
        lin = sum(taps[i][0][..., k] * int(strides[i]) for i, k in enumerate(combo))
        wt = np.prod([taps[i][1][..., k] for i, k in enumerate(combo)], axis=0)
        vals = np.take_along_axis(flat, lin[:, None, :], axis=2)
        out += vals * wt[:, None, :].astype(work)
    return out.reshape(n, c, *out_sp).astype(x.dtype)


@register("GridSample", since=16)
def grid_sample_16(x, grid, *, align_corners=0, mode="bilinear", padding_mode="zeros"):
    """Opset 16: 4-D input, modes bilinear / nearest / bicubic."""
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    return _grid_sample(x, grid, mode, padding_mode, align_corners)


@register("GridSample", since=20)
def grid_sample_20(x, grid, *, align_corners=0, mode="linear", padding_mode="zeros"):
    """Opsets 20 and 22: N-D input, modes linear / nearest / cubic."""
    return _grid_sample(x, grid, mode, padding_mode, align_corners)


register("GridSample", since=22)(grid_sample_20)


# -- AffineGrid -----------------------------------------------------------------------------------------------------
def _base_coords(n, align_corners):
    if n <= 1:
        return np.zeros(max(n, 0))
    if align_corners:
        return np.linspace(-1.0, 1.0, n)
    return (2 * np.arange(n) + 1) / n - 1


@register("AffineGrid", since=20, static=(1,))
def affine_grid(theta, size, *, align_corners=0):
    """Opset 20: theta (N, 2, 3) with size (N, C, H, W), or (N, 3, 4) with size (N, C, D, H, W)."""
    sp = [int(s) for s in np.asarray(size).reshape(-1)[2:]]
    r = len(sp)
    if theta.shape[1:] != (r, r + 1):
        raise ValueError(f"theta has shape {list(theta.shape)}; size {list(np.asarray(size))} needs (N, {r}, {r + 1})")
    axes = [_base_coords(s, align_corners) for s in sp]
    mesh = np.meshgrid(*axes, indexing="ij")  # each of shape sp, in (D, H, W) order
    homo = np.stack([*mesh[::-1], np.ones(sp)], axis=-1).reshape(-1, r + 1)  # (x, y[, z], 1)
    out = np.einsum("pk,njk->npj", homo, theta.astype(np.float64))
    return out.reshape(theta.shape[0], *sp, r).astype(theta.dtype)


# -- RoiAlign -------------------------------------------------------------------------------------------------------
def _roi_axis(start, length, pooled, grid, gmax, limit):
    """Sample positions along one axis: low/high indices, their weights (masked) as (R, pooled, gmax) arrays."""
    bin_size = length / pooled
    ph = np.arange(pooled)[None, :, None]
    g = np.arange(gmax)[None, None, :]
    gr = np.maximum(grid, 1)[:, None, None]
    pos = start[:, None, None] + ph * bin_size[:, None, None] + (g + 0.5) * bin_size[:, None, None] / gr
    valid = (pos >= -1.0) & (pos <= limit) & (g < grid[:, None, None])
    pos = np.maximum(pos, 0)
    low = np.floor(pos).astype(np.int64)
    edge = low >= limit - 1
    low = np.where(edge, limit - 1, low)
    high = np.where(edge, limit - 1, low + 1)
    pos = np.where(edge, low, pos)
    frac = pos - low
    return low, high, np.where(valid, 1 - frac, 0.0), np.where(valid, frac, 0.0), valid


def _roi_align(x, rois, batch_indices, mode, out_h, out_w, sampling_ratio, spatial_scale, half_pixel):
    n, c, h, w = x.shape
    rois = rois.astype(np.float64)
    bi = np.asarray(batch_indices).reshape(-1).astype(np.int64)
    nr = bi.shape[0]
    if nr == 0:
        return np.zeros((0, c, out_h, out_w), x.dtype)
    off = 0.5 if half_pixel else 0.0
    x1, y1, x2, y2 = (rois[:, i] * spatial_scale - off for i in range(4))
    rw, rh = x2 - x1, y2 - y1
    if not half_pixel:
        rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)
    if sampling_ratio > 0:
        gh = gw = np.full(nr, int(sampling_ratio))
    else:
        gh, gw = np.ceil(rh / out_h).astype(np.int64), np.ceil(rw / out_w).astype(np.int64)
    gh_max, gw_max = max(int(gh.max()), 1), max(int(gw.max()), 1)
    ylo, yhi, wylo, wyhi, vy = _roi_axis(y1, rh, out_h, gh, gh_max, h)
    xlo, xhi, wxlo, wxhi, vx = _roi_axis(x1, rw, out_w, gw, gw_max, w)
    if mode == "avg":
        # separable: Y[r, c] = Ay[r] @ X[b_r, c] @ Ax[r]^T / count, with Ay (out_h, H) and Ax (out_w, W)
        work = np.float64 if x.dtype == np.float64 else np.float32
        ay = np.zeros((nr, out_h, h))
        ax = np.zeros((nr, out_w, w))
        ri = np.arange(nr)[:, None, None]
        np.add.at(ay, (ri, np.arange(out_h)[None, :, None], ylo), wylo)
        np.add.at(ay, (ri, np.arange(out_h)[None, :, None], yhi), wyhi)
        np.add.at(ax, (ri, np.arange(out_w)[None, :, None], xlo), wxlo)
        np.add.at(ax, (ri, np.arange(out_w)[None, :, None], xhi), wxhi)
        ay /= np.maximum(gh * gw, 1)[:, None, None]
        ay, axt = ay.astype(work), ax.transpose(0, 2, 1).astype(work)
        out = np.empty((nr, out_h, c, out_w), work)
        chunk = max(1, (1 << 23) // max(out_h * c * w, 1))  # rows of RoIs per step: ~8M intermediate values
        for b in np.unique(bi):
            rows = x[b].astype(work).transpose(1, 0, 2).reshape(h, c * w)  # (H, C*W)
            sel = np.nonzero(bi == b)[0]
            for i in range(0, sel.shape[0], chunk):
                part = sel[i : i + chunk]
                t = (ay[part].reshape(-1, h) @ rows).reshape(part.shape[0], out_h * c, w)  # (r, out_h*C, W)
                out[part] = (t @ axt[part]).reshape(part.shape[0], out_h, c, out_w)
        return out.transpose(0, 2, 1, 3).astype(x.dtype)
    data = x.astype(np.float64)
    if mode != "max":
        raise ValueError(f"unknown mode {mode!r}")
    # max: the largest weighted corner value over all samples of a bin (what onnxruntime computes)
    b = bi[:, None, None, None, None]
    best = np.full((nr, out_h, gh_max, out_w, gw_max, c), -np.inf)
    for yi, wy in ((ylo, wylo), (yhi, wyhi)):
        for xi, wx in ((xlo, wxlo), (xhi, wxhi)):
            vals = data[b, :, yi[:, :, :, None, None], xi[:, None, None, :, :]]
            wt = wy[:, :, :, None, None] * wx[:, None, None, :, :]
            best = np.maximum(best, vals * wt[..., None])
    mask = (np.arange(gh_max)[None, None, :, None, None] < gh[:, None, None, None, None]) & (
        np.arange(gw_max)[None, None, None, None, :] < gw[:, None, None, None, None]
    )
    best = np.where(mask[..., None], best, -np.inf).max(axis=(2, 4))
    best = np.where(np.isneginf(best), 0.0, best)
    return best.transpose(0, 3, 1, 2).astype(x.dtype)


@register("RoiAlign", since=10)
def roi_align_10(
    x, rois, batch_indices, *, mode="avg", output_height=1, output_width=1, sampling_ratio=0, spatial_scale=1.0
):
    """Opset 10: RoI coordinates are not shifted by half a pixel."""
    return _roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale, False)


@register("RoiAlign", since=16)
def roi_align_16(
    x,
    rois,
    batch_indices,
    *,
    coordinate_transformation_mode="half_pixel",
    mode="avg",
    output_height=1,
    output_width=1,
    sampling_ratio=0,
    spatial_scale=1.0,
):
    """Opsets 16 and 22: coordinate_transformation_mode half_pixel (default) or output_half_pixel."""
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ValueError(f"unknown coordinate_transformation_mode {coordinate_transformation_mode!r}")
    half = coordinate_transformation_mode == "half_pixel"
    return _roi_align(x, rois, batch_indices, mode, output_height, output_width, sampling_ratio, spatial_scale, half)


register("RoiAlign", since=22)(roi_align_16)


# -- NonMaxSuppression ----------------------------------------------------------------------------------------------
def _corners(boxes, center_point_box):
    """(x_min, y_min, x_max, y_max) arrays from [y1, x1, y2, x2] or [x_center, y_center, w, h] boxes."""
    if center_point_box:
        xc, yc, bw, bh = (boxes[..., i] for i in range(4))
        return xc - bw / 2, yc - bh / 2, xc + bw / 2, yc + bh / 2
    y1, x1, y2, x2 = (boxes[..., i] for i in range(4))
    return np.minimum(x1, x2), np.minimum(y1, y2), np.maximum(x1, x2), np.maximum(y1, y2)


def _iou_matrix(boxes, center_point_box):
    x0, y0, x1, y1 = _corners(boxes, center_point_box)
    iw = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
    ih = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
    inter = iw * ih
    area = (x1 - x0) * (y1 - y0)
    union = area[:, None] + area[None, :] - inter
    ok = (iw > 0) & (ih > 0) & (inter > 0) & (area[:, None] > 0) & (area[None, :] > 0) & (union > 0)
    return np.where(ok, inter / np.where(ok, union, 1), 0).astype(boxes.dtype)


@register("NonMaxSuppression", since=10, dynamic_shape=True)
def non_max_suppression(
    boxes, scores, max_output_boxes_per_class=None, iou_threshold=None, score_threshold=None, *, center_point_box=0
):
    """Opsets 10 and 11: selected [batch, class, box] triples, per batch and class in descending score order."""
    limit = (
        0
        if max_output_boxes_per_class is None or max_output_boxes_per_class.size == 0
        else int(max_output_boxes_per_class.reshape(-1)[0])
    )
    iou_t = boxes.dtype.type(0 if iou_threshold is None or iou_threshold.size == 0 else iou_threshold.reshape(-1)[0])
    has_st = score_threshold is not None and score_threshold.size > 0
    selected = []
    for b in range(scores.shape[0]):
        iou = _iou_matrix(boxes[b], center_point_box) if limit > 0 and scores.shape[2] else None
        for cl in range(scores.shape[1]):
            if limit <= 0:
                break
            s = scores[b, cl]
            cand = np.nonzero(s > score_threshold.reshape(-1)[0])[0] if has_st else np.arange(s.shape[0])
            order = cand[np.lexsort((cand, -s[cand].astype(np.float64)))]
            alive = np.ones(order.shape[0], bool)
            picked = 0
            for i in range(order.shape[0]):
                if picked >= limit:
                    break
                if not alive[i]:
                    continue
                picked += 1
                selected.append((b, cl, order[i]))
                alive[i + 1 :] &= ~(iou[order[i], order[i + 1 :]] > iou_t)
    return np.array(selected, dtype=np.int64).reshape(-1, 3)


register("NonMaxSuppression", since=11, dynamic_shape=True)(non_max_suppression)
