#!/usr/bin/env python3
"""privmix speed, memory and calibration benchmarks (driven by bench/run.sh).

usage: bench.py speed OUTDIR [--quick]     synthesis speed + peak memory (tables 1-2)
       bench.py calib OUTDIR [--quick]     calibration speed + ε cross-check (table 3)

Every measurement is compared with a baseline measured in the same run and reported as a
ratio. Writes OUTDIR/<name>.md and OUTDIR/<name>.json and prints the Markdown.
"""

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PRIVMIX = os.path.join(ROOT, "target", "release", "privmix")
CORE_TIMER = os.path.join(ROOT, "target", "release", "privmix-core-timer")
PY = sys.executable
ENV1 = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
            RAYON_NUM_THREADS="1")
# privmix uses every core (rayon) unless PRIVMIX_BENCH_THREADS says otherwise; numpy stays
# single-threaded (ENV1): the baseline is plain vectorized numpy.
ENV_ALL = {k: v for k, v in os.environ.items() if k != "RAYON_NUM_THREADS"}
if os.environ.get("PRIVMIX_BENCH_THREADS"):
    ENV_ALL["RAYON_NUM_THREADS"] = os.environ["PRIVMIX_BENCH_THREADS"]
THREADS = int(ENV_ALL.get("RAYON_NUM_THREADS") or os.cpu_count() or 1)


def sh(args, env=None, **kw):
    r = subprocess.run(args, capture_output=True, text=True, env=env or ENV1, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(args)}")
    return r


def timed_rss(args):
    """(wall seconds, max RSS bytes, stdout) of one privmix run under GNU time."""
    r = sh(["/usr/bin/time", "-f", "@@TIME %e %M"] + args, env=ENV_ALL)
    line = [l for l in r.stderr.splitlines() if l.startswith("@@TIME")][-1]
    _, wall, rss_kb = line.split()
    return float(wall), int(rss_kb) * 1024, r.stdout


def write(outdir, name, md, data):
    with open(os.path.join(outdir, name + ".md"), "w") as f:
        f.write(md)
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(data, f, indent=1)
    print(md)


def speed(outdir, quick):
    reps = 1 if quick else 3
    inp = os.path.join(outdir, "mnist60k.csv")
    n, d, t = 60000, 784, 60000
    common = ["--input", inp, "--label", "label", "--seed", "1", "--epsilon", "10",
              "--delta", "1e-5", "--mix", "4", "--json"]
    out_csv = os.path.join(outdir, "privmix60k.csv")
    e2e, rss = [], []
    for _ in range(reps):
        w, m, so = timed_rss([PRIVMIX, "synth"] + common +
                             ["--output", out_csv, "--receipt", out_csv + ".receipt.json"])
        e2e.append(w)
        rss.append(m)
    summary = json.loads(so)
    sigma = summary["sigma_x"]
    # Parse/setup cost: the same run with T = K = 10 synthetic rows.
    setup = []
    for _ in range(reps):
        w, _, _ = timed_rss([PRIVMIX, "synth"] + common +
                            ["--samples", "10", "--output", out_csv + ".k",
                             "--receipt", out_csv + ".k.json"])
        setup.append(w)
    # Library-level core (data in memory): bench/core_timer.
    ct = json.loads(sh([CORE_TIMER, inp, "label", "4", repr(sigma), str(t), "1",
                        str(max(reps, 3))], env=ENV_ALL).stdout)
    # The same on one thread, for the scaling.
    ct1 = json.loads(sh([CORE_TIMER, inp, "label", "4", repr(sigma), str(t), "1",
                         str(max(reps, 3))], env=ENV1).stdout)
    # numpy baseline, same T, l, σ.
    npj = json.loads(sh([PY, os.path.join(HERE, "numpy_cda.py"), "--input", inp, "--label",
                         "label", "--mix", "4", "--sigma", repr(sigma), "--samples", str(t),
                         "--seed", "1", "--output", os.path.join(outdir, "numpy60k.csv"),
                         "--repeat-core", str(max(reps, 3))]).stdout)
    p_e2e = statistics.median(e2e)
    p_setup = statistics.median(setup)
    p_gen_write = p_e2e - p_setup
    np_gen_write = npj["core_s"] + npj["write_s"]
    rows = [
        ("end-to-end (parse → CSV written)", npj["end_to_end_s"], p_e2e,
         "privmix: `synth` wall time, median of %d (incl. DP normalization, calibration, receipt, fsync); numpy: load + core + write" % reps),
        ("core, data in memory (normalize+clip+mix+noise)", npj["core_s"], ct["core_s"],
         "privmix: library calls via bench/core_timer (encode+clip %.3f s, generate %.3f s), min of %d; numpy: min of %d" % (
             ct["encode_clip_s"], ct["generate_s"], max(reps, 3), max(reps, 3))),
        ("core + output formatting/writing", np_gen_write, p_gen_write,
         "privmix: e2e − (same run with `--samples 10`, %.2f s) ≈ mixing + decode + CSV write; numpy: core + np.savetxt" % p_setup),
        ("CSV parse / load", npj["load_s"], ct["load_s"],
         "privmix: `read_csv_path` in core_timer; numpy: np.loadtxt float32"),
        ("core on 1 thread (context)", npj["core_s"], ct1["core_s"],
         "privmix: as *core* with RAYON_NUM_THREADS=1 (encode+clip %.3f s, generate %.3f s)" % (
             ct1["encode_clip_s"], ct1["generate_s"])),
    ]
    md = ["### Synthesis speed: 60,000 × 784 (MNIST-10k tiled 6×), T = 60,000, l = 4, ε = 10, δ = 1e-5, σx = %.6f; privmix on %d threads, numpy on 1\n" % (sigma, THREADS),
          "| measurement | numpy (s) | privmix (s) | numpy / privmix | target | how measured |",
          "|---|---:|---:|---:|---|---|"]
    data = {"sigma": sigma, "privmix_e2e_runs": e2e, "privmix_setup_runs": setup,
            "core_timer": ct, "core_timer_1thread": ct1, "threads": THREADS, "numpy": npj,
            "rows": []}
    for name, a, b, how in rows:
        ratio = a / b
        goal = 10 if name.startswith("end-to-end") else 5
        target = "≥ %d×: %s" % (goal, "met" if ratio >= goal else "NOT met")
        if name.startswith("CSV") or "context" in name:
            target = "(info)"
        md.append(f"| {name} | {a:.3f} | {b:.3f} | {ratio:.2f}× | {target} | {how} |")
        data["rows"].append({"name": name, "numpy_s": a, "privmix_s": b, "ratio": ratio})
    inout = (n * (d + 1) + t * (d + 1)) * 4
    peak = max(rss)
    md += ["",
           "### Peak memory of `privmix synth` (same run)\n",
           "| max RSS (MB) | (input + output) at f32 (MB) = (N·(d+1) + T·(d+1))·4 | ratio | target ≤ 1.5× |",
           "|---:|---:|---:|---|",
           f"| {peak / 1e6:.1f} | {inout / 1e6:.1f} | {peak / inout:.3f} | {'met' if peak / inout <= 1.5 else 'NOT met'} |",
           ""]
    data["peak_rss_bytes"] = peak
    data["inout_bytes"] = inout
    write(outdir, "speed", "\n".join(md) + "\n", data)


