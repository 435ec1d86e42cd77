#!/usr/bin/env python3
"""Utility benchmark (issue 12): privmix defaults vs the issue's old numbers vs a plain numpy
DP-CDA at the same (ε, δ), in one run. See README.md in this folder.

    /path/to/venv/bin/python bench/utility/run.py [--privmix target/release/privmix] [--quick]

Needs numpy and scikit-learn. Data from ../shared/data beside the checkout (PRIVMIX_DATA=...).
Every privmix run uses --seed (reproducible; the receipts say "seeded, not for release").
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler
from sklearn.pipeline import make_pipeline

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.environ.get("PRIVMIX_DATA", os.path.join(ROOT, "..", "shared", "data"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

# The measurements (old privmix defaults), for the side-by-side table.
OLD = {
    "iris": "56.7 %",
    "digits": "75.5 %",
    "mnist": "0.634 (Fashion-MNIST 60k, l = 4)",
    "adult1": "acc 0.68, AUC 0.83, TVD1 0.25, TVD2 0.40",
    "adult10": "acc 0.71, AUC 0.85, TVD1 0.28, TVD2 0.45",
    "fed": "CAPE 0.544 < conventional 0.655 (Fashion-MNIST)",
}


def sh(args):
    """Runs args, returns its stdout; exits naming the command and its stderr if it fails."""
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{r.stderr}")
    return r.stdout


def run(cmd):
    t = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + p.stderr)
    return time.time() - t


def read_csv(path):
    import csv
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = [h.strip() for h in next(r)]
        rows = [[c.strip() for c in row] for row in r if row]
    return header, rows


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(row) + "\n")


def synth(pm, inp, label, eps, out, extra=(), seed=1, delta="1e-5"):
    rec = out + ".json"
    run([pm, "synth", "--input", inp, "--label", label, "--epsilon", str(eps), "--delta", delta,
         "--seed", str(seed), "--output", out, "--receipt", rec, *extra,
         *os.environ.get("PRIVMIX_EXTRA", "").split()])
    with open(rec) as f:
        return json.load(f)


def numeric_matrix(header, rows, label, cats=None):
    """One-hot for non-numeric columns (levels from `cats` if given), floats otherwise."""
    li = header.index(label)
    cols = [i for i in range(len(header)) if i != li]
    if cats is None:
        cats = {}
        for i in cols:
            vals = [r[i] for r in rows]
            try:
                [float(v) for v in vals]
            except ValueError:
                cats[i] = sorted(set(vals))
    feats = []
    for i in cols:
        if i in cats:
            lv = {v: k for k, v in enumerate(cats[i])}
            m = np.zeros((len(rows), len(cats[i])))
            for r, row in enumerate(rows):
                k = lv.get(row[i])
                if k is not None:
                    m[r, k] = 1
            feats.append(m)
        else:
            feats.append(np.array([[float(r[i])] for r in rows]))
    return np.hstack(feats), [r[li] for r in rows], cats


def lr_acc(xs, ys, xt, yt):
    m = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    m.fit(xs, ys)
    return float((m.predict(xt) == np.array(yt)).mean())


def split(rows, frac, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(rows))
    k = int(round(len(rows) * frac))
    return [rows[i] for i in idx[:k]], [rows[i] for i in idx[k:]]


def utility_check(pm, name, path, label, eps, tmp, schema=None, reps=3):
    """The app's check: synthesize from 80 %, logistic regression on synthetic, test on 20 %."""
    header, rows = read_csv(path)
    accs, real = [], []
    collapsed = 0
    for rep in range(reps):
        tr, te = split(rows, 0.8, rep)
        trp = os.path.join(tmp, f"{name}-train.csv")
        write_csv(trp, header, tr)
        out = os.path.join(tmp, f"{name}-syn.csv")
        extra = ["--schema", schema] if schema else []
        synth(pm, trp, label, eps, out, extra, seed=rep + 1)
        sh, srows = read_csv(out)
        xs, ys, cats = numeric_matrix(sh, srows, label)
        xt, yt, _ = numeric_matrix(header, te, label, cats)
        xr, yr, _ = numeric_matrix(header, tr, label, cats)
        accs.append(lr_acc(xs, ys, xt, yt))
        real.append(lr_acc(xr, yr, xt, yt))
        li = sh.index(label)
        collapsed += sum(1 for i in range(len(sh)) if i != li and len({r[i] for r in srows}) <= 1)
    return float(np.mean(accs)), float(np.mean(real)), collapsed


# ---- Adult --------------------------------------------------------------------------------

def adult_rows(path, test=False):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("|"):
                continue
            parts = [p.strip() for p in line.split(",")]
            if parts[0] == "age":
                continue
            if len(parts) < 15:
                continue
            parts[-1] = parts[-1].rstrip(".")
            rows.append(parts)
    return rows


