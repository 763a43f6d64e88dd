// Package mksacct generates a deterministic, realistic sacct -P text file
// (no header, SLURM_TIME_FORMAT=%s epoch times) in any field order, for the
// import benchmarks (store's BenchmarkPutSchedJobs, scripts/bench-import.sh).
// It is test support, not product code: the same seed gives the same
// output byte for byte.
//
// The mix: plain jobs, job arrays (a tenth of submissions, 2–64 tasks, raw
// ids as Slurm hands them out), a few heterogeneous jobs, the final states
// an import selects (CANCELLED jobs that never started among them), typed
// and untyped gres/gpu and gres/shard requests, and gres/gpumem and
// gres/gpuutil usage where the fields include TRESUsageInMax/Ave.
package mksacct

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Options say what to write.
type Options struct {
	Jobs   int       // number of records (lines)
	Seed   uint64    // the same seed gives the same file
	Base   time.Time // the first submission
	Fields []string  // sacct field names, in output order (slurmext.SacctFields)
}

// job is one allocation line, by field name (lower case).
type job map[string]string

// gen hands out raw job ids in the order Slurm would: a submission takes
// the next id, and each array task split off later takes another.
type gen struct {
	rnd    *rand.Rand
	nextID int
	clock  int64 // submit time of the current submission, epoch s
}

var (
	states = []struct {
		state string
		pct   int
	}{
		{"COMPLETED", 70}, {"FAILED", 10}, {"CANCELLED", 9}, {"TIMEOUT", 5},
		{"OUT_OF_MEMORY", 3}, {"PREEMPTED", 2}, {"NODE_FAIL", 1},
	}
	partitions = []string{"gpu", "gpu", "gpu", "a100", "debug", "shared"}
	qoses      = []string{"normal", "normal", "normal", "high", "gpu-long", "gpu-debug"}
	reasons    = []string{"None", "None", "None", "Priority", "Resources", "QOSMaxGRESPerUser", "Dependency"}
	gpuTypes   = []string{"", "", "a100", "h100"}
	limits     = []int64{30 * 60, 2 * 3600, 4 * 3600, 24 * 3600, 3 * 24 * 3600, -1}
)

// Write writes o.Jobs lines of the fields o.Fields to w, one allocation a
// line, with no header. A field it cannot generate is an error.
func Write(w io.Writer, o Options) error {
	for _, f := range o.Fields {
		if _, ok := fieldWriters[strings.ToLower(f)]; !ok {
			return fmt.Errorf("no generator for sacct field %q", f)
		}
	}
	g := &gen{rnd: rand.New(rand.NewPCG(o.Seed, 0x6770_7066)), nextID: 1_000_000, clock: o.Base.Unix()}
	var line []byte
	for n := 0; n < o.Jobs; {
		for _, j := range g.submission(o.Jobs - n) {
			line = line[:0]
			for i, f := range o.Fields {
				if i > 0 {
					line = append(line, '|')
				}
				line = append(line, fieldWriters[strings.ToLower(f)](j)...)
			}
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return err
			}
			n++
		}
	}
	return nil
}

// fieldWriters maps each field gpuprof may ask for to its value.
var fieldWriters = map[string]func(job) string{}

func init() {
	for _, f := range []string{"jobid", "jobidraw", "jobname", "user", "uid", "account", "partition", "qos",
		"submit", "eligible", "start", "end", "elapsed", "timelimit", "state", "exitcode", "derivedexitcode",
		"nodelist", "nnodes", "ncpus", "reqtres", "alloctres", "reason", "cluster",
		"tresusageinmax", "tresusageinave", "restarts"} {
		fieldWriters[f] = func(j job) string { return j[f] }
	}
}

// submission returns the allocation lines of one sbatch: one job, the
// tasks of an array, or the components of a heterogeneous job; at most max.
func (g *gen) submission(max int) []job {
	r := g.rnd
	g.clock += int64(r.IntN(5)) // about one submission every 2 s
	id := g.nextID
	g.nextID++
	user := r.IntN(500)
	common := job{
		"jobname": fmt.Sprintf("train-%d", r.IntN(1000)), "user": fmt.Sprintf("u%03d", user),
		"uid": strconv.Itoa(10000 + user), "account": fmt.Sprintf("acct%02d", user%20),
		"partition": partitions[r.IntN(len(partitions))], "qos": qoses[r.IntN(len(qoses))],
		"cluster": "lab",
	}
	limit := limits[r.IntN(len(limits))]
	switch k := r.IntN(100); {
	case k < 10 && max > 1: // an array
		tasks := min(2+r.IntN(63), max)
		out := make([]job, tasks)
		for t := range tasks {
			raw := id // the last task keeps the array's own id, as in Slurm
			if t < tasks-1 {
				raw = g.nextID
				g.nextID++
			}
			j := g.run(common, limit, 1+r.IntN(2))
			j["jobid"], j["jobidraw"] = fmt.Sprintf("%d_%d", id, t), strconv.Itoa(raw)
			out[t] = j
		}
		return out
	case k < 11 && max > 1: // heterogeneous, two components
		out := make([]job, 2)
		for c := range 2 {
			raw := id
			if c > 0 {
				raw = g.nextID
				g.nextID++
			}
			j := g.run(common, limit, c)
			j["jobid"], j["jobidraw"] = fmt.Sprintf("%d+%d", id, c), strconv.Itoa(raw)
			out[c] = j
		}
		return out
	default:
		j := g.run(common, limit, r.IntN(9))
		j["jobid"], j["jobidraw"] = strconv.Itoa(id), strconv.Itoa(id)
		return []job{j}
	}
}

