#!/usr/bin/env python3
"""CAPE Table 1 layout on mnist-10k: centralized DP-CDA, CAPE and conventional federated
DP-CDA side by side, for eps in {inf, 20, 10} and S in {5, 10, 20}, scored with
`privmix evaluate` (logistic regression) on a held-out real test split.

    python3 bench/federated/run.py [--quick] [--seeds N]

Needs only python3 (standard library) and the release binary (built if missing).
Writes bench/federated/out/table.md and prints it.
"""
import gzip, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.environ.get("PRIVMIX_DATA", os.path.join(os.path.dirname(ROOT), "shared", "data"))
OUT = os.path.join(HERE, "out")
BIN = os.path.join(ROOT, "target", "release", "privmix")
QUICK = "--quick" in sys.argv
SEEDS = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else (1 if QUICK else 2)
# eps = inf is run as a very large target (the noise it calibrates is negligible).
EPS = [("inf", 1e6), ("20", 20.0), ("10", 10.0)]
CLIENTS = [10] if QUICK else [5, 10, 20]
MIX = 4
CLIP = 3.5  # = the federated default for 784 feature columns, max(1, sqrt(784)/8)
# The paper's numbers (CAPE paper Table 1, MNIST, l = 4, S = 10, CNN; Table 2 for centralized;
# Fig. 2 text for S = 5 and 50, eps = inf).
PAPER = {
    ("cape", 10): {"inf": 94.62, "20": 78.08, "10": 78.07},
    ("conventional", 10): {"inf": 81.09, "20": 67.49, "10": 66.19},
    ("conventional", 5): {"inf": 83.23},
    ("centralized", None): {"20": 79.6, "10": 79.5},
}


def sh(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{r.stderr}")
    return r.stdout


def prepare():
    os.makedirs(OUT, exist_ok=True)
    train, test = os.path.join(OUT, "train.csv"), os.path.join(OUT, "test.csv")
    if not (os.path.exists(train) and os.path.exists(test)):
        with gzip.open(os.path.join(DATA, "mnist-10k.csv.gz"), "rt") as f:
            lines = f.read().splitlines()
        header, rows = lines[0], lines[1:]
        # Fixed split: first 8,000 rows train (private), last 2,000 rows held-out test.
        with open(train, "w") as f:
            f.write("\n".join([header] + rows[:8000]) + "\n")
        with open(test, "w") as f:
            f.write("\n".join([header] + rows[8000:]) + "\n")
    return train, test


def accuracy(synth, test):
    return 100.0 * json.loads(sh([BIN, "evaluate", "--train", synth, "--test", test, "--label", "label", "--json"]))["accuracy"]


def main():
    if not os.path.exists(BIN):
        sh(["cargo", "build", "--release", "--manifest-path", os.path.join(ROOT, "Cargo.toml")])
    train, test = prepare()
    syn, rec = os.path.join(OUT, "syn.csv"), os.path.join(OUT, "rec.json")
    res = {}
    t0 = time.time()
    for name, eps in EPS:
        accs = []
        for seed in range(1, SEEDS + 1):
            sh([BIN, "synth", "--input", train, "--label", "label", "--epsilon", str(eps), "--delta", "1e-5",
                "--mix", str(MIX), "--clip", str(CLIP), "--output", syn, "--receipt", rec, "--seed", str(seed)])
            accs.append(accuracy(syn, test))
        res[("centralized", None, name)] = (sum(accs) / len(accs), None)
        for s in CLIENTS:
            for v in ["cape", "conventional"]:
                accs, r = [], None
                for seed in range(1, SEEDS + 1):
                    sh([BIN, "federated", "simulate", "--variant", v, "--clients", str(s), "--input", train,
                        "--label", "label", "--epsilon", str(eps), "--delta", "1e-5", "--mix", str(MIX),
                        "--output", syn, "--receipt", rec, "--seed", str(seed)])
                    accs.append(accuracy(syn, test))
                    r = json.load(open(rec))
                res[(v, s, name)] = (sum(accs) / len(accs), r)
                print(f"[bench] {v:12s} S={s:2d} eps={name:>3s}: {res[(v, s, name)][0]:.2f}%  "
                      f"(receipt eps {r['epsilon']:.3f}, client {r['views']['client']['epsilon']:.3f}, "
                      f"aggregate {r['views']['aggregate']['epsilon']:.3f}, paper claim "
                      f"{r['views']['paper_claim']['epsilon']:.2f}; release noise {r['parameters']['tau_release']:.4f})",
                      file=sys.stderr)
    real = accuracy(train, test)
    lines = []
    lines.append(f"Test accuracy (%), logistic regression trained on the synthetic rows, tested on 2,000 held-out real "
                 f"MNIST rows; l = {MIX}, c = {CLIP}, T = 8,000, δ = 1e-5, mean of {SEEDS} seed(s). "
                 f"Ours / paper (CNN, 60k MNIST). Real-data logistic regression: {real:.2f}%.")
    lines.append("")
    lines.append("| method | S | ε = ∞ (ours / paper) | ε = 20 (ours / paper) | ε = 10 (ours / paper) |")
    lines.append("|---|---|---|---|---|")

    def cell(key, paper_key, name):
        ours = res[key][0]
        p = PAPER.get(paper_key, {}).get(name)
        return f"{ours:.2f} / {p:.2f}" if p is not None else f"{ours:.2f} / –"

    lines.append("| centralized DP-CDA (`synth`) | – | " + " | ".join(cell(("centralized", None, n), ("centralized", None), n) for n, _ in EPS) + " |")
    for s in CLIENTS:
        for v in ["cape", "conventional"]:
            lines.append(f"| {v} | {s} | " + " | ".join(cell((v, s, n), (v, s), n) for n, _ in EPS) + " |")
    lines.append("")
    lines.append("Privacy of the same runs (seed 1 receipts): ε of the aggregator's joint view (the guarantee), "
                 "view (a) one client's message, view (b) the released aggregate, and the paper's Theorem 1 claim.")
    lines.append("")
    lines.append("| method | S | target ε | guarantee ε | client (a) ε | aggregate (b) ε | paper claim ε | p_s | noise left in release |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for s in CLIENTS:
        for v in ["cape", "conventional"]:
            for n, _ in EPS[1:]:
                r = res[(v, s, n)][1]
                w = r["views"]
                lines.append(f"| {v} | {s} | {n} | {r['epsilon']:.3f} | {w['client']['epsilon']:.3f} | "
                             f"{w['aggregate']['epsilon']:.3f} | {w['paper_claim']['epsilon']:.2f} | "
                             f"{w['client']['sampling_rate']:.4f} | {r['parameters']['tau_release']:.4f} |")
    lines.append("")
    lines.append(f"(wall time {time.time() - t0:.0f} s)")
    text = "\n".join(lines)
    open(os.path.join(OUT, "table.md"), "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