ADULT_HEADER = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                "hours-per-week", "native-country", "Y"]
ADULT_NUM = {0, 2, 4, 10, 11, 12}


def adult_bins(train_rows):
    """Per numeric column: 10 quantile bins of the real training data (for TVD)."""
    edges = {}
    for i in ADULT_NUM:
        v = np.array([float(r[i]) for r in train_rows])
        e = np.unique(np.quantile(v, np.linspace(0, 1, 11)))
        edges[i] = e
    return edges


def discretize(rows, edges):
    out = []
    for r in rows:
        o = []
        for i in range(14):
            if i in edges:
                x = float(r[i]) if r[i] not in ("", "?") else np.nan
                o.append(str(int(np.searchsorted(edges[i][1:-1], x, side="right"))))
            else:
                o.append(r[i])
        out.append(o)
    return out


def tvd_marginals(a, b):
    n1 = []
    n2 = []
    from collections import Counter
    na, nb = len(a), len(b)
    for i in range(14):
        ca = Counter(r[i] for r in a)
        cb = Counter(r[i] for r in b)
        keys = set(ca) | set(cb)
        n1.append(0.5 * sum(abs(ca[k] / na - cb[k] / nb) for k in keys))
    for i in range(14):
        for j in range(i + 1, 14):
            ca = Counter((r[i], r[j]) for r in a)
            cb = Counter((r[i], r[j]) for r in b)
            keys = set(ca) | set(cb)
            n2.append(0.5 * sum(abs(ca[k] / na - cb[k] / nb) for k in keys))
    return float(np.mean(n1)), float(np.mean(n2))


def gbm_eval(train_rows, test_rows):
    cats = {}
    for i in range(14):
        if i not in ADULT_NUM:
            cats[i] = sorted({r[i] for r in train_rows} | {r[i] for r in test_rows})

    def mat(rows):
        cols = []
        for i in range(14):
            if i in ADULT_NUM:
                cols.append([float(r[i]) if r[i] not in ("", "?") else np.nan for r in rows])
            else:
                lv = {v: k for k, v in enumerate(cats[i])}
                cols.append([lv.get(r[i], -1) for r in rows])
        x = np.array(cols, dtype=float).T
        x[x < -0.5] = np.nan
        return x

    ytr = np.array([r[14].startswith(">") for r in train_rows])
    yte = np.array([r[14].startswith(">") for r in test_rows])
    xtr, xte = mat(train_rows), mat(test_rows)
    cat_mask = [i not in ADULT_NUM for i in range(14)]
    m = HistGradientBoostingClassifier(categorical_features=cat_mask, random_state=0)
    if len(set(ytr)) < 2:
        return float((yte == ytr[0]).mean()), 0.5
    m.fit(xtr, ytr)
    p = m.predict_proba(xte)[:, 1]
    return float(((p > 0.5) == yte).mean()), float(roc_auc_score(yte, p))


def adult(pm, eps, tmp, seed=1):
    tr = adult_rows(os.path.join(DATA, "adult", "adult.data"))
    te = adult_rows(os.path.join(DATA, "adult", "adult.test"), test=True)
    trp = os.path.join(tmp, "adult-train.csv")
    write_csv(trp, ADULT_HEADER, tr)
    out = os.path.join(tmp, f"adult-syn-{eps}.csv")
    rec = synth(pm, trp, "Y", eps, out, seed=seed)
    _, srows = read_csv(out)
    # privmix reads Adult's '?' as missing and writes missing cells back empty: the same value.
    srows = [[c if c != "" else "?" for c in r] for r in srows]
    acc, auc = gbm_eval(srows, te)
    edges = adult_bins(tr)
    t1, t2 = tvd_marginals(discretize(tr, edges), discretize(srows, edges))
    collapsed = sum(1 for i in range(14) if len({r[i] for r in srows}) <= 1)
    real_acc, real_auc = gbm_eval(tr, te)
    return dict(acc=acc, auc=auc, tvd1=t1, tvd2=t2, real_acc=real_acc, real_auc=real_auc,
                collapsed=collapsed, mix=rec["parameters"].get("mix"))


# ---- MNIST ---------------------------------------------------------------------------------

