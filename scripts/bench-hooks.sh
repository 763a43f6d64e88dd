#!/usr/bin/env bash
# bench-hooks.sh BIN [N] [HOOK_BIN [BASE_HOOK_BIN]]: prolog and epilog latency, direct and
# through the contrib/slurm wrappers (what slurmd really runs), side by side
# with /bin/true and `python3 -c pass` in one interleaved run. With HOOK_BIN
# (gpuprof-hook, the thin hook; gpuprof-hook-full beside it takes its
# hand-overs), every hook runs as well through it,
# directly and through the wrappers (which run it when it lies beside
# gpuprof), in the same rounds. With BASE_HOOK_BIN (another build of
# gpuprof-hook, e.g. the base commit's), it runs too, in rows marked @base,
# so that a change to the hook binary is measured before and after in one
# run.
#
# A simulated node (4 GPUs) with a running agent, and a second configuration
# whose socket has no agent behind it (the hooks' fallback path: they spool
# their records, which `gpuprof ingest` stores after the run). Each round runs, in a shuffled order, /bin/true,
# python3 -c pass, `gpuprof --version` (the binary's start-up floor: runtime,
# package init, cobra), one prolog+epilog pair through the agent and one
# through the fallback, each both as `gpuprof prolog` and as
# contrib/slurm/prolog.sh (epilog.sh) running it, so machine noise hits
# every command alike. An epilog
# ends the job its prolog started three rounds earlier, so the agent holds a
# few running jobs and samples them between the hooks, as on a real node.
#
# Every command gets the environment slurmd gives a prolog/epilog and
# nothing else (what `env -i VAR=...` would pass; set directly, so the
# timings carry no extra exec of env(1)). Wall time per exec is measured
# with time.perf_counter_ns around subprocess.run.
#
# Each run's CPU time (user + system, of the process and the children it
# waited for: getrusage(RUSAGE_CHILDREN) around it) is kept too; on a shared
# machine CPU time compares binaries where wall time mostly measures the
# load. The wrapper rows run gpuprof through a directory of links: gpuprof
# alone, or gpuprof and gpuprof-hook.
#
# Prints: command, runs, p50, p99, max (ms, nearest rank), their p50 and
# p99 over /bin/true's, the wrapper's p50 and p99 over the direct call's,
# and the hooks' own logged duration (took=) p50 and p99. Exits non-zero on errors (a hook failing, a job not recorded the way
# it should be), never because a target is missed. BENCH_KEEP=1 keeps the work
# directory (configurations, databases, logs). BENCH_FLOOR=PATH adds a row
# for that program run bare, e.g. an empty static Go program
# (`func main() { os.Exit(0) }`, CGO_ENABLED=0): Go's own start, the floor
# of any Go hook.
set -euo pipefail
BIN=${1:?usage: bench-hooks.sh GPUPROF_BIN [N] [HOOK_BIN]}
N=${2:-200}
HOOK_BIN=${3:-}
BASE_HOOK_BIN=${4:-}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "bench-hooks: $BIN is not executable" >&2; exit 2; }
if [ -n "$HOOK_BIN" ]; then
	HOOK_BIN=$(cd "$(dirname "$HOOK_BIN")" && pwd)/$(basename "$HOOK_BIN")
	[ -x "$HOOK_BIN" ] || { echo "bench-hooks: $HOOK_BIN is not executable" >&2; exit 2; }
fi
if [ -n "$BASE_HOOK_BIN" ]; then
	[ -n "$HOOK_BIN" ] || { echo "bench-hooks: BASE_HOOK_BIN without HOOK_BIN" >&2; exit 2; }
	BASE_HOOK_BIN=$(cd "$(dirname "$BASE_HOOK_BIN")" && pwd)/$(basename "$BASE_HOOK_BIN")
	[ -x "$BASE_HOOK_BIN" ] || { echo "bench-hooks: $BASE_HOOK_BIN is not executable" >&2; exit 2; }
fi
# The interpreter itself, not a version-manager shim (pyenv's shims are shell
# scripts that would add their own startup to the python3 row).
PY=$(python3 -c 'import sys; print(sys.executable)')
CONTRIB=$(cd "$(dirname "$0")/../contrib/slurm" && pwd)