def calib(outdir, quick):
    reps = 5 if quick else 20
    args = [PRIVMIX, "calibrate", "--mechanism", "cda", "--pool", "6000", "--mix", "4",
            "--clip", "1", "--samples", "60000", "--delta", "1e-5", "--epsilon", "10", "--json"]
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = sh(args)
        times.append(time.perf_counter() - t0)
    c = json.loads(r.stdout)
    z = c["noise_multiplier"]
    import dp_accounting as dpa
    from dp_accounting import rdp
    t0 = time.perf_counter()
    acc = rdp.RdpAccountant(orders=list(range(2, 257)),
                            neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    ev = dpa.SampledWithoutReplacementDpEvent(source_dataset_size=6000, sample_size=4,
                                              event=dpa.GaussianDpEvent(z))
    acc.compose(ev, 60000)
    eps_dpa = acc.get_epsilon(1e-5)
    t_dpa = time.perf_counter() - t0
    t_pm = statistics.mean(times)
    import importlib.metadata
    dpa_version = importlib.metadata.version("dp-accounting")
    # Context: one privmix ε evaluation (`account`) at the calibrated σx, process wall.
    acc_args = [PRIVMIX, "account", "--mechanism", "cda", "--pool", "6000", "--mix", "4",
                "--clip", "1", "--samples", "60000", "--delta", "1e-5",
                "--sigma-x", repr(c["sigma_x"]), "--json"]
    acc_times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sh(acc_args)
        acc_times.append(time.perf_counter() - t0)
    t_acc = statistics.mean(acc_times)
    diff = abs(c["epsilon"] - eps_dpa)
    md = ["### Calibration speed: pool 6,000, l = 4, c = 1, T = 60,000, δ = 1e-5, target ε = 10 (label-free, preset default)\n",
          "| privmix `calibrate` (full σ search, process wall, mean of %d) | dp_accounting: ONE ε evaluation at privmix's z | dp_accounting / privmix | target ≥ 100× |" % reps,
          "|---:|---:|---:|---|",
          f"| {t_pm * 1e3:.1f} ms (min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}) | {t_dpa * 1e3:.0f} ms | {t_dpa / t_pm:.1f}× | {'met' if t_dpa / t_pm >= 100 else 'NOT met'} |",
          "",
          f"For context: `privmix account` (one ε evaluation at that σx, both presets, process wall, mean of {reps}) takes {t_acc * 1e3:.1f} ms, "
          f"{t_dpa / t_acc:.1f}× faster than the one dp_accounting evaluation.",
          "",
          "| z (noise multiplier) | σx | ε privmix (order) | ε dp_accounting | abs. diff | rel. diff |",
          "|---:|---:|---:|---:|---:|---:|",
          f"| {z:.12g} | {c['sigma_x']:.12g} | {c['epsilon']:.15g} ({c['order']}) | {eps_dpa:.15g} | {diff:.3g} | {diff / eps_dpa:.3g} |",
          "",
          f"dp_accounting {dpa_version}: `RdpAccountant(orders=range(2,257), neighboring_relation=REPLACE_ONE)`, "
          "`compose(SampledWithoutReplacementDpEvent(6000, 4, GaussianDpEvent(z)), 60000)`, `get_epsilon(1e-5)`; "
          "its time includes building the accountant. privmix's time is the whole process (start-up, argument parsing, the search for σ and JSON output).",
          ""]
    write(outdir, "calib", "\n".join(md) + "\n",
          {"privmix_runs_s": times, "account_runs_s": acc_times, "privmix": c, "dpa_s": t_dpa, "eps_dpa": eps_dpa})


if __name__ == "__main__":
    what, outdir = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv[3:]
    {"speed": speed, "calib": calib}[what](outdir, quick)
