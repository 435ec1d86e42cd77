"""DPMix and the baselines side by side with DP-CDA on MNIST-10k (one run, one machine).

    cargo build --release && python3 bench/mechanisms.py [--quick]

Splits ../shared/data/mnist-10k.csv.gz into 8,000 training and 2,000 test rows (fixed
shuffle), runs `privmix synth --mechanism M` on the training rows at each ε, scores the
synthetic data with `privmix evaluate` (logistic regression, tested on the real held-out
rows), and prints a Markdown table: ε reported in the receipt, the noise, the accuracy, and the
synthesis time as a ratio to DP-CDA's time measured in the same run. Normalization is `public`
with the pixel range [0, 255] from a schema, so every ε is spent on the mechanism.
Standard library only.
"""
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("PRIVMIX_DATA", os.path.join(ROOT, "..", "shared", "data"))
BIN = os.path.join(ROOT, "target", "release", "privmix")
QUICK = "--quick" in sys.argv

MECHS = [
    ("cda", ["--mechanism", "cda", "--mix", "4"]),
    ("dpmix l=4", ["--mechanism", "dpmix", "--mix", "4"]),
    ("dpmix l=64", ["--mechanism", "dpmix", "--mix", "64"]),
    ("dpmix l=64 class-wise", ["--mechanism", "dpmix", "--mix", "64", "--class-wise"]),
    ("local", ["--mechanism", "local"]),
    ("projection", ["--mechanism", "projection"]),
]
EPSILONS = [10.0] if QUICK else [10.0, 20.0]


def main():
    with gzip.open(os.path.join(DATA, "mnist-10k.csv.gz"), "rt") as f:
        lines = f.read().splitlines()
    header, body = lines[0], lines[1:]
    random.Random(7).shuffle(body)
    n_train = 2000 if QUICK else 8000
    tmp = tempfile.mkdtemp(prefix="privmix-mech-")
    train = os.path.join(tmp, "train.csv")
    test = os.path.join(tmp, "test.csv")
    with open(train, "w") as f:
        f.write("\n".join([header] + body[:n_train]) + "\n")
    with open(test, "w") as f:
        f.write("\n".join([header] + body[n_train:n_train + 2000]) + "\n")
    cols = header.split(",")
    label = cols[0]
    schema = os.path.join(tmp, "schema.json")
    with open(schema, "w") as f:
        json.dump({"columns": {c: {"type": "numeric", "min": 0, "max": 255, "integer": True}
                               for c in cols[1:]}}, f)
    rows = []
    for eps in EPSILONS:
        base = None
        for name, args in MECHS:
            out = os.path.join(tmp, "syn.csv")
            rec = os.path.join(tmp, "rec.json")
            cmd = [BIN, "synth", "--input", train, "--label", label, "--epsilon", str(eps),
                   "--delta", "1e-5", "--normalize", "public", "--schema", schema,
                   "--output", out, "--receipt", rec, "--json"] + args
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            dt = time.perf_counter() - t0
            if base is None:
                base = dt
            r = json.load(open(rec))
            ev = subprocess.run([BIN, "evaluate", "--train", out, "--test", test, "--label",
                                 label, "--json"], check=True, capture_output=True, text=True)
            acc = json.loads(ev.stdout)["accuracy"]
            p = r["parameters"]
            rows.append((eps, name, r["epsilon"], p["sigma_x"], p.get("sigma_y"),
                         p["noise_multiplier"], acc, dt, dt / base))
    print(f"MNIST-10k: {n_train} training rows, 2000 test rows, δ = 1e-5, public pixel range\n")
    print("| ε target | mechanism | receipt ε | σx | σy | z | logreg accuracy | synth time (s) | time / cda |")
    print("|---|---|---|---|---|---|---|---|---|")
    for eps, name, e, sx, sy, z, acc, dt, ratio in rows:
        sy_s = "" if sy is None else f"{sy:.4f}"
        print(f"| {eps:g} | {name} | {e:.4f} | {sx:.4f} | {sy_s} | {z:.3f} | {acc:.4f} | {dt:.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