def mnist(pm, eps, tmp, seed=1):
    with gzip.open(os.path.join(DATA, "mnist-10k.csv.gz"), "rt") as f:
        lines = f.read().splitlines()
    header = lines[0]
    body = lines[1:]
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(body))
    tr = [body[i] for i in idx[:8000]]
    te = [body[i] for i in idx[8000:]]
    trp = os.path.join(tmp, "mnist-train.csv")
    with open(trp, "w") as f:
        f.write(header + "\n" + "\n".join(tr) + "\n")
    label = header.split(",")[0]
    out = os.path.join(tmp, "mnist-syn.csv")
    rec = synth(pm, trp, label, eps, out, seed=seed)
    s = np.genfromtxt(out, delimiter=",", skip_header=1, filling_values=0)  # "" = missing
    hs = open(out).readline().strip().split(",")
    li = hs.index(label)
    ys = s[:, li]
    xs = np.delete(s, li, axis=1)
    t = np.array([[float(v) for v in l.split(",")] for l in te])
    yt, xt = t[:, 0], t[:, 1:]
    r = np.array([[float(v) for v in l.split(",")] for l in tr])
    acc = lr_acc(xs / 255.0, ys, xt / 255.0, yt)
    real = lr_acc(r[:, 1:] / 255.0, r[:, 0], xt / 255.0, yt)
    return dict(acc=acc, real=real, mix=rec["parameters"].get("mix"),
                sigma_x=rec["parameters"].get("sigma_x"), trp=trp, out=out, rec=rec, xt=xt, yt=yt)


def numpy_cda_rescaled(trp, label, sigma_x_unit, mix, seed, xt, yt, rescale=True):
    """The issue's plain numpy DP-CDA: rows scaled to norm 1, mixed, noise, rescaled by the
    mean norm (here: exact, an optimistic baseline), no clamping. sigma_x_unit is σx for
    unit-norm rows at the same (ε, δ) (privmix's calibrated σx)."""
    d = np.loadtxt(trp, delimiter=",", skiprows=1)
    y = d[:, 0].astype(int)
    x = d[:, 1:] / 255.0
    nrm = np.linalg.norm(x, axis=1)
    m = nrm.mean()
    u = x / np.maximum(nrm, 1e-12)[:, None]
    rng = np.random.default_rng(seed)
    outs, labs = [], []
    for k in np.unique(y):
        xk = u[y == k]
        t = len(x) // len(np.unique(y))
        idx = np.array([rng.choice(len(xk), mix, replace=False) for _ in range(t)])
        mixd = xk[idx].mean(axis=1) + rng.normal(0, sigma_x_unit, size=(t, x.shape[1]))
        outs.append(mixd * (m if rescale else 1.0))
        labs += [k] * t
    xs = np.vstack(outs)
    return lr_acc(xs, np.array(labs), xt / 255.0, yt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--privmix", default=os.path.join(ROOT, "target", "release", "privmix"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--reps", type=int, default=3, help="splits (and seeds) for Iris / digits")
    a = ap.parse_args()
    pm = a.privmix
    reps = 1 if a.quick else a.reps
    tmp = tempfile.mkdtemp(prefix="privmix-utility-")
    only = set(a.only.split(",")) if a.only else None
    lines = ["| dataset | metric | privmix now (defaults) | issue (old privmix) | plain numpy DP-CDA | real data |",
             "|---|---|---|---|---|---|"]

    def emit(s):
        lines.append(s)
        print(s, flush=True)

    print("\n".join(lines), flush=True)
    if not only or "iris" in only:
        acc, real, col = utility_check(pm, "iris", os.path.join(DATA, "iris.csv"), "species", 5, tmp,
                                       schema=os.path.join(ROOT, "demo", "iris.schema.json"), reps=reps)
        emit(f"| Iris ε=5 (demo schema) | utility check (LR, 80/20) | {acc:.3f} (collapsed cols: {col}) | {OLD['iris']} | – | {real:.3f} |")
    if not only or "digits" in only:
        acc, real, col = utility_check(pm, "digits", os.path.join(ROOT, "demo", "digits-8x8.csv"), "label", 5, tmp,
                                       schema=os.path.join(ROOT, "demo", "digits-8x8.schema.json"), reps=reps)
        emit(f"| digits 8×8 ε=5 (demo schema) | utility check (LR, 80/20) | {acc:.3f} (collapsed cols: {col}) | {OLD['digits']} | – | {real:.3f} |")
    if not only or "mnist" in only:
        r = mnist(pm, 10, tmp)
        sx = r["sigma_x"]
        np_acc = numpy_cda_rescaled(r["trp"], "label", sx, r["mix"], 1, r["xt"], r["yt"])
        emit(f"| MNIST 8k train / 2k test ε=10 | logistic regression | {r['acc']:.3f} (l = {r['mix']}) | {OLD['mnist']} | {np_acc:.3f} (same l, σx) | {r['real']:.3f} |")
    for eps in (1, 10):
        if only and f"adult{eps}" not in only:
            continue
        r = adult(pm, eps, tmp)
        emit(f"| Adult ε={eps} | GB acc / AUC / TVD1 / TVD2 | {r['acc']:.3f} / {r['auc']:.3f} / {r['tvd1']:.3f} / {r['tvd2']:.3f} (l = {r['mix']}, collapsed {r['collapsed']}) | {OLD[f'adult{eps}']} | – | {r['real_acc']:.3f} / {r['real_auc']:.3f} |")
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
