#!/usr/bin/env python3
"""Digits-images demo utility (issue 12): synthesize the app's `digits-images` demo ZIP
(scripts/make-demo-data.mjs: the first 60 images per class of demo/digits-8x8.csv as 8×8 PNGs,
pixels round(v·255/16)) with privmix at its defaults, then measure on the synthetic PNGs:

* corr: per class, Pearson correlation of the synthetic mean image with the real mean image of
  the same class (the 60 input images), averaged over classes;
* own: share of synthetic images whose nearest real class mean (by correlation) is their own
  class (a "recognisable digit" proxy);
* LR: logistic regression trained on the synthetic images, tested on the digits not in the ZIP;
* sat: share of synthetic pixels at 0 or 255.

    python bench/utility/images.py [--privmix target/release/privmix] [--eps 5] [--seeds 1,2,3]

Needs numpy and scikit-learn; every run is seeded (receipts say "seeded, not for release").
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def png_gray(data):
    """Decodes an 8-bit grayscale, non-interlaced PNG (what privmix writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 0, (depth, ctype)
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    out = np.zeros((h, w), dtype=np.float64)
    prev = np.zeros(w, dtype=np.int64)
    for y in range(h):
        f = raw[y * (w + 1)]
        line = np.frombuffer(raw[y * (w + 1) + 1:(y + 1) * (w + 1)], dtype=np.uint8).astype(np.int64)
        cur = np.zeros(w, dtype=np.int64)
        for x in range(w):
            a = cur[x - 1] if x else 0
            b = prev[x]
            c = prev[x - 1] if x else 0
            if f == 0:
                v = line[x]
            elif f == 1:
                v = line[x] + a
            elif f == 2:
                v = line[x] + b
            elif f == 3:
                v = line[x] + (a + b) // 2
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                v = line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)
            cur[x] = v & 255
        out[y] = cur
        prev = cur
    return out.ravel()


def demo_split(per_class=60):
    """The demo ZIP's images (first `per_class` per class) and the remaining digits (test)."""
    with open(os.path.join(ROOT, "demo", "digits-8x8.csv")) as f:
        header = f.readline().strip().split(",")
        rows = [l.strip().split(",") for l in f if l.strip()]
    li = header.index("label")
    seen, train, test = {}, [], []
    for r in rows:
        lab = r[li]
        px = np.array([round(float(v) * 255 / 16) for j, v in enumerate(r) if j != li], dtype=float)
        if seen.get(lab, 0) < per_class:
            seen[lab] = seen.get(lab, 0) + 1
            train.append((lab, px))
        else:
            test.append((lab, px))
    return train, test


def write_zip(path, train):
    """The same ZIP as scripts/make-demo-data.mjs (PNG bytes differ; pixels are equal)."""
    def png(w, h, px):
        raw = b"".join(b"\x00" + bytes(int(v) for v in px[y * w:(y + 1) * w]) for y in range(h))
        def chunk(t, b):
            return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b) & 0xffffffff)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    counts = {}
    with zipfile.ZipFile(path, "w") as z:
        for lab, px in train:
            n = counts.get(lab, 0)
            counts[lab] = n + 1
            z.writestr(f"digits/{lab}/{n:03d}.png", png(8, 8, px))


def read_zip(path):
    out = []
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            if name.endswith(".png"):
                out.append((name.split("/")[-2], png_gray(z.read(name))))
    return out


def measure(syn, train, test):
    from sklearn.linear_model import LogisticRegression
    classes = sorted({l for l, _ in train})
    real_mean = {k: np.mean([p for l, p in train if l == k], axis=0) for k in classes}
    corrs = []
    for k in classes:
        s = [p for l, p in syn if l == k]
        if s:
            corrs.append(np.corrcoef(np.mean(s, axis=0), real_mean[k])[0, 1])
    def nearest(p):
        return max(classes, key=lambda k: np.corrcoef(p, real_mean[k])[0, 1] if p.std() > 0 else -2)
    own = float(np.mean([nearest(p) == l for l, p in syn]))
    xs = np.array([p for _, p in syn]) / 255
    ys = [l for l, _ in syn]
    m = LogisticRegression(max_iter=3000).fit(xs, ys)
    xt = np.array([p for _, p in test]) / 255
    lr = float((m.predict(xt) == np.array([l for l, _ in test])).mean())
    allpx = np.concatenate([p for _, p in syn])
    sat = float(np.mean((allpx <= 0) | (allpx >= 255)))
    return float(np.mean(corrs)), own, lr, sat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--privmix", default=os.path.join(ROOT, "target", "release", "privmix"))
    ap.add_argument("--eps", default="5")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--per-class", type=int, default=60, help="images per class in the ZIP (the demo: 60)")
    a = ap.parse_args()
    train, test = demo_split(a.per_class)
    tmp = tempfile.mkdtemp(prefix="privmix-images-")
    zp = os.path.join(tmp, "digits-images.zip")
    write_zip(zp, train)
    print("| seed | l | σx | corr(mean, real mean) | own-class nearest | LR on held-out digits | saturated px |")
    print("|---|---|---|---|---|---|---|")
    res = []
    for seed in a.seeds.split(","):
        out, rec = os.path.join(tmp, "syn.zip"), os.path.join(tmp, "syn.json")
        p = subprocess.run([a.privmix, "synth", "--input", zp, "--epsilon", a.eps, "--delta", "1e-5",
                            "--seed", seed, "--output", out, "--receipt", rec,
                            *os.environ.get("PRIVMIX_EXTRA", "").split()], capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr)
        par = json.load(open(rec))["parameters"]
        r = measure(read_zip(out), train, test)
        res.append(r)
        print(f"| {seed} | {par['mix']} | {par['sigma_x']:.3f} | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.3f} |", flush=True)
    m = np.mean(res, axis=0)
    print(f"| mean | | | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.3f} | {m[3]:.3f} |")


if __name__ == "__main__":
    main()
