"""ggml's reference K-quant quantizers (quantize_row_q{2,3,4,5,6}_K_ref), transcribed to Python.

gguf-py (the `gguf` package) can dequantize the K-quants but not quantize them, so this module is
the expected-bytes source for vellum's K-quant quantization tests. It is a separate transcription
of ggml-quants.c (not of vellum's C++), written with numpy float32 scalars so every operation rounds
to float32 exactly as the C does, in the C's order. The generator cross-checks its output through
gguf.quants.dequantize, which validates the bit packing against gguf-py independently.

Slow (scalar Python) and only meant for a handful of blocks.
"""

from __future__ import annotations

import numpy as np

F = np.float32
QK_K = 256
GROUP_MAX_EPS = F(1e-15)


def nearest_int(f) -> int:
    """Round to nearest, ties to even, via the 1.5 * 2^23 trick (exact for |f| <= 4194303)."""
    v = np.float32(F(f) + F(12582912.0))
    i = int(v.view(np.uint32))
    return (i & 0x007FFFFF) - 0x00400000


def clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def f16(v) -> int:
    return int(np.float32(v).astype(np.float16).view(np.uint16))


def f16_to_f32(h: int) -> np.float32:
    return np.array([h], dtype=np.uint16).view(np.float16).astype(np.float32)[0]


def signed_absmax(x):
    mx, amax = F(0), F(0)
    for xi in x:
        ax = abs(xi)
        if ax > amax:
            amax, mx = ax, xi
    return mx, amax


def make_qx_quants(nmax: int, x):
    """rmse_type 1, no importance weights (weights x^2). Returns (scale, L with L in 0..2*nmax-1)."""
    n = len(x)
    mx, amax = signed_absmax(x)
    if amax < GROUP_MAX_EPS:
        return F(0), [0] * n
    iscale = F(-nmax) / mx
    L = [0] * n
    sumlx, suml2 = F(0), F(0)
    for i in range(n):
        l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1)
        L[i] = l + nmax
        w = x[i] * x[i]
        sumlx += w * x[i] * F(l)
        suml2 += w * F(l) * F(l)
    scale = sumlx / suml2 if suml2 != 0 else F(0)
    best = scale * sumlx
    for step in range(-9, 10):
        if step == 0:
            continue
        iscale = -(F(nmax) + F(0.1) * F(step)) / mx
        sumlx, suml2 = F(0), F(0)
        for i in range(n):
            l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1)
            w = x[i] * x[i]
            sumlx += w * x[i] * F(l)
            suml2 += w * F(l) * F(l)
        if suml2 > 0 and sumlx * sumlx > best * suml2:
            L = [nmax + clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1) for i in range(n)]
            scale = sumlx / suml2
            best = scale * sumlx
    return scale, L


def make_q3_quants(nmax: int, x):
    """do_rmse = true. Returns (scale, L with L in 0..2*nmax-1)."""
    n = len(x)
    mx, amax = signed_absmax(x)
    if amax < GROUP_MAX_EPS:
        return F(0), [0] * n
    iscale = F(-nmax) / mx
    L = [0] * n
    sumlx, suml2 = F(0), F(0)
    for i in range(n):
        l = clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1)
        L[i] = l
        w = x[i] * x[i]
        sumlx += w * x[i] * F(l)
        suml2 += w * F(l) * F(l)
    for _ in range(5):
        n_changed = 0
        for i in range(n):
            w = x[i] * x[i]
            slx = sumlx - w * x[i] * F(L[i])
            if slx > 0:
                sl2 = suml2 - w * F(L[i]) * F(L[i])
                new_l = clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1)
                if new_l != L[i]:
                    slx += w * x[i] * F(new_l)
                    sl2 += w * F(new_l) * F(new_l)
                    if sl2 > 0 and slx * slx * suml2 > sumlx * sumlx * sl2:
                        L[i] = new_l
                        sumlx, suml2 = slx, sl2
                        n_changed += 1
        if not n_changed:
            break
    L = [l + nmax for l in L]
    return (sumlx / suml2 if suml2 > 0 else F(0)), L