// run fills one allocation with gpus GPUs requested (0: a CPU job or one
// on shards).
func (g *gen) run(common job, limit int64, gpus int) job {
	r := g.rnd
	j := make(job, len(common)+20)
	for k, v := range common {
		j[k] = v
	}
	submit := g.clock
	eligible := submit + int64(r.IntN(3))
	start := eligible + int64(r.ExpFloat64()*600)
	run := int64(30 + r.IntN(6*3600))
	if limit > 0 && run > limit {
		run = limit
	}
	state, pick := states[len(states)-1].state, r.IntN(100)
	for _, s := range states {
		if pick < s.pct {
			state = s.state
			break
		}
		pick -= s.pct
	}
	if state == "TIMEOUT" && limit > 0 {
		run = limit + int64(r.IntN(90))
	}
	started := !(state == "CANCELLED" && r.IntN(3) == 0) // a third cancelled while pending
	end := start + run
	if !started {
		end = eligible + int64(r.IntN(3600))
	}
	nodes := 1
	if gpus > 4 {
		nodes = (gpus + 3) / 4
	}
	cpus := max(gpus, 1) * 8
	j["submit"], j["eligible"] = strconv.FormatInt(submit, 10), strconv.FormatInt(eligible, 10)
	j["end"] = strconv.FormatInt(end, 10)
	if limit > 0 {
		j["timelimit"] = duration(limit)
	} else {
		j["timelimit"] = "UNLIMITED"
	}
	j["exitcode"], j["derivedexitcode"] = "0:0", "0:0"
	switch state {
	case "FAILED":
		j["exitcode"] = strconv.Itoa(1+r.IntN(3)) + ":0"
	case "CANCELLED":
		state = "CANCELLED by " + j["uid"]
		if started {
			j["exitcode"] = "0:15"
		}
	case "OUT_OF_MEMORY":
		j["exitcode"] = "0:125"
	case "TIMEOUT", "PREEMPTED", "NODE_FAIL":
		j["exitcode"] = "0:9"
	}
	j["state"] = state
	j["reason"] = reasons[r.IntN(len(reasons))]
	j["nnodes"], j["ncpus"] = strconv.Itoa(nodes), strconv.Itoa(cpus)
	gres := ""
	switch typ := gpuTypes[r.IntN(len(gpuTypes))]; {
	case gpus > 0 && typ != "":
		gres = fmt.Sprintf(",gres/gpu=%d,gres/gpu:%s=%d", gpus, typ, gpus)
	case gpus > 0:
		gres = fmt.Sprintf(",gres/gpu=%d", gpus)
	case r.IntN(2) == 0:
		gres = fmt.Sprintf(",gres/shard=%d", 1+r.IntN(8))
	}
	mem := cpus * 8
	j["reqtres"] = fmt.Sprintf("billing=%d,cpu=%d%s,mem=%dG,node=%d", cpus, cpus, gres, mem, nodes)
	if !started {
		j["start"], j["elapsed"], j["nodelist"], j["alloctres"] = "None", "00:00:00", "None assigned", ""
		return j
	}
	j["start"] = strconv.FormatInt(start, 10)
	j["elapsed"] = duration(end - start)
	first := 1 + r.IntN(64)
	if nodes == 1 {
		j["nodelist"] = fmt.Sprintf("gpu%02d", first)
	} else {
		j["nodelist"] = fmt.Sprintf("gpu[%02d-%02d]", first, first+nodes-1)
	}
	j["alloctres"] = fmt.Sprintf("billing=%d,cpu=%d%s,mem=%dG,node=%d", cpus, cpus, gres, mem, nodes)
	if gpus > 0 {
		// Slurm ≥ 23.02 with gpu/nvml: peak and mean GPU memory (in
		// megabytes with a unit suffix) and utilisation (percent).
		peak := 1 + r.IntN(80*1024)
		util := r.IntN(101)
		j["tresusageinmax"] = fmt.Sprintf("cpu=%s,energy=0,fs/disk=%d,gres/gpumem=%dM,gres/gpuutil=%d,mem=%dM,pages=0,vmem=%dM",
			duration(end-start), r.IntN(1<<30), peak, min(util+r.IntN(20), 100), r.IntN(mem<<10), r.IntN(mem<<11))
		j["tresusageinave"] = fmt.Sprintf("cpu=%s,energy=0,fs/disk=%d,gres/gpumem=%dM,gres/gpuutil=%d,mem=%dM,pages=0,vmem=%dM",
			duration(end-start), r.IntN(1<<30), peak/2, util, r.IntN(mem<<10), r.IntN(mem<<11))
	}
	return j
}

// duration formats seconds as sacct does: [D-]HH:MM:SS.
func duration(s int64) string {
	d, s := s/86400, s%86400
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
}
