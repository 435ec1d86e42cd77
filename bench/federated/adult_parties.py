#!/usr/bin/env python3
"""A real federation on Adult: the training rows dealt round-robin to S parties, `federated
keygen` / `contribute` / `aggregate` through the CLI, scored as `bench/utility/run.py` scores
`synth` on Adult (gradient boosting trained on the output, tested on adult.test; mean TVD over
the 1- and 2-way marginals against the training rows; columns that came out constant).

    python3 bench/federated/adult_parties.py [--bin PATH] [--parties 3] [--epsilon 1]
        [--samples 10000] [--pool 500] [--seeds 3]

`--bin` picks the privmix binary (default: target/release/privmix), so two builds can be
compared in one sitting. Needs numpy and scikit-learn (as bench/utility/run.py). Seeded runs:
not for release. Work files go to bench/federated/out/adult-parties (git-ignored).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "utility"))
import run as R  # noqa: E402  (bench/utility/run.py: Adult's reader and scorers, sh)
from run import sh  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "privmix"))
    ap.add_argument("--parties", type=int, default=3)
    ap.add_argument("--epsilon", default="1")
    ap.add_argument("--samples", default="10000")
    ap.add_argument("--pool", default="500")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()
    out = os.path.join(HERE, "out", "adult-parties")
    os.makedirs(out, exist_ok=True)
    train = R.adult_rows(os.path.join(R.DATA, "adult", "adult.data"))
    test = R.adult_rows(os.path.join(R.DATA, "adult", "adult.test"), test=True)
    s = a.parties
    for p in range(s):
        R.write_csv(os.path.join(out, f"party{p + 1}.csv"), R.ADULT_HEADER, train[p::s])
    edges = R.adult_bins(train)
    print(f"| seed | GB accuracy | AUC | mean 1-way TVD | mean 2-way TVD | constant columns |")
    print(f"|---|---|---|---|---|---|")
    for seed in range(1, a.seeds + 1):
        run = os.path.join(out, f"seed{seed}")
        os.makedirs(run, exist_ok=True)
        keys = []
        for p in range(1, s + 1):
            key = os.path.join(run, f"party{p}.key")
            for f in (key, key + ".pub"):
                if os.path.exists(f):
                    os.remove(f)
            sh([a.bin, "federated", "keygen", "--party", str(p), "--out", key, "--seed", str(seed * 100 + p)])
            keys.append(key)
        files = []
        for p in range(1, s + 1):
            peers = ",".join(k + ".pub" for i, k in enumerate(keys) if i != p - 1)
            c = os.path.join(run, f"c{p}.json")
            sh([a.bin, "federated", "contribute", "--party", str(p), "--key", keys[p - 1],
                "--peers", peers, "--input", os.path.join(out, f"party{p}.csv"), "--label", "Y",
                "--epsilon", a.epsilon, "--delta", "1e-5", "--samples", a.samples,
                "--pool", a.pool, "--seed", str(seed * 1000 + p), "--output", c])
            files.append(c)
        syn = os.path.join(run, "out.csv")
        sh([a.bin, "federated", "aggregate", "--inputs", ",".join(files), "--output", syn,
            "--receipt", os.path.join(run, "receipt.json")])
        _, rows = R.read_csv(syn)
        rows = [[c if c != "" else "?" for c in r] for r in rows]
        acc, auc = R.gbm_eval(rows, test)
        t1, t2 = R.tvd_marginals(R.discretize(train, edges), R.discretize(rows, edges))
        constant = sum(1 for i in range(14) if len({r[i] for r in rows}) <= 1)
        print(f"| {seed} | {acc:.4f} | {auc:.4f} | {t1:.4f} | {t2:.4f} | {constant} |", flush=True)


if __name__ == "__main__":
    main()