def make_qkx2_quants(nmax: int, x, weights, rmin, rdelta, nstep: int, use_mad: bool):
    """Returns (scale, the_min, L with L in 0..nmax); x ~ scale * L - the_min."""
    n = len(x)
    rmin, rdelta = F(rmin), F(rdelta)
    mn, mx = x[0], x[0]
    sum_w = weights[0]
    sum_x = sum_w * x[0]
    for i in range(1, n):
        if x[i] < mn:
            mn = x[i]
        if x[i] > mx:
            mx = x[i]
        w = weights[i]
        sum_w += w
        sum_x += w * x[i]
    if mn > 0:
        mn = F(0)
    if mx == mn:
        return F(0), -mn, [0] * n
    iscale = F(nmax) / (mx - mn)
    scale = F(1) / iscale
    best_error = F(0)
    L = [0] * n
    for i in range(n):
        L[i] = clamp(nearest_int(iscale * (x[i] - mn)), 0, nmax)
        diff = scale * F(L[i]) + mn - x[i]
        diff = abs(diff) if use_mad else diff * diff
        best_error += weights[i] * diff
    for step in range(nstep + 1):
        iscale = (rmin + rdelta * F(step) + F(nmax)) / (mx - mn)
        sum_l, sum_l2, sum_xl = F(0), F(0), F(0)
        Laux = [0] * n
        for i in range(n):
            l = clamp(nearest_int(iscale * (x[i] - mn)), 0, nmax)
            Laux[i] = l
            w = weights[i]
            sum_l += w * F(l)
            sum_l2 += w * F(l) * F(l)
            sum_xl += w * F(l) * x[i]
        D = sum_w * sum_l2 - sum_l * sum_l
        if D > 0:
            this_scale = (sum_w * sum_xl - sum_x * sum_l) / D
            this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D
            if this_min > 0:
                this_min = F(0)
                this_scale = sum_xl / sum_l2
            cur_error = F(0)
            for i in range(n):
                diff = this_scale * F(Laux[i]) + this_min - x[i]
                diff = abs(diff) if use_mad else diff * diff
                cur_error += weights[i] * diff
            if cur_error < best_error:
                L = Laux
                best_error, scale, mn = cur_error, this_scale, this_min
    return scale, -mn, L


