"""Reference optima for privmix's pure-Rust SDP solver (src/mechanisms/gmm/sdp.rs).

Problem (eq. 23 of the DP-GMM paper, with the constraint scaled to 1):
    minimize tr(C X)  subject to  [[1, v_iᵀ], [v_i, X]] ⪰ 0  for every i
(equivalently X ⪰ v_i v_iᵀ). Instances are random (seeded here) and written out in full,
so the Rust test does not depend on this script's random numbers. Solved with cvxpy +
Clarabel (interior point) at tight tolerances and cross-checked with SCS.

usage: python make_gmm_sdp.py > gmm_sdp_reference.json   (needs cvxpy, numpy)
"""
import json

import cvxpy as cp
import numpy as np


def instance(rng, d, m, kind):
    a = rng.standard_normal((d, d))
    c = a @ a.T + 0.1 * np.eye(d)
    if kind == "gaussian":
        vs = rng.standard_normal((m, d)) * (1.0 + np.arange(d))
    elif kind == "cluster":  # label-flip style: (x - mu)/(n-1) and (mu - x)/(n+1)
        x = rng.standard_normal((m, d)) @ rng.standard_normal((d, d))
        mu = x[: m // 2].mean(axis=0)
        vs = np.vstack([(x[: m // 2] - mu) / (m // 2 - 1), (mu - x[m // 2 :]) / (m // 2 + 1)])
    else:  # few points: the optimum touches all of them
        vs = rng.standard_normal((m, d))
    return c, vs


def solve(c, vs, solver):
    d = c.shape[0]
    x = cp.Variable((d, d), symmetric=True)
    cons = [cp.bmat([[np.ones((1, 1)), v.reshape(1, d)], [v.reshape(d, 1), x]]) >> 0 for v in vs]
    prob = cp.Problem(cp.Minimize(cp.trace(c @ x)), cons)
    if solver == "CLARABEL":
        prob.solve(solver=solver, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
                   max_iter=500)
    else:
        prob.solve(solver=solver, eps=1e-9, max_iters=200000)
    return prob.value


def main():
    rng = np.random.default_rng(20261121)
    specs = [(2, 5, "few"), (2, 40, "gaussian"), (3, 3, "few"), (3, 60, "gaussian"),
             (3, 120, "cluster"), (4, 80, "cluster"), (5, 50, "gaussian"), (6, 30, "gaussian")]
    out = []
    for d, m, kind in specs:
        c, vs = instance(rng, d, m, kind)
        ref = solve(c, vs, "CLARABEL")
        scs = solve(c, vs, "SCS")
        assert abs(ref - scs) <= 1e-4 * abs(ref), (ref, scs)
        out.append({"d": d, "kind": kind, "c": c.tolist(), "vs": vs.tolist(),
                    "optimum": ref, "optimum_scs": scs})
    print(json.dumps({"about": "min tr(C X) s.t. X ⪰ v vᵀ; optimum from cvxpy "
                      + cp.__version__ + " + Clarabel, cross-checked with SCS; made by "
                      "tests/reference/make_gmm_sdp.py", "instances": out}, indent=1))


if __name__ == "__main__":
    main()
