#!/usr/bin/env python3
"""Adult over several seeds: mean ± standard error of run.py's Adult figures.

    /path/to/venv/bin/python bench/utility/adult_seeds.py PRIVMIX_BIN EPSILON SEEDS

Extra synth flags go in PRIVMIX_EXTRA (e.g. PRIVMIX_EXTRA="--normalize-share 0.3"), as for
run.py. Each run uses --seed 1..SEEDS (receipts say "seeded, not for release").
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as R  # noqa: E402

pm, eps, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
tmp = tempfile.mkdtemp()
res = [R.adult(pm, eps, tmp, seed=s) for s in range(1, n + 1)]
print(f"Adult ε = {eps}, seeds 1..{n}, extra flags: {os.environ.get('PRIVMIX_EXTRA', '') or '(none)'}")
for k in ["acc", "auc", "tvd1", "tvd2"]:
    v = np.array([r[k] for r in res])
    print(f"{k} {v.mean():.4f} ± {v.std() / np.sqrt(len(v)):.4f}", end="  ")
print()