def pack_2bit(L) -> bytes:
    out = bytearray(QK_K // 4)
    for j in range(0, QK_K, 128):
        for l in range(32):
            out[j // 4 + l] = (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6)) & 0xFF
    return bytes(out)


def u16le(v: int) -> bytes:
    return int(v).to_bytes(2, "little")


def q2_k_block(x) -> bytes:
    L = [0] * QK_K
    scales, mins = [F(0)] * 16, [F(0)] * 16
    max_scale, max_min = F(0), F(0)
    for j in range(16):
        xs = x[16 * j:16 * j + 16]
        w = [abs(v) for v in xs]
        scales[j], mins[j], L[16 * j:16 * j + 16] = make_qkx2_quants(3, xs, w, -0.5, 0.1, 15, True)
        if scales[j] > max_scale:
            max_scale = scales[j]
        if mins[j] > max_min:
            max_min = mins[j]
    sc = [0] * 16
    if max_scale > 0:
        iscale = F(15) / max_scale
        sc = [nearest_int(iscale * scales[j]) & 0xFF for j in range(16)]
        d = f16(max_scale / F(15))
    else:
        d = f16(F(0))
    if max_min > 0:
        iscale = F(15) / max_min
        sc = [(sc[j] | (nearest_int(iscale * mins[j]) << 4)) & 0xFF for j in range(16)]
        dmin = f16(max_min / F(15))
    else:
        dmin = f16(F(0))
    for j in range(16):
        dd = f16_to_f32(d) * F(sc[j] & 0xF)
        if dd == 0:
            continue
        dm = f16_to_f32(dmin) * F(sc[j] >> 4)
        for ii in range(16):
            L[16 * j + ii] = clamp(nearest_int((x[16 * j + ii] + dm) / dd), 0, 3)
    return bytes(sc) + pack_2bit(L) + u16le(d) + u16le(dmin)


def q3_k_block(x) -> bytes:
    L = [0] * QK_K
    scales = [F(0)] * 16
    max_scale, amax = F(0), F(0)
    for j in range(16):
        scales[j], L[16 * j:16 * j + 16] = make_q3_quants(4, x[16 * j:16 * j + 16])
        s = abs(scales[j])
        if s > amax:
            amax, max_scale = s, scales[j]
    sb = [0] * 12
    if max_scale != 0:
        iscale = F(-32) / max_scale
        for j in range(16):
            l8 = nearest_int(iscale * scales[j])
            l8 = ((l8 + 128) & 0xFF) - 128  # int8_t narrowing
            l = clamp(l8, -32, 31) + 32
            if j < 8:
                sb[j] = l & 0xF
            else:
                sb[j - 8] |= (l & 0xF) << 4
            sb[j % 4 + 8] |= (l >> 4) << (2 * (j // 4))
        d = f16(F(1) / iscale)
    else:
        d = f16(F(0))
    for j in range(16):
        lo = sb[j] & 0xF if j < 8 else sb[j - 8] >> 4
        s = (lo | (((sb[8 + j % 4] >> (2 * (j // 4))) & 3) << 4)) - 32
        dd = f16_to_f32(d) * F(s)
        if dd == 0:
            continue
        for ii in range(16):
            L[16 * j + ii] = clamp(nearest_int(x[16 * j + ii] / dd), -4, 3) + 4
    hmask = bytearray(32)
    for j in range(QK_K):
        if L[j] > 3:
            hmask[j % 32] |= 1 << (j // 32)
            L[j] -= 4
    return bytes(hmask) + pack_2bit(L) + bytes(sb) + u16le(d)


def _q45_k(x, nmax, rmin, nstep):
    L = [0] * QK_K
    scales, mins = [F(0)] * 8, [F(0)] * 8
    max_scale, max_min = F(0), F(0)
    for j in range(8):
        xs = x[32 * j:32 * j + 32]
        sum_x2 = F(0)
        for v in xs:
            sum_x2 += v * v
        av_x = np.sqrt(sum_x2 / F(32))
        w = [av_x + abs(v) for v in xs]
        scales[j], mins[j], L[32 * j:32 * j + 32] = make_qkx2_quants(nmax, xs, w, rmin, 0.1, nstep, False)
        if scales[j] > max_scale:
            max_scale = scales[j]
        if mins[j] > max_min:
            max_min = mins[j]
    inv_scale = F(63) / max_scale if max_scale > 0 else F(0)
    inv_min = F(63) / max_min if max_min > 0 else F(0)
    sb = [0] * 12
    for j in range(8):
        ls = min(63, nearest_int(inv_scale * scales[j]) & 0xFF)
        lm = min(63, nearest_int(inv_min * mins[j]) & 0xFF)
        if j < 4:
            sb[j], sb[j + 4] = ls, lm
        else:
            sb[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4)
            sb[j - 4] |= (ls >> 4) << 6
            sb[j] |= (lm >> 4) << 6
    d = f16(max_scale / F(63))
    dmin = f16(max_min / F(63))
    for j in range(8):
        if j < 4:
            sc, m = sb[j] & 63, sb[j + 4] & 63
        else:
            sc, m = (sb[j + 4] & 0xF) | ((sb[j - 4] >> 6) << 4), (sb[j + 4] >> 4) | ((sb[j] >> 6) << 4)
        dd = f16_to_f32(d) * F(sc)
        if dd == 0:
            continue
        dm = f16_to_f32(dmin) * F(m)
        for ii in range(32):
            L[32 * j + ii] = clamp(nearest_int((x[32 * j + ii] + dm) / dd), 0, nmax)
    return u16le(d) + u16le(dmin) + bytes(sb), L


def q4_k_block(x) -> bytes:
    head, L = _q45_k(x, 15, -1.0, 20)
    qs = bytearray(128)
    for c in range(4):
        for l in range(32):
            qs[32 * c + l] = L[64 * c + l] | (L[64 * c + l + 32] << 4)
    return head + bytes(qs)


def q5_k_block(x) -> bytes:
    head, L = _q45_k(x, 31, -0.5, 15)
    qh, qs = bytearray(32), bytearray(128)
    for c in range(4):
        for l in range(32):
            l1, l2 = L[64 * c + l], L[64 * c + l + 32]
            if l1 > 15:
                l1 -= 16
                qh[l] |= 1 << (2 * c)
            if l2 > 15:
                l2 -= 16
                qh[l] |= 2 << (2 * c)
            qs[32 * c + l] = l1 | (l2 << 4)
    return head + bytes(qh) + bytes(qs)


def q6_k_block(x) -> bytes:
    L = [0] * QK_K
    scales = [F(0)] * 16
    max_scale, max_abs = F(0), F(0)
    for ib in range(16):
        scales[ib], L[16 * ib:16 * ib + 16] = make_qx_quants(32, x[16 * ib:16 * ib + 16])
        a = abs(scales[ib])
        if a > max_abs:
            max_abs, max_scale = a, scales[ib]
    if max_abs < GROUP_MAX_EPS:
        return bytes(210)
    iscale = F(-128) / max_scale
    d = f16(F(1) / iscale)
    sc = [min(127, nearest_int(iscale * scales[ib])) for ib in range(16)]
    sc = [((v + 128) & 0xFF) - 128 for v in sc]  # int8_t storage
    for j in range(16):
        dd = f16_to_f32(d) * F(sc[j])
        if dd == 0:
            continue
        for ii in range(16):
            L[16 * j + ii] = clamp(nearest_int(x[16 * j + ii] / dd), -32, 31) + 32
    ql, qh = bytearray(128), bytearray(64)
    for h in range(2):
        for l in range(32):
            q1, q2, q3, q4 = (L[128 * h + l + 32 * k] for k in range(4))
            ql[64 * h + l] = (q1 & 0xF) | ((q3 & 0xF) << 4)
            ql[64 * h + l + 32] = (q2 & 0xF) | ((q4 & 0xF) << 4)
            qh[32 * h + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
    return bytes(ql) + bytes(qh) + bytes(v & 0xFF for v in sc) + u16le(d)


BLOCK_QUANTIZERS = {"Q2_K": q2_k_block, "Q3_K": q3_k_block, "Q4_K": q4_k_block, "Q5_K": q5_k_block,
                    "Q6_K": q6_k_block}


def quantize(x: np.ndarray, type_name: str) -> bytes:
    """Quantizes a flat float32 array (a whole number of 256-element blocks)."""
    fn = BLOCK_QUANTIZERS[type_name]
    x = np.ascontiguousarray(x, dtype=np.float32).ravel()
    assert x.size % QK_K == 0
    out = b""
    with np.errstate(all="ignore"):
        for b in range(x.size // QK_K):
            out += fn([F(v) for v in x[b * QK_K:(b + 1) * QK_K]])
    return out
