"""Independent bounds on ε for the without-replacement (replace-one) subsampled Gaussian's
dominating pair, composed T times, by direct convolution at fine resolution.

Independent of the Rust code: the loss tails are written here from scratch with scipy's
normal survival function; the discretisation is plain rounding (not connect-the-dots):
  * upper bound: every mass in (y_i, y_{i+1}] moved up to y_{i+1}, the truncated upper tail
    sent to +∞, the lower tail moved up to the window's bottom;
  * lower bound: every mass moved down to y_i, truncated tails dropped.
Composition by FFT (numpy) with repeated squaring, truncating to a fixed window after each
product in the same direction. The true ε lies in [eps_lower, eps_upper] (up to float64
rounding, far below the bracket width, which is about T·h).

The pair (PROOF.md in src/accountant/pld/): A = (1−γ)N(0,1) + γN(μ,1), B = N(0,1) for the
loss L > 0, symmetrised: ω = A-law of L on (0, ∞), ω(−l) = B-law of L at l, rest at 0.
"standard" composes instead T steps of the remove pair and T steps of the add pair (B, A).

Run: python tests/reference/make_pld_wor.py > tests/reference/pld_wor_reference.json
(needs numpy and scipy).
"""
import json
import sys

import numpy as np
from scipy.stats import norm

TRUNC = 1e-15


def remove_tails(y, g, mu):
    """A(L > y), B(L > y) for the remove pair; y an array."""
    y = np.asarray(y, dtype=float)
    ta = np.ones_like(y)
    tb = np.ones_like(y)
    t = np.expm1(y) + g
    ok = t > 0
    x = (np.log(t[ok]) - np.log(g) + mu * mu / 2.0) / mu
    tb[ok] = norm.sf(x)
    ta[ok] = (1.0 - g) * norm.sf(x) + g * norm.sf(x - mu)
    return ta, tb


def remove_lower(y, g, mu):
    """A(L <= y), B(L <= y) for the remove pair."""
    y = np.asarray(y, dtype=float)
    fa = np.zeros_like(y)
    fb = np.zeros_like(y)
    t = np.expm1(y) + g
    ok = t > 0
    x = (np.log(t[ok]) - np.log(g) + mu * mu / 2.0) / mu
    fb[ok] = norm.cdf(x)
    fa[ok] = (1.0 - g) * norm.cdf(x) + g * norm.cdf(x - mu)
    return fa, fb


def cdf_sym(y, g, mu):
    """ω(L <= y) for the symmetrised pair."""
    y = np.asarray(y, dtype=float)
    out = np.empty_like(y)
    neg = y < 0
    # y < 0: ω(L <= y) = B(L >= -y)
    _, tb = remove_tails(-y[neg], g, mu)
    out[neg] = tb
    ta, _ = remove_tails(y[~neg], g, mu)
    out[~neg] = 1.0 - ta
    return out


def cdf_remove(y, g, mu):
    return remove_lower(y, g, mu)[0]


def cdf_add(y, g, mu):
    """Add pair (B, A): loss −L under B: P_B(−L <= y) = B(L >= −y)."""
    _, tb = remove_tails(-np.asarray(y, dtype=float), g, mu)
    return tb


def support(cdf, h):
    lo, hi = -1e-3, 1e-3
    while cdf(np.array([lo]))[0] > TRUNC:
        lo *= 1.5
    while 1.0 - cdf(np.array([hi]))[0] > TRUNC:
        hi *= 1.5
    return int(np.floor(lo / h)), int(np.ceil(hi / h))


def discretise(cdf, h, upper):
    """Masses on grid indices [i0, i1] (+ mass at +inf) for rounding up (upper) or down."""
    i0, i1 = support(cdf, h)
    y = np.arange(i0, i1 + 1) * h
    f = cdf(y)
    f = np.maximum.accumulate(f)
    m = np.diff(f)  # mass in (y_k, y_{k+1}]
    p = np.zeros(len(y))
    if upper:
        p[0] = f[0]  # everything at or below y_0 goes to y_0
        p[1:] += m
        inf = 1.0 - f[-1]
    else:
        p[:-1] += m  # mass at or below y_0 dropped, above y_end dropped
        inf = 0.0
    return i0, p, inf


def conv(a, b):
    n = len(a) + len(b) - 1
    nf = 1 << (n - 1).bit_length()
    r = np.fft.irfft(np.fft.rfft(a, nf) * np.fft.rfft(b, nf), nf)[:n]
    return np.maximum(r, 0.0)


