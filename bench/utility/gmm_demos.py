#!/usr/bin/env python3
"""The demos' utility check through the DP-GMM release (`privmix gmm`, default: noisy class
counts, sums and second moments under record adjacency) instead of DP-CDA.

`ceiling.py` shows that at the demos' size DP-CDA's output carries noisy class means and no
within-class covariance; the GMM release carries class-conditional second moments. This runs
it on the same 80/20 splits and scores it with the same classifier as run.py's utility check.

Each feature is mapped by the demo schema's public [min, max] to [-1/2, 1/2], so every row
lies in the ball of radius B = sqrt(d)/2 (public; `--bound`); the synthetic rows are mapped
back and clamped to the schema's range (post-processing). (digits 8x8 has pixels that are
constant within a class: the default release takes them; only the owner's KL is then
undefined.)

    /path/to/venv/bin/python bench/utility/gmm_demos.py [--privmix PATH] [--reps 10] [--eps 5]
        [--demos iris,digits] [--extra "--pca 16"]

`--extra` adds flags to every `privmix gmm` (e.g. a DP principal subspace, `--pca K`).

Needs numpy and scikit-learn. Every run uses --seed (receipts: "seeded, not for release").
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import ROOT, lr_acc, read_csv, split  # noqa: E402

DEMOS = {
    "iris": ("demo/iris.csv", "species", "demo/iris.schema.json"),
    "digits": ("demo/digits-8x8.csv", "label", "demo/digits-8x8.schema.json"),
}


def one(pm, name, eps, reps, tmp, extra=()):
    path, label, schema = (os.path.join(ROOT, p) if p.endswith((".csv", ".json")) else p
                           for p in DEMOS[name])
    cols = json.load(open(schema))["columns"]
    header, rows = read_csv(path)
    li = header.index(label)
    feat = [h for h in header if h != label]
    fi = [header.index(h) for h in feat]
    lo = np.array([float(cols[h]["min"]) for h in feat])
    hi = np.array([float(cols[h]["max"]) for h in feat])
    accs, reals = [], []
    for rep in range(reps):
        tr, te = split(rows, 0.8, rep)
        x = np.array([[float(r[i]) for i in fi] for r in tr])
        y = [r[li] for r in tr]
        z = (x - lo) / (hi - lo) - 0.5
        inp = os.path.join(tmp, f"{name}-train.csv")
        with open(inp, "w") as f:
            f.write(",".join(feat + [label]) + "\n")
            for zr, yr in zip(z, y):
                f.write(",".join(f"{v:.6f}" for v in zr) + "," + yr + "\n")
        out = os.path.join(tmp, f"{name}-syn.csv")
        p = subprocess.run([pm, "gmm", "--input", inp, "--label", label, "--epsilon", str(eps),
                            "--delta", "1e-5", "--bound", str(0.5 * np.sqrt(len(feat))),
                            # The demos' classes are public (their schemas list them).
                            "--classes", ",".join(sorted(set(r[li] for r in rows))),
                            "--model-out", os.path.join(tmp, "model.json"),
                            "--samples", str(len(tr)), "--output", out,
                            "--receipt", os.path.join(tmp, "receipt.json"),
                            "--seed", str(rep + 1), *extra], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr)
        sh, srows = read_csv(out)
        sl = sh.index(label)
        s = np.array([[float(v) for j, v in enumerate(r) if j != sl] for r in srows])
        xs = np.clip(s + 0.5, 0.0, 1.0) * (hi - lo) + lo
        xt = np.array([[float(r[i]) for i in fi] for r in te])
        yt = [r[li] for r in te]
        accs.append(lr_acc(xs, [r[sl] for r in srows], xt, yt))
        reals.append(lr_acc(x, y, xt, yt))
    return float(np.mean(accs)), float(np.mean(reals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--privmix", default=os.path.join(ROOT, "target", "release", "privmix"))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--eps", type=float, default=5.0)
    ap.add_argument("--demos", default=",".join(DEMOS))
    ap.add_argument("--extra", default="", help="more privmix gmm flags, space-separated")
    a = ap.parse_args()
    print(f"| demo (ε = {a.eps:g}, {a.reps} splits 80/20) | privmix gmm (LR utility check) | real |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.demos.split(","):
            acc, real = one(a.privmix, name, a.eps, a.reps, tmp, a.extra.split())
            print(f"| {name} | {acc:.3f} | {real:.3f} |", flush=True)


if __name__ == "__main__":
    main()
