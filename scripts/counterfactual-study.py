#!/usr/bin/env python3
"""Job by job: a counterfactual run kept by GPUPROF_FIDELITY_KEEP.

usage: counterfactual-study.py KEEPDIR [GPUS] [FROM]

KEEPDIR is one run that scripts/fidelity-counterfactual.sh kept (with
GPUPROF_FIDELITY_KEEP=DIR: DIR/6gpus, DIR/8gpus, ...), GPUS its node's GPUs
(default: the number in its name). FROM, another kept run of the same
workload, adds the prediction of this run from FROM's records (its
whatif.json's changed.job_starts, the jobs matched by submission order, as
e2e/counterfactual_test.go matches them) and each job's run time there.

From slurmctld.log (millisecond times): each job's submission, its start
and which scheduler started it (sched: Allocate, the main scheduler;
"Started JobId", backfill), its end. From those, the node's free GPUs over
time, and per job the moment enough GPUs were free for it and it had
arrived ("ready"), the gap to its real start, and the gap from the last
end before its start. Beside them, the job's wait: real, this run's own
replay (whatif.json baseline.job_starts, the median over the seeds), and
the prediction from FROM (the summary takes its statistics of the per-job
medians; the test, the median over the seeds of each statistic). Ends
with the summary docs/whatif.md quotes
("Full runs, 2026-12-07").
"""
import datetime as dt
import json
import math
import re
import statistics as st
import sys


def ts(s):
    return dt.datetime.fromisoformat(s.replace("Z", "")).replace(tzinfo=dt.timezone.utc).timestamp()


def median_seed(v):
    v = sorted(x for x in v if x is not None)
    return v[(len(v) - 1) // 2] if v else None


def nearest_rank(v, p):
    v = sorted(v)
    return v[max(1, math.ceil(p / 100 * len(v))) - 1]


def read_log(run):
    sub, start, how, end = {}, {}, {}, {}
    for line in open(f"{run}/slurmctld.log"):
        m = re.match(r"\[(\S+)\] (.*)", line)
        if not m:
            continue
        t, msg = ts(m.group(1)), m.group(2)
        if j := re.search(r"_slurm_rpc_submit_batch_job: JobId=(\d+)", msg):
            sub[int(j.group(1))] = t
        elif j := re.search(r"sched: Allocate JobId=(\d+)", msg):
            start[int(j.group(1))], how[int(j.group(1))] = t, "main"
        elif j := re.search(r"Started JobId=(\d+)", msg):
            start[int(j.group(1))], how[int(j.group(1))] = t, "bf"
        elif j := re.search(r"_job_complete: JobId=(\d+) WEXITSTATUS", msg):
            end[int(j.group(1))] = t
    return sub, start, how, end


def read_sacct(run):
    """Per job: partition, account, GPUs and elapsed seconds."""
    out = {}
    for line in open(f"{run}/sacct.txt"):
        f = line.rstrip("\n").split("|")
        if len(f) < 13 or not f[0].isdigit():
            continue
        g = re.search(r"gres/gpu=(\d+)", f[10])
        h, m, s = (int(x) for x in f[8].split(":")[-3:])
        out[int(f[0])] = dict(part=f[3], acct=f[2], gpus=int(g.group(1)) if g else 0, run=h * 3600 + m * 60 + s)
    return out


def ready_at(j, gpus, sub, start, events, ngpus):
    """The moment from which at least gpus[j] GPUs stayed free until j's
    start (its own start left out), not before its submission."""
    free, since = ngpus, sub[j]
    for t, d in events:
        if t >= start[j]:
            break
        free += d
        if free < gpus[j]:
            since = None
        elif since is None:
            since = t
    return max(since if since is not None else start[j], sub[j])


def main():
    run = sys.argv[1].rstrip("/")
    ngpus = int(sys.argv[2]) if len(sys.argv) > 2 else int(re.search(r"(\d+)gpus", run).group(1))
    other = sys.argv[3].rstrip("/") if len(sys.argv) > 3 else None
    frm = ts(open(f"{run}/window.txt").read().split()[0])
    sub, start, how, end = read_log(run)
    sa = read_sacct(run)
    gpus = {j: sa[j]["gpus"] for j in sa}
    base = {int(j["job_id"]): j for j in json.load(open(f"{run}/whatif.json"))["baseline"]["job_starts"]}
    pred, orun = {}, {}
    if other:
        ow = json.load(open(f"{other}/whatif.json"))
        osa = read_sacct(other)
        for a, b in zip(sorted(base), sorted(ow["changed"]["job_starts"], key=lambda j: int(j["job_id"]))):
            pred[a] = median_seed(b["replayed_start_s"]) - b["arrival_s"]
            orun[a] = osa[int(b["job_id"])]["run"]
    events = sorted([(start[j], -gpus[j]) for j in start] + [(end[j], gpus[j]) for j in end])
    print("job part   acct  g  sub(s) start(s) by   ready(s) gap  end→start | wait: real own-replay predicted | run, run in FROM")
    gaps, endgaps, rows = [], [], []
    for j in sorted(sub):
        if j not in start:
            continue
        r = ready_at(j, gpus, sub, start, events, ngpus)
        last = max((end[k] for k in end if end[k] <= start[j]), default=None)
        eg = start[j] - last if last is not None and last >= sub[j] else None
        b = base[j]
        real = b["real_start_s"] - b["arrival_s"]
        own = median_seed(b["replayed_start_s"]) - b["arrival_s"]
        gaps.append(start[j] - r)
        if eg is not None:
            endgaps.append(eg)
        rows.append((sa[j]["part"], real, own, pred.get(j)))
        print(f"{j:3d} {sa[j]['part']:6s} {sa[j]['acct']:5s} {gpus[j]} {sub[j] - frm:7.2f} {start[j] - frm:7.2f} {how[j]:4s} "
              f"{r - frm:7.2f} {start[j] - r:6.2f} {'' if eg is None else f'{eg:6.2f}':>6s} | {real:4.0f} {own:4.0f} "
              f"{'' if j not in pred else f'{pred[j]:4.0f}':>4s} | {sa[j]['run']:3d} {orun.get(j, '')}")
    print(f"\n{len(rows)} jobs started, {sum(h == 'bf' for h in how.values())} by backfill")
    if endgaps:
        e = sorted(endgaps)
        print(f"{len(e)} started behind an end after their submission; end → start: median {st.median(e):.2f} s, "
              f"p90 {e[int(0.9 * (len(e) - 1))]:.2f} s, max {e[-1]:.2f} s")
    g = sorted(gaps)
    print(f"GPUs free → start: median {st.median(g):.2f} s, max {g[-1]:.2f} s; over 1 s: {sum(x > 1 for x in g)} jobs")
    if orun:
        d = [sa[j]["run"] - orun[j] for j in orun]
        print(f"run time here − in FROM: {min(d)} to {max(d)} s per job, {sum(d)} s in all")
    for part in sorted({r[0] for r in rows}):
        v = [r for r in rows if r[0] == part]
        cols = [("real", 1), ("own replay", 2)] + ([("predicted", 3)] if pred else [])
        print(f"{part:6s} {len(v)} jobs: " + "; ".join(
            f"{name} mean {st.mean(x[k] for x in v):.1f} p50 {nearest_rank([x[k] for x in v], 50):.0f} "
            f"p95 {nearest_rank([x[k] for x in v], 95):.0f}" for name, k in cols))


if __name__ == "__main__":
    main()
