#!/usr/bin/env python3
"""The counterfactual table again, from kept records, with a given build.

usage: counterfactual-table.py KEEPDIR [GPUPROF]

KEEPDIR is what scripts/fidelity-counterfactual.sh kept with
GPUPROF_FIDELITY_KEEP=KEEPDIR (8gpus, 6gpus and, from a full run,
8gpus-again, 6gpus-again: each with gpuprof.db, slurm.conf, gres.conf and
window.txt). GPUPROF (default bin/gpuprof) replays each direction from the
kept records as the test does (whatif --json --job-starts --seeds 3 over
the window, --remove=2xgpu from 8gpus, --add=2xgpu from 6gpus) and the
table lines are the test's (e2e/counterfactual_test.go): per partition
mean, p50 and p95 wait, real | predicted | the other run, the prediction
the median over the seeds of each statistic, the bar the larger of 15 %,
30 s and Slurm's own spread between the two kept runs of the cluster
predicted; then Spearman's rho of the start order. So a change to the
replay can be judged on Slurm's real runs without running Slurm again.
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def nearest_rank(s, p):
    return s[max(1, math.ceil(p / 100 * len(s))) - 1]


def stats(w):
    if not w:
        return [0.0, 0.0, 0.0]
    s = sorted(w)
    return [sum(s) / len(s), nearest_rank(s, 50), nearest_rank(s, 95)]


def replay(gp, run, change):
    since, until = open(os.path.join(run, "window.txt")).read().split()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = os.path.join(tmp, "gpuprof.toml")
        with open(cfg, "w") as f:
            f.write(f'db = "{os.path.abspath(os.path.join(run, "gpuprof.db"))}"\n')
            f.write(f'slurm_conf = "{os.path.abspath(os.path.join(run, "slurm.conf"))}"\n')
            f.write(f'log_file = "{os.path.join(tmp, "gpuprof.log")}"\n')
        args = [gp, "whatif", "--config", cfg, "--json", "--job-starts", "--seeds", "3", "--since", since, "--until", until]
        if change:
            args.append(change)
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def real_waits(js):
    out = {}
    for j in js:
        if j["real_start_s"] is None:
            continue
        w = j["real_start_s"] - j["arrival_s"]
        for p in (j["partition"], "all"):
            out.setdefault(p, []).append(w)
    return out


def pred_stats(js, p):
    seeds = {}
    for j in js:
        if p not in (j["partition"], "all"):
            continue
        for s, st in enumerate(j["replayed_start_s"]):
            if st is not None:
                seeds.setdefault(s, []).append(st - j["arrival_s"])
    per = [stats(w) for w in seeds.values()]
    out = []
    for k in range(3):
        v = sorted(x[k] for x in per)
        out.append(v[(len(v) - 1) // 2] if v else 0.0)
    return out


def ranks(v):
    idx = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and v[idx[j + 1]] == v[idx[i]]:
            j += 1
        for k in range(i, j + 1):
            r[idx[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    x, y = zip(*[(p, q) for p, q in zip(a, b) if p is not None and q is not None])
    rx, ry = ranks(x), ranks(y)
    n = len(rx)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((p - mx) * (q - my) for p, q in zip(rx, ry))
    sxx = sum((p - mx) ** 2 for p in rx)
    syy = sum((q - my) ** 2 for q in ry)
    return sxy / math.sqrt(sxx * syy)


def median_start(j):
    v = sorted(s for s in j["replayed_start_s"] if s is not None)
    return v[(len(v) - 1) // 2] if v else None


def main():
    keep = sys.argv[1]
    gp = sys.argv[2] if len(sys.argv) > 2 else "bin/gpuprof"
    runs = {}
    for name, change in (("8gpus", "--remove=2xgpu"), ("6gpus", "--add=2xgpu")):
        w = replay(gp, os.path.join(keep, name), change)
        runs[name] = (w["baseline"]["job_starts"], w["changed"]["job_starts"])
    spread = {}
    for name in ("8gpus", "6gpus"):
        again = os.path.join(keep, name + "-again")
        if os.path.isdir(again):
            w = replay(gp, again, "")
            a, b = real_waits(runs[name][0]), real_waits(w["baseline"]["job_starts"])
            spread[name] = {p: [abs(x - y) for x, y in zip(stats(a[p]), stats(b.get(p, [])))] for p in a}
    for src, dst, label in (("8gpus", "6gpus", "8 GPUs --remove=2xgpu -> 6 GPUs"), ("6gpus", "8gpus", "6 GPUs --add=2xgpu -> 8 GPUs")):
        real, pred, today = real_waits(runs[dst][0]), runs[src][1], real_waits(runs[src][0])
        print(f"{label} (waits in s: real | predicted | the other run itself; apart / bar):")
        for p in ("gpu", "urgent", "all"):
            if p not in real:
                continue
            rs, ps, ts = stats(real[p]), pred_stats(pred, p), stats(today[p])
            cells = []
            for k, stat in enumerate(("mean", "p50", "p95")):
                bar = max(0.15 * rs[k], 30, spread.get(dst, {}).get(p, [0, 0, 0])[k])
                miss = "**" if abs(ps[k] - rs[k]) > bar else ""
                cells.append(f"{stat} {rs[k]:.1f} | {ps[k]:.1f} | {ts[k]:.1f} ({miss}{abs(ps[k] - rs[k]):.1f} / {bar:.1f}{miss})")
            print(f"  {p:6} {len(real[p]):2} jobs: " + ";  ".join(cells))
        rho = spearman([median_start(j) for j in pred], [j["real_start_s"] for j in runs[dst][0]])
        print(f"  start order rank correlation, predicted vs real: {rho:.3f}")
    for name in ("8gpus", "6gpus"):
        base = runs[name][0]
        real = real_waits(base)
        own = pred_stats(base, "gpu")
        print(f"{name} own replay (no change), gpu: real mean/p50/p95 {stats(real['gpu'])}, replayed {own}")


if __name__ == "__main__":
    main()
