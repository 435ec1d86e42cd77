#!/usr/bin/env python3
"""A probe for issue 12's Iris / digits goal: does a DP *pooled* covariance beat DP-CDA there?

ceiling.py shows that at the demos' size privmix's output carries only noisy class means, and
that exact class covariances would lift the utility check from ~0.85 / 0.89 to 0.96 / 0.95.
This probe (numpy, not privmix) releases, at the same (eps, delta) = (5, 1e-5) under zCDP:
class counts, class sums and the pooled second moment S2 = sum x x^T (one d x d matrix for
all classes, so its noise is spread over every row instead of one class's), with the rows in
the unit ball and non-negative (the schema's range mapped to [0, 1], divided by sqrt(d); L2
sensitivity sqrt(2) for each of the three releases under replace-one with a label change).
The pooled within-class covariance W = (S2 - sum_k S_k S_k^T / n_k) / n (eigenvalues
floored, optionally shrunk toward its trace) then gives synthetic rows N(mean_k, W) in the
noisy class proportions, scored by run.py's utility check (80/20 splits, logistic
regression). Budget shares (counts, sums, S2) and shrinkage are swept.

    /path/to/venv/bin/python bench/utility/pooled_cov.py [--reps 10]

Needs numpy and scikit-learn; the noise is numpy's (a probe, not a release).
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import ROOT, lr_acc, numeric_matrix, read_csv, split  # noqa: E402


def rho_of(eps, delta):
    """The zCDP rho whose conversion rho + 2 sqrt(rho ln(1/delta)) equals eps."""
    lg = np.log(1 / delta)
    r = -np.sqrt(lg) + np.sqrt(lg + eps)
    return r * r


def probe(path, label, schema, eps, reps, shares, shrink):
    header, rows = read_csv(path)
    names = [h for h in header if h != label]
    cols = json.load(open(schema))["columns"]
    lo = np.array([float(cols[n]["min"]) for n in names])
    hi = np.array([float(cols[n]["max"]) for n in names])
    d = len(names)
    rho = rho_of(eps, 1e-5)
    # Gaussian mechanism, L2 sensitivity sqrt(2): rho_i = 2 / (2 sigma_i^2).
    sig_c, sig_s, sig_q = (np.sqrt(1.0 / (rho * f)) for f in shares)
    accs, reals = [], []
    for rep in range(reps):
        tr, te = split(rows, 0.8, rep)
        x, y, cats = numeric_matrix(header, tr, label)
        xt, yt, _ = numeric_matrix(header, te, label, cats)
        x, xt, y = np.array(x, float), np.array(xt, float), np.array(y)
        z = np.clip((x - lo) / (hi - lo), 0, 1) / np.sqrt(d)
        rng = np.random.default_rng(100 + rep)
        classes = sorted(set(y))
        cnt, sums = {}, {}
        for c in classes:
            zc = z[y == c]
            cnt[c] = max(len(zc) + rng.normal(0, sig_c), 2.0)
            sums[c] = zc.sum(0) + rng.normal(0, sig_s, d)
        noise = np.triu(rng.normal(0, sig_q, (d, d)))
        s2 = z.T @ z + noise + np.triu(noise, 1).T
        w = (s2 - sum(np.outer(sums[c], sums[c]) / cnt[c] for c in classes)) / sum(cnt.values())
        vals, vecs = np.linalg.eigh((w + w.T) / 2)
        w = (vecs * np.maximum(vals, 1e-6)) @ vecs.T
        if shrink:
            w = (1 - shrink) * w + shrink * np.trace(w) / d * np.eye(d)
        xs, ys = [], []
        for c in classes:
            k = int(round(cnt[c]))
            xs.append(rng.multivariate_normal(sums[c] / cnt[c], w, k))
            ys += [c] * k
        xs = np.vstack(xs) * np.sqrt(d) * (hi - lo) + lo
        accs.append(lr_acc(xs, ys, xt, yt))
        reals.append(lr_acc(x, y, xt, yt))
    return float(np.mean(accs)), float(np.std(accs)), float(np.mean(reals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--epsilon", type=float, default=5.0)
    a = ap.parse_args()
    demos = [
        ("iris", "demo/iris.csv", "species", "demo/iris.schema.json"),
        ("digits", "demo/digits-8x8.csv", "label", "demo/digits-8x8.schema.json"),
    ]
    print("| shares (counts, sums, S2) | shrink | " + " | ".join(f"{n} (mean ± sd)" for n, *_ in demos) + " |")
    print("|---|---|" + "---|" * len(demos))
    real = {}
    for shares in [(0.1, 0.3, 0.6), (0.05, 0.45, 0.5), (0.05, 0.6, 0.35), (0.1, 0.5, 0.4)]:
        for shrink in (0.0, 0.3):
            cells = []
            for name, path, label, schema in demos:
                m, sd, r = probe(os.path.join(ROOT, path), label, os.path.join(ROOT, schema),
                                 a.epsilon, a.reps, shares, shrink)
                real[name] = r
                cells.append(f"{m:.3f} ± {sd:.3f}")
            print(f"| {shares} | {shrink} | " + " | ".join(cells) + " |", flush=True)
    print("real data: " + ", ".join(f"{k} {v:.3f}" for k, v in real.items()))


if __name__ == "__main__":
    main()
