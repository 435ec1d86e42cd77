"""Independent ground truth for privmix's DPMix and baseline accounting.

Uses Google's dp_accounting (pip install dp-accounting; generated with version 0.6.0), not
privmix code. For each case we build the DpEvent the mechanism is:

* DPMix (SPEC §1.2): T-fold composition of a size-l sample without replacement from n rows
  followed by a Gaussian with noise multiplier z = l/Δ, Δ² = dx/σx² + dy/σy²:
  SelfComposedDpEvent(SampledWithoutReplacementDpEvent(n, l, GaussianDpEvent(z)), T)
* local perturbation / projection (SPEC §1.5): one Gaussian step with z = σ/(2c), either on
  every row (GaussianDpEvent) or on a size-T sample without replacement of the n rows.

and account it with RdpAccountant(orders 2..=256, NeighborRel.REPLACE_ONE), which uses WBK
2019 Theorem 27 and the improved conversion (Balle et al. 2020, Prop. 12): privmix's
`default` preset. Run: python3 tests/reference/make_dpmix.py > tests/reference/dpmix_reference.json
"""
import json
import math

import dp_accounting
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp

ORDERS = list(range(2, 257))
REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE

# (name, n, l, dx, dy, sigma_x, sigma_y, T, delta)
DPMIX = [
    ("thesis-mnist", 60000, 256, 784, 10, 0.0711, 0.0711, 10000, 1 / 60000),
    ("thesis-classwise-n", 6000, 128, 784, 10, 1.0, 1.0, 12000, 1 / 6000),
    ("digits-like", 10000, 16, 64, 10, 0.5, 0.5, 10000, 1e-5),
    ("adult-like", 32561, 8, 100, 2, 1.5, 3.0, 32561, 1e-5),
    ("iris-like", 150, 4, 4, 3, 0.8, 1.2, 150, 1e-3),
    ("small-pool", 1000, 50, 20, 5, 0.3, 0.3, 500, 1e-6),
    ("mnist-l64", 60000, 64, 784, 10, 2.0, 2.0, 60000, 1e-5),
]

# (name, n, T, clip, sigma, delta): one Gaussian step per released row.
LOCAL = [
    ("all-rows", 1000, 1000, 1.0, 4.0, 1e-5),
    ("all-rows-loud", 500, 500, 0.5, 10.0, 1e-6),
    ("half-rows", 1000, 500, 1.0, 4.0, 1e-5),
    ("tenth-rows", 20000, 2000, 2.0, 6.0, 1e-5),
]


def account(event, delta):
    acc = rdp.RdpAccountant(orders=ORDERS, neighboring_relation=REPLACE_ONE)
    acc.compose(event)
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    return float(eps), int(order), [float(r) for r in acc._rdp]


def classic_eps(rdp_values, delta, max_order):
    best = math.inf
    for a, r in zip(ORDERS, rdp_values):
        if a <= max_order:
            best = min(best, r + math.log(1 / delta) / (a - 1))
    return best


out = {
    "about": "dp_accounting %s; RdpAccountant(orders 2..=256, REPLACE_ONE); see make_dpmix.py"
    % getattr(dp_accounting, "__version__", "0.6.0"),
    "dpmix": [],
    "local": [],
}
for name, n, l, dx, dy, sx, sy, t, delta in DPMIX:
    big_delta = math.sqrt(dx / sx**2 + dy / sy**2)
    z = l / big_delta
    ev = dp_event.SelfComposedDpEvent(
        dp_event.SampledWithoutReplacementDpEvent(n, l, dp_event.GaussianDpEvent(z)), t
    )
    eps, order, curve = account(ev, delta)
    out["dpmix"].append(
        dict(name=name, pool=n, mix=l, dim_x=dx, dim_y=dy, sigma_x=sx, sigma_y=sy, samples=t,
             delta=delta, noise_multiplier=z, epsilon=eps, order=order,
             rdp_at={str(a): curve[a - 2] for a in (2, 8, 32, 128, 256)},
             # Thm 27 + classic conversion over orders <= 100, for orientation only.
             epsilon_thm27_classic_orders_le_100=classic_eps(curve, delta, 100))
    )
for name, n, t, c, s, delta in LOCAL:
    z = s / (2 * c)
    g = dp_event.GaussianDpEvent(z)
    ev = g if t == n else dp_event.SampledWithoutReplacementDpEvent(n, t, g)
    eps, order, curve = account(ev, delta)
    out["local"].append(dict(name=name, rows=n, samples=t, clip=c, sigma=s, delta=delta,
                             noise_multiplier=z, epsilon=eps, order=order))
print(json.dumps(out, indent=1))
