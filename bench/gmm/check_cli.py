"""End-to-end check of `privmix gmm` the way an outside checker would do it.

For each repetition: draw a GMM dataset as in the paper's §V-A with numpy (K=5, d=3,
N=1000), write it as CSV at full precision, run `privmix gmm` for every noise and both
adjacencies at each ε, then verify from the files alone:
  * the model is valid (symmetric PSD covariances, positive weights summing to 1);
  * the reported kl equals an independent numpy computation of
    KL(released ‖ eq. 2 fit of the CSV) within 1e-6;
  * the receipt's ε ≤ target, and label receipts carry the local-sensitivity warning;
and print the mean KL per (adjacency, ε, noise) with whether `optimized` is below both
i.i.d. baselines.

usage: python check_cli.py PRIVMIX_BINARY [REPS] [EPS,EPS,...]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

WARNING = "local sensitivity: not a worst-case DP guarantee"
NOISES = ["optimized", "iid-gaussian", "iid-laplace", "colored-gaussian"]


def draw(rng, k=5, d=3, n=1000):
    while True:
        w = rng.dirichlet(np.ones(k))
        means = rng.uniform(-10, 10, size=(k, d))
        covs = []
        for _ in range(k):
            a = rng.standard_normal((d, d + 1))
            covs.append(a @ a.T)  # Wishart(I, d+1)
        y = rng.choice(k, size=n, p=w)
        if np.bincount(y, minlength=k).min() >= d + 2:
            break
    x = np.stack([rng.multivariate_normal(means[c], covs[c]) for c in y])
    return x, y


def fit(x, y, classes):
    n = len(y)
    ws, ms, ss = [], [], []
    for c in classes:
        xc = x[y == c]
        ws.append(len(xc) / n)
        ms.append(xc.mean(axis=0))
        ss.append(np.cov(xc, rowvar=False, ddof=1))
    return np.array(ws), ms, ss


def kl_gauss(m1, s1, m0, s0):
    d = len(m0)
    inv0 = np.linalg.inv(s0)
    diff = m0 - m1
    _, ld0 = np.linalg.slogdet(s0)
    _, ld1 = np.linalg.slogdet(s1)
    return 0.5 * (np.trace(inv0 @ s1) + diff @ inv0 @ diff - d + ld0 - ld1)


def kl_gmm(w1, m1, s1, w0, m0, s0):
    return sum(
        w1[k] * (np.log(w1[k] / w0[k]) + kl_gauss(m1[k], s1[k], m0[k], s0[k]))
        for k in range(len(w0))
    )


def main():
    binary = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    eps_list = [float(e) for e in (sys.argv[3] if len(sys.argv) > 3 else "1,2").split(",")]
    rng = np.random.default_rng(2026)
    kls = {}
    worst_kl_err = 0.0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(reps):
            x, y = draw(rng)
            bound = float(np.ceil(np.linalg.norm(x, axis=1).max()))
            class_list = ",".join(f"k{c}" for c in range(5))
            csv = os.path.join(tmp, "data.csv")
            with open(csv, "w") as f:
                f.write("x0,x1,x2,class\n")
                for row, c in zip(x, y):
                    f.write(",".join(repr(float(v)) for v in row) + f",k{c}\n")
            labels = np.array([f"k{c}" for c in y])
            for adjacency in ["record", "label"]:
                for eps in eps_list:
                    for noise in NOISES:
                        model_p = os.path.join(tmp, "m.json")
                        rec_p = os.path.join(tmp, "r.json")
                        out = subprocess.run(
                            [binary, "gmm", "--input", csv, "--label", "class",
                             "--epsilon", str(eps), "--delta", "1e-5", "--noise", noise,
                             # Public here (the checker drew the data): B and the classes.
                             "--bound", str(bound), "--classes", class_list,
                             "--adjacency", adjacency, "--model-out", model_p,
                             "--receipt", rec_p, "--json"],
                            capture_output=True, text=True)
                        if out.returncode != 0:
                            failures.append(f"{adjacency} {eps} {noise}: {out.stderr}")
                            continue
                        summary = json.loads(out.stdout)
                        model = json.load(open(model_p))
                        receipt = json.load(open(rec_p))
                        classes = model["classes"]
                        w1 = np.array(model["weights"])
                        m1 = [np.array(m) for m in model["means"]]
                        s1 = [np.array(s) for s in model["covariances"]]
                        ok = (w1 > 0).all() and abs(w1.sum() - 1) < 1e-9
                        for s in s1:
                            ok &= np.array_equal(s, s.T) and np.linalg.eigvalsh(s).min() > 0
                        w0, m0, s0 = fit(x, labels, classes)
                        kl = kl_gmm(w1, m1, s1, w0, m0, s0)
                        # The KL is private (computed from the data): under "private".
                        err = abs(kl - summary["private"]["kl"])
                        worst_kl_err = max(worst_kl_err, err)
                        ok &= err <= 1e-6
                        ok &= receipt["epsilon"] <= eps and summary["epsilon"] <= eps
                        ok &= (WARNING in receipt["warnings"]) == (adjacency == "label")
                        if not ok:
                            failures.append(f"{adjacency} {eps} {noise}: check failed (kl err {err})")
                        kls.setdefault((adjacency, eps, noise), []).append(summary["private"]["kl"])
    print(f"worst |kl - independent kl| = {worst_kl_err:.3e}")
    print("| adjacency | ε | " + " | ".join(NOISES) + " | optimized below both i.i.d.? |")
    print("|---|---|" + "---|" * len(NOISES) + "---|")
    for adjacency in ["record", "label"]:
        for eps in eps_list:
            means = [np.mean(kls.get((adjacency, eps, n), [np.nan])) for n in NOISES]
            below = means[0] < means[1] and means[0] < means[2]
            print(f"| {adjacency} | {eps} | " + " | ".join(f"{m:.4g}" for m in means)
                  + f" | {'yes' if below else 'NO'} |")
            if not below:
                failures.append(f"{adjacency} {eps}: optimized not below both i.i.d. baselines")
    if failures:
        print("FAILURES:")
        for f in failures[:20]:
            print("  " + f)
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