W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-hooks.XXXXXX")
AGENT_PID=
cleanup() {
	if [ -n "$AGENT_PID" ]; then kill "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; fi
	if [ "${BENCH_KEEP:-}" = 1 ]; then echo "bench-hooks: work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT

mkdir -p "$W/dev" "$W/plain" "$W/hooked" "$W/hooked-base"
# What the wrappers run: plain/gpuprof alone; hooked/ has gpuprof-hook beside.
ln -s "$BIN" "$W/plain/gpuprof"
ln -s "$BIN" "$W/hooked/gpuprof"
[ -z "$HOOK_BIN" ] || ln -s "$HOOK_BIN" "$W/hooked/gpuprof-hook"
ln -s "$BIN" "$W/hooked-base/gpuprof"
[ -z "$BASE_HOOK_BIN" ] || ln -s "$BASE_HOOK_BIN" "$W/hooked-base/gpuprof-hook"
for i in 0 1 2 3; do : >"$W/dev/nvidia$i"; done
cat >"$W/gres.conf" <<GRES
Name=gpu Type=h100 File=$W/dev/nvidia[0-3]
GRES

# conf NAME DB SOCKET: one configuration; both share the simulated node.
conf() {
	cat >"$W/$1.toml" <<CONF
cluster   = "bench"
node      = "gpu01"
db        = "$2"
spool_dir = "$W/$1-spool"
socket    = "$3"
log_file  = "$W/$1.log"

[agent]
gpu            = "sim"
interval       = "1s"
flush_interval = "10s"

[hooks]
deadline  = "2s"
gres_conf = "$W/gres.conf"

[sim]
dir    = "$W/sim"
gpus   = 4
model  = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
CONF
}
conf agent "$W/agent.db" "$W/agent.sock"
conf fallback "$W/fallback.db" "$W/no-agent.sock" # nothing ever listens here

"$BIN" agent --config "$W/agent.toml" >>"$W/agent.log" 2>&1 </dev/null &
AGENT_PID=$!
for _ in $(seq 100); do [ -S "$W/agent.sock" ] && break; sleep 0.05; done
[ -S "$W/agent.sock" ] || { echo "bench-hooks: agent did not start:" >&2; cat "$W/agent.log" >&2; exit 1; }
# The fallback prolog opens the simulated node itself: create it now so the
# first timed run does not pay for sim.Init.
"$BIN" simgpu init --config "$W/fallback.toml" >/dev/null 2>&1 || true

"$PY" - "$BIN" "$PY" "$W" "$N" "$CONTRIB" "$HOOK_BIN" "$BASE_HOOK_BIN" <<'PY'
import os, random, resource, sqlite3, subprocess, sys, time

bin_, py, w, n, contrib, hookbin, basehook = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
# The hook binaries besides gpuprof, by row name: the one measured and,
# optionally, the base build it is compared with.
FLOOR = os.environ.get("BENCH_FLOOR", "")
HOOKBINS = {k: v for k, v in (("gpuprof-hook", hookbin), ("gpuprof-hook@base", basehook)) if v}
BINS = ("gpuprof",) + tuple(HOOKBINS)
WRAPDIR = {"gpuprof": "plain", "gpuprof-hook": "hooked", "gpuprof-hook@base": "hooked-base"}
# Job ids: (binary, direct or wrapped, path) -> its own 100000 block, see
# BASE; the logged took= lines find their row by it.
BASE = {}
for b in BINS:
    for how in ("direct", "wrapped"):
        for label in ("agent", "no agent"):
            BASE[(b, how, label)] = 100000 * (len(BASE) + 1)
def rowname(b, how, kind, label):
    if how == "direct":
        return f"{b} {kind} ({label})"
    return f"{kind}.sh{b.replace('gpuprof-hook', '+hook').replace('gpuprof', '')} ({label})"
LAG = 3  # an epilog ends the job its prolog started LAG rounds earlier

def hookenv(job, ctx, extra=None):
    e = {
        "SLURM_SCRIPT_CONTEXT": ctx,
        "SLURM_JOB_ID": str(job),
        "SLURM_JOBID": str(job),
        "SLURM_JOB_USER": "alice",
        "SLURM_JOB_UID": "1001",
        "SLURM_JOB_GID": "1001",
        "SLURM_JOB_ACCOUNT": "vision",
        "SLURM_JOB_PARTITION": "gpu",
        "SLURM_JOB_NODELIST": "gpu01",
        "SLURM_CLUSTER_NAME": "bench",
        "SLURMD_NODENAME": "gpu01",
        "SLURM_CONF": "/etc/slurm/slurm.conf",
        "SLURM_JOB_GPUS": str(job % 4),
        "CUDA_VISIBLE_DEVICES": str(job % 4),
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
    }
    if extra:
        e.update(extra)
    return e

times = {}
cpu = {}
failures = []

def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def run(name, argv, env):
    c0 = cpu_children()
    t0 = time.perf_counter_ns()
    p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    dt = time.perf_counter_ns() - t0
    times.setdefault(name, []).append(dt)
    cpu.setdefault(name, []).append((cpu_children() - c0) * 1e9)
    if p.returncode != 0:
        failures.append(f"{name}: exit {p.returncode}: {p.stdout.decode(errors='replace')[:300]}")

def hook(b, label, cfg, kind, job):
    ctx = kind + "_slurmd"
    extra = {"SLURM_JOB_EXIT_CODE": "0"} if kind == "epilog" else None
    path = HOOKBINS.get(b, bin_)
    run(rowname(b, "direct", kind, label), [path, kind, "--config", f"{w}/{cfg}.toml"], hookenv(job, ctx, extra))

def wrapped(b, label, cfg, kind, job):
    # The wrapper as slurmd runs it; the variables point it at this binary
    # (alone, or with gpuprof-hook beside it), configuration and a log of
    # its own (empty unless gpuprof failed).
    ctx = kind + "_slurmd"
    gp = f"{w}/{WRAPDIR[b]}/gpuprof"
    extra = {"GPUPROF_BIN": gp, "GPUPROF_CONFIG": f"{w}/{cfg}.toml", "GPUPROF_HOOK_LOG": f"{w}/wrapper.log"}
    if kind == "epilog":
        extra["SLURM_JOB_EXIT_CODE"] = "0"
    run(rowname(b, "wrapped", kind, label), [f"{contrib}/{kind}.sh"], hookenv(job, ctx, extra))

def hookunits(kind, i):
    us = []
    for (b, how, label), base in BASE.items():
        cfg = "agent" if label == "agent" else "fallback"
        f = hook if how == "direct" else wrapped
        us.append(lambda f=f, b=b, label=label, cfg=cfg, job=base + i: f(b, label, cfg, kind, job))
    return us

rng = random.Random(1)
pending = []  # (round, agent job, fallback job)
for i in range(n + LAG):
    units = []
    if i < n:
        units += [
            lambda i=i: run("/bin/true", ["/bin/true"], hookenv(100000 + i, "prolog_slurmd")),
            lambda i=i: run("python3 -c pass", [py, "-c", "pass"], hookenv(100000 + i, "prolog_slurmd")),
            lambda i=i: run("gpuprof --version", [bin_, "--version"], hookenv(100000 + i, "prolog_slurmd")),
        ] + hookunits("prolog", i)
        if FLOOR:
            units.append(lambda i=i: run("floor (BENCH_FLOOR)", [FLOOR], hookenv(100000 + i, "prolog_slurmd")))
        for b, path in HOOKBINS.items():
            units.append(lambda i=i, b=b, path=path: run(f"{b} --help", [path, "--help"], hookenv(100000 + i, "prolog_slurmd")))
    if i >= LAG:
        units += hookunits("epilog", i - LAG)
    rng.shuffle(units)
    for u in units:
        u()

if failures:
    print("bench-hooks: %d failed runs, first: %s" % (len(failures), failures[0]), file=sys.stderr)
    sys.exit(1)

# Every job must be in its database, finished, recorded by the right path.
time.sleep(1.5)  # the agent writes finished profiles asynchronously
# No agent writes the fallback's database: an ingest pass stores what its
# hooks spooled (issue 41: a hook never writes SQLite).
subprocess.run([bin_, "ingest", "--config", f"{w}/fallback.toml"], check=True, stdout=subprocess.DEVNULL)
def check(db, source, los):
    c = sqlite3.connect(db, timeout=5)
    got = sum(c.execute("SELECT count(*) FROM jobs WHERE status='finished' AND source=? AND CAST(job_id AS INTEGER) BETWEEN ? AND ?",
                        (source, lo, lo + n - 1)).fetchone()[0] for lo in los)
    total = c.execute("SELECT count(*) FROM jobs").fetchone()[0]
    c.close()
    return got, total
errs = []
for db, source, label in ((f"{w}/agent.db", "agent", "agent"), (f"{w}/fallback.db", "hook", "no agent")):
    los = [base for (_, _, l), base in BASE.items() if l == label]
    got, total = check(db, source, los)
    if got != len(los) * n or total != len(los) * n:
        errs.append(f"{os.path.basename(db)}: {got} finished jobs from {source} of {total} rows, want {len(los) * n}")
if os.path.exists(f"{w}/wrapper.log") and os.path.getsize(f"{w}/wrapper.log") > 0:
    errs.append("a wrapper logged a failing gpuprof: " + open(f"{w}/wrapper.log", encoding="utf-8").read()[:300])
if errs:
    print("bench-hooks: " + "; ".join(errs), file=sys.stderr)
    sys.exit(1)

# The hooks log their own duration ("took", from process start to the end
# of the work, runtime start-up excluded) and the path taken ("via").
import re
UNIT = {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
took = {}
for cfg, label, via in (("agent", "agent", "agent"), ("fallback", "no agent", "spool")):
    for line in open(f"{w}/{cfg}.log", encoding="utf-8"):
        m = re.search(r"msg=done hook=(\w+) job=(\d+) .*via=(\w+) .*took=([0-9.]+)(ns|µs|us|ms|s)\b", line)
        if not m:
            continue
        if m.group(3) != via:
            errs.append(f"{cfg}.log: a {m.group(1)} went via {m.group(3)}, want {via}")
        (b, how, _), = [k for k, base in BASE.items() if base <= int(m.group(2)) < base + 100000]
        name = rowname(b, how, m.group(1), label)
        took.setdefault(name, []).append(float(m.group(4)) * UNIT[m.group(5)])
for name, v in took.items():
    if len(v) != n:
        errs.append(f"{len(v)} logged runs of {name}, want {n}")
if errs:
    print("bench-hooks: " + "; ".join(errs[:5]), file=sys.stderr)
    sys.exit(1)

def pct(v, p):  # nearest rank
    s = sorted(v)
    k = max(1, -(-p * len(s) // 100))
    return s[k - 1]

base, base99 = pct(times["/bin/true"], 50), pct(times["/bin/true"], 99)
cbase, cbase99 = pct(cpu["/bin/true"], 50), pct(cpu["/bin/true"], 99)
order = ["/bin/true", "python3 -c pass"] + (["floor (BENCH_FLOOR)"] if FLOOR else []) + ["gpuprof --version"] + [f"{b} --help" for b in HOOKBINS]
for label in ("agent", "no agent"):
    for kind in ("prolog", "epilog"):
        for b in BINS:
            order += [rowname(b, "direct", kind, label), rowname(b, "wrapped", kind, label)]
print(f"{'command':<36} {'runs':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p50/true':>9} {'p99/true':>9} {'p50/direct':>11} {'p99/direct':>11} {'in-hook p50':>12} {'p99':>6} {'cpu p50':>8} {'cpu p99':>8} {'cpu p50/true':>13} {'cpu p99/true':>13}")
for name in order:
    v = times[name]
    t = took.get(name)
    inhook = f"{pct(t,50)/1e6:>12.2f} {pct(t,99)/1e6:>6.2f}" if t else f"{'':>12} {'':>6}"
    vs = f"{'':>11} {'':>11}"
    if ".sh" in name:
        kind, label = name.split(" (")
        kind, suffix = kind.split(".sh")
        d = times[f"gpuprof{suffix.replace('+hook', '-hook')} {kind} ({label}"]
        vs = f"{pct(v,50)/pct(d,50):>11.2f} {pct(v,99)/pct(d,99):>11.2f}"
    c = cpu[name]
    cs = f"{pct(c,50)/1e6:>8.2f} {pct(c,99)/1e6:>8.2f} {pct(c,50)/max(cbase,1):>13.1f} {pct(c,99)/max(cbase99,1):>13.1f}"
    print(f"{name:<36} {len(v):>5} {pct(v,50)/1e6:>8.2f} {pct(v,99)/1e6:>8.2f} {max(v)/1e6:>8.2f} {pct(v,50)/base:>9.1f} {pct(v,99)/base99:>9.1f} {vs} {inhook} {cs}")
print("p50/true, p99/true: ratios to /bin/true's p50 and p99 in the same run; p50/direct, p99/direct: a wrapper's over the direct call of the same binary, hook and path;")
print("in-hook: the hooks' own logged duration (took=), runtime start-up excluded; cpu: user+system CPU ms of the run and the children it waited for; .sh+hook: the wrapper running gpuprof-hook; @base: the BASE_HOOK_BIN build")
PY
