#!/usr/bin/env python3
"""Plain vectorized numpy DP-CDA (label-free mode): the speed baseline for privmix.

Same algorithm as privmix's `synth` (SPEC §1.1, label-free mode), minus the parts that are
not part of the mixing itself (DP normalization, receipt, categorical decoding, rounding):

  1. read a CSV (header row; one label column; all other columns numeric);
  2. scale each feature to [0, 1] by (x - min) / (max - min); constant columns are untouched;
  3. clip each row to L2 norm <= c;
  4. for each class k: draw T_k = T // K mixes of l distinct rows of class k, average them,
     add N(0, sigma^2 I) (sigma is passed in, e.g. from `privmix calibrate` or a privmix
     receipt, so both tools add the same noise);
  5. map back to original units and write a CSV (label first).

Sampling l distinct rows per mix (step 4), vectorized with O(l) work per mix:
  * if l <= n_k / 2: draw a (T_k, l) matrix of indices with replacement, sort each row, find
    rows holding a repeated index and redraw just those rows until none is left. Conditioned
    on having no repeat, an i.i.d. uniform l-tuple is a uniform ordered l-tuple of distinct
    indices, so each mix is an exactly uniform l-subset (rejection sampling). The expected
    number of rounds is tiny: P(repeat) <= l^2 / (2 n_k) (≈ 0.0015 for l = 4, n_k ≈ 5,000).
  * otherwise (l close to n_k): random keys + np.argpartition(keys, l)[:, :l], which is
    O(n_k) per mix but only used when n_k < 2 l, so it is O(l) as well.
  `rng.random((T_k, n_k)).argsort(axis=1)[:, :l]` would be O(n_k log n_k) per mix, and
  `rng.choice(n_k, l, replace=False)` per row is a Python-level loop; both were avoided.

Timing: `core_s` covers steps 2-5 minus the file write, i.e. everything after the data are
in float32 arrays and before formatting the output; `load_s` and `write_s` are the I/O.
Prints one JSON object on stdout.
"""

import argparse
import json
import sys
import time

import numpy as np


def sample_distinct(rng, n, l, t):
    """(t, l) int64 array; each row is a uniform l-subset of range(n) (distinct entries)."""
    if l == 1:
        return rng.integers(0, n, size=(t, 1))
    if 2 * l <= n:
        idx = rng.integers(0, n, size=(t, l))
        bad = np.arange(t)
        while bad.size:
            s = np.sort(idx[bad], axis=1)
            rep = (s[:, 1:] == s[:, :-1]).any(axis=1)
            bad = bad[rep]
            if bad.size:
                idx[bad] = rng.integers(0, n, size=(bad.size, l))
        return idx
    keys = rng.random((t, n))
    return np.argpartition(keys, l - 1, axis=1)[:, :l]


def load_csv(path, label):
    with open(path, "r", encoding="utf-8") as f:
        header = [h.strip() for h in f.readline().strip().split(",")]
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32)
    li = header.index(label)
    y = data[:, li].astype(np.int64)
    x = np.ascontiguousarray(np.delete(data, li, axis=1))
    names = [h for i, h in enumerate(header) if i != li]
    return header[li], names, x, y


def cda_core(x, y, mix, clip, sigma, samples, rng, chunk=8192):
    """Returns (labels, synthetic rows in original units), float32."""
    n, d = x.shape
    lo = x.min(axis=0)
    hi = x.max(axis=0)
    span = hi - lo
    const = span == 0
    scale = np.where(const, np.float32(1), span).astype(np.float32)
    shift = np.where(const, np.float32(0), lo).astype(np.float32)
    z = (x - shift) / scale
    norms = np.sqrt(np.einsum("ij,ij->i", z, z))
    factor = np.minimum(np.float32(1), np.float32(clip) / np.maximum(norms, np.float32(1e-30)))
    z *= factor[:, None].astype(np.float32)

    classes = np.unique(y)
    k = len(classes)
    t_k = samples // k
    out = np.empty((t_k * k, d), dtype=np.float32)
    labels = np.empty(t_k * k, dtype=np.int64)
    inv_l = np.float32(1.0 / mix)
    row = 0
    for c in classes:
        pool = np.flatnonzero(y == c)
        if len(pool) < mix:
            raise SystemExit(f"class {c} has {len(pool)} rows < l = {mix}")
        zc = z[pool]
        for start in range(0, t_k, chunk):
            m = min(chunk, t_k - start)
            idx = sample_distinct(rng, len(pool), mix, m)
            acc = zc[idx[:, 0]]
            for j in range(1, mix):
                acc += zc[idx[:, j]]
            acc *= inv_l
            acc += rng.standard_normal((m, d), dtype=np.float32) * np.float32(sigma)
            out[row:row + m] = acc
            labels[row:row + m] = c
            row += m
    out *= scale
    out += shift
    return labels, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--mix", type=int, default=4)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--sigma", type=float, required=True)
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output", required=True)
    ap.add_argument("--repeat-core", type=int, default=1,
                    help="run the core this many times and report the minimum")
    a = ap.parse_args()

    t0 = time.perf_counter()
    label_name, names, x, y = load_csv(a.input, a.label)
    t1 = time.perf_counter()
    samples = a.samples if a.samples is not None else x.shape[0]
    core_times = []
    for _ in range(max(1, a.repeat_core)):
        rng = np.random.default_rng(a.seed)
        c0 = time.perf_counter()
        labels, out = cda_core(x, y, a.mix, a.clip, a.sigma, samples, rng)
        core_times.append(time.perf_counter() - c0)
    t2 = time.perf_counter()
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(",".join([label_name] + names) + "\n")
        np.savetxt(f, np.column_stack([labels.astype(np.float32), out]), delimiter=",",
                   fmt=["%d"] + ["%.6g"] * out.shape[1])
    t3 = time.perf_counter()
    core = min(core_times)
    print(json.dumps({
        "rows_in": int(x.shape[0]), "dim": int(x.shape[1]), "rows_out": int(out.shape[0]),
        "mix": a.mix, "sigma": a.sigma, "load_s": t1 - t0, "core_s": core,
        "core_runs_s": core_times, "write_s": t3 - t2,
        # end-to-end = load + one core run + write (not the repeats)
        "end_to_end_s": (t1 - t0) + core + (t3 - t2),
        "numpy": np.__version__,
    }))


if __name__ == "__main__":
    sys.exit(main())