def clip(i0, p, inf, lo, hi, upper):
    """Keep indices [lo, hi]; pessimistic: below -> lo, above -> inf."""
    i1 = i0 + len(p) - 1
    if upper:
        if i0 < lo:
            k = lo - i0
            below = p[:k + 1].sum()
            p = p[k:].copy()
            p[0] = below
            i0 = lo
        if i1 > hi:
            k = hi - i0
            inf += p[k + 1:].sum()
            p = p[:k + 1]
    else:
        if i0 < lo:
            p = p[lo - i0:]
            i0 = lo
        if i0 + len(p) - 1 > hi:
            p = p[:hi - i0 + 1]
    return i0, p, inf


def mul(x, y, lo, hi, upper):
    i0 = x[0] + y[0]
    p = conv(x[1], y[1])
    inf = 1.0 - (1.0 - x[2]) * (1.0 - y[2]) if upper else 0.0
    return clip(i0, p, inf, lo, hi, upper)


def power(x, t, lo, hi, upper):
    result = None
    base = x
    while t:
        if t & 1:
            result = base if result is None else mul(result, base, lo, hi, upper)
        t >>= 1
        if t:
            base = mul(base, base, lo, hi, upper)
    return result


def delta_of(x, h, eps):
    i0, p, inf = x
    y = (i0 + np.arange(len(p))) * h
    sel = y > eps
    return inf + float(np.sum(p[sel] * -np.expm1(eps - y[sel])))


def eps_of(x, h, delta):
    lo, hi = 0.0, 100.0
    if delta_of(x, h, lo) <= delta:
        return 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if delta_of(x, h, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def bounds(case):
    q, z, t, delta, h, kind = (case[k] for k in ("q", "noise_multiplier", "steps", "delta", "h", "adjacency"))
    mu = 1.0 / z
    if kind == "label_kept":
        comps = [(lambda y: cdf_sym(y, q, mu), t)]
    else:
        comps = [(lambda y: cdf_remove(y, q, mu), t), (lambda y: cdf_add(y, q, mu), t)]
    res = []
    for upper in (True, False):
        parts = []
        means, vars_ = 0.0, 0.0
        for cdf, n in comps:
            x = discretise(cdf, h, upper)
            yv = (x[0] + np.arange(len(x[1]))) * h
            m = float(np.sum(x[1] * yv))
            v = float(np.sum(x[1] * (yv - m) ** 2))
            means += n * m
            vars_ += n * v
            parts.append((x, n))
        sd = np.sqrt(vars_)
        lo = int(np.floor((means - 14 * sd) / h))
        hi = int(np.ceil((means + 14 * sd + 1.0) / h))
        total = None
        for x, n in parts:
            pw = power(x, n, lo, hi, upper)
            total = pw if total is None else mul(total, pw, lo, hi, upper)
        res.append(eps_of(total, h, delta))
    return res


CASES = [
    {"q": 0.01, "noise_multiplier": 1.0, "steps": 1000, "delta": 1e-5, "h": 1e-5, "adjacency": "label_kept"},
    {"q": 0.05, "noise_multiplier": 1.5, "steps": 300, "delta": 1e-5, "h": 2e-5, "adjacency": "label_kept"},
    {"q": 0.1, "noise_multiplier": 2.0, "steps": 100, "delta": 1e-5, "h": 4e-5, "adjacency": "label_kept"},
    {"q": 0.04, "noise_multiplier": 1.0, "steps": 100, "delta": 1e-5, "h": 4e-5, "adjacency": "label_kept"},
    {"q": 0.02, "noise_multiplier": 0.8, "steps": 500, "delta": 1e-6, "h": 1e-5, "adjacency": "label_kept"},
    {"q": 0.01, "noise_multiplier": 1.0, "steps": 1000, "delta": 1e-5, "h": 1e-5, "adjacency": "standard"},
]

out = []
for c in CASES:
    up, low = bounds(c)
    c = dict(c)
    c["eps_upper"] = up
    c["eps_lower"] = low
    out.append(c)
    print(c, file=sys.stderr)

json.dump({
    "about": "bounds on ε of the composed without-replacement dominating pair by plain "
             "rounding up/down at grid step h and numpy FFT composition; the truth lies in "
             "[eps_lower, eps_upper]. Generated by tests/reference/make_pld_wor.py",
    "cases": out,
}, sys.stdout, indent=1)
print()
