#!/usr/bin/env python3
"""Two numpy probes toward issue 12's Fashion-MNIST goal (logistic regression >= 0.75 at
epsilon = 10), on fashion.py's split, each decoded three ways: linearly (pixels left outside
[0, 255]), quantile-mapped onto the real pixel marginals (as privmix decodes), clamped.

  * `gauss`: a class-conditional Gaussian in a DP principal subspace: one Gaussian release of
    sum x x^T over rows clipped to norm B (the basis: its top k eigenvectors), then per class
    a noisy count, sum and second moment of the projected rows; samples N(mean_k, cov_k)
    mapped back. zCDP, rho from (epsilon, delta) by epsilon = rho + 2 sqrt(rho ln(1/delta)),
    split 0.2 / 0.05 / 0.35 / 0.4 (basis, counts, sums, second moments; add/remove one row,
    each release of sensitivity 1). A probe, not an accounted mechanism; and its quantile
    mapping uses the real marginals, which a mechanism would have to release under DP.
  * `denoise`: plain DP-CDA (fashion.py's numpy_rows at privmix's l and sigma_x) projected
    onto the top k principal components of the synthetic rows themselves (post-processing)
    before decoding.

    /path/to/venv/bin/python bench/utility/fashion_probes.py [gauss|denoise] [--seed 1]

Scored by fashion.py's `plain` and `std` logistic regressions. Needs numpy, scikit-learn
and fashion.py's data (run fashion.py once, or let this script fetch it the same way).
"""

import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fashion import load, numpy_rows, plain_lr, prepare, qmap  # noqa: E402
from run import lr_acc  # noqa: E402


def decodings(name, s, ys, x, xt, yt):
    """The three decodings of the synthetic pixels s (in [0, 1] units), scored."""
    for how, d in (("linear", s), ("quantile-mapped", qmap(s, x)), ("clamped", np.clip(s, 0, 1))):
        print(f"| {name} | {how} | {plain_lr(d, ys, xt, yt):.4f} | {lr_acc(d, ys, xt, yt):.4f} |", flush=True)


def gauss(x, y, xt, yt, rng, eps=10.0, delta=1e-5, bound=12.0, dims=(50, 150)):
    ln = math.log(1 / delta)
    rho = ((-2 * math.sqrt(ln) + math.sqrt(4 * ln + 4 * eps)) / 2) ** 2
    s1, sn, ss, sm = (math.sqrt(1 / (2 * share * rho)) for share in (0.2, 0.05, 0.35, 0.4))
    u = x.astype(np.float64) / np.maximum(np.linalg.norm(x, axis=1) / bound, 1)[:, None] / bound

    def sym(n, sigma):
        g = rng.normal(0, sigma, (n, n))
        return np.triu(g) + np.triu(g, 1).T

    d = u.shape[1]
    _, basis = np.linalg.eigh(u.T @ u + sym(d, s1))
    for k in dims:
        v = basis[:, ::-1][:, :k]
        z = u @ v
        out, labels = [], []
        for c in np.unique(y):
            zc = z[y == c]
            n = len(zc) + rng.normal(0, sn)
            mean = (zc.sum(0) + rng.normal(0, ss, k)) / n
            cov = (zc.T @ zc + sym(k, sm)) / n - np.outer(mean, mean)
            w, q = np.linalg.eigh(cov)
            cov = (q * np.maximum(w, 0)) @ q.T
            m = int(round(n))
            out.append(rng.multivariate_normal(mean, cov, size=m))
            labels += [c] * m
        decodings(f"gauss, k = {k}", np.vstack(out) @ v.T * bound, np.array(labels), x, xt, yt)


def denoise(x, y, xt, yt, seed, runs=((48, 0.0231), (16, 0.0466)), dims=(100,)):
    for mix, sigma_x in runs:
        s = numpy_rows(x, y, mix, sigma_x, seed)
        decodings(f"DP-CDA l = {mix}", s, y, x, xt, yt)
        centre = s.mean(0)
        _, v = np.linalg.eigh(np.cov((s - centre).T))
        for k in dims:
            p = v[:, ::-1][:, :k]
            decodings(f"DP-CDA l = {mix}, top {k} components", centre + (s - centre) @ p @ p.T, y, x, xt, yt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("probe", choices=["gauss", "denoise"])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    train, test = prepare()
    x, y = load(train)
    xt, yt = load(test)
    print("| synthetic rows | decoding | plain LR | std LR |")
    print("|---|---|---|---|")
    if a.probe == "gauss":
        gauss(x, y, xt, yt, np.random.default_rng(a.seed))
    else:
        denoise(x, y, xt, yt, a.seed)


if __name__ == "__main__":
    main()
