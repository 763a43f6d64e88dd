// Package mksacct generates a deterministic, realistic sacct -P text file
// (no header, SLURM_TIME_FORMAT=%s epoch times) in any field order, for the
// import benchmarks (store's BenchmarkPutSchedJobs, scripts/bench-import.sh).
// It is test support, not product code: the same seed gives the same
// output byte for byte.
//
// The mix: plain jobs, job arrays (a tenth of submissions, 2–64 tasks, raw
// ids as Slurm hands them out), a few heterogeneous jobs, the final states
// an import selects (CANCELLED jobs that never started among them), typed
// and untyped gres/gpu and gres/shard requests; optionally a header line,
// and each job's steps with Slurm's GPU readings (gres/gpumem,
// gres/gpuutil in TRESUsageInMax/Ave) as sacct prints them without -X.
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
	Jobs   int       // number of jobs (allocation lines)
	Seed   uint64    // the same seed gives the same file
	Base   time.Time // the first submission
	Fields []string  // sacct field names, in output order (sacct.Fields)
	// Header writes the field names first, as sacct -P does without
	// --noheader.
	Header bool
	// Steps writes each job's steps after it, as sacct does without -X: a
	// batch step and an extern step for every job that started, and for
	// half the GPU jobs an srun step 0 that does the GPU work. Slurm's GPU
	// readings (gres/gpumem, gres/gpuutil in TRESUsageInMax/Ave, Slurm ≥
	// 23.02 with gpu/nvml) are on the steps; allocation lines leave those
	// fields empty, so without Steps there are no readings at all.
	Steps bool
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

// Write writes o.Jobs jobs of the fields o.Fields to w. A field it cannot
// generate is an error.
func Write(w io.Writer, o Options) error {
	get := make([]func(job) string, len(o.Fields))
	for i, f := range o.Fields {
		fw, ok := fieldWriters[strings.ToLower(f)]
		if !ok {
			return fmt.Errorf("no generator for sacct field %q", f)
		}
		get[i] = fw
	}
	if o.Header {
		if _, err := io.WriteString(w, strings.Join(o.Fields, "|")+"\n"); err != nil {
			return err
		}
	}
	g := &gen{rnd: rand.New(rand.NewPCG(o.Seed, 0x6770_7066)), nextID: 1_000_000, clock: o.Base.Unix()}
	var line []byte
	put := func(j job) error {
		line = line[:0]
		for i, fw := range get {
			if i > 0 {
				line = append(line, '|')
			}
			line = append(line, fw(j)...)
		}
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	}
	for n := 0; n < o.Jobs; {
		for _, j := range g.submission(o.Jobs - n) {
			if err := put(j); err != nil {
				return err
			}
			if o.Steps {
				for _, st := range g.steps(j) {
					if err := put(st); err != nil {
						return err
					}
				}
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
		"tresusageinmax", "tresusageinave", "totalcpu", "maxrss", "reqmem", "restarts"} {
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
	j["node0"] = fmt.Sprintf("gpu%02d", first)
	if nodes == 1 {
		j["nodelist"] = fmt.Sprintf("gpu%02d", first)
	} else {
		j["nodelist"] = fmt.Sprintf("gpu[%02d-%02d]", first, first+nodes-1)
	}
	j["alloctres"] = fmt.Sprintf("billing=%d,cpu=%d%s,mem=%dG,node=%d", cpus, cpus, gres, mem, nodes)
	j["gpus"] = strconv.Itoa(gpus)
	return j
}

// steps returns the step lines of job j: none for a job that never started.
func (g *gen) steps(j job) []job {
	if j["start"] == "None" {
		return nil
	}
	r := g.rnd
	gpus, _ := strconv.Atoi(j["gpus"])
	start, _ := strconv.ParseInt(j["start"], 10, 64)
	end, _ := strconv.ParseInt(j["end"], 10, 64)
	state := strings.Fields(j["state"])[0]
	if state != "COMPLETED" && state != "FAILED" && state != "OUT_OF_MEMORY" {
		state = "CANCELLED"
	}
	step := func(suffix, name string, from, to int64) job {
		st := job{
			"jobid": j["jobid"] + "." + suffix, "jobidraw": j["jobidraw"] + "." + suffix, "jobname": name,
			"account": j["account"], "submit": strconv.FormatInt(from, 10), "eligible": strconv.FormatInt(from, 10),
			"start": strconv.FormatInt(from, 10), "end": strconv.FormatInt(to, 10), "elapsed": duration(to - from),
			"state": state, "exitcode": j["exitcode"], "nodelist": j["node0"],
			"nnodes": "1", "ncpus": j["ncpus"], "alloctres": "cpu=" + j["ncpus"] + ",mem=0,node=1", "cluster": j["cluster"],
		}
		if gpus > 0 {
			st["alloctres"] = fmt.Sprintf("cpu=%s,gres/gpu=%d,mem=0,node=1", j["ncpus"], gpus)
		}
		return st
	}
	// usage is a TRESUsageIn value; mem < 0 leaves out the GPU items (a
	// job without GPUs, or a cluster without GPU accounting).
	usage := func(secs int64, mem int64, util int) string {
		gpu := ""
		switch {
		case mem < 0:
		case mem > 0 && r.IntN(4) == 0:
			gpu = fmt.Sprintf(",gres/gpumem=%dM,gres/gpuutil=%d", mem>>20, util) // sacct's unit form
		default:
			gpu = fmt.Sprintf(",gres/gpumem=%d,gres/gpuutil=%d", mem, util)
		}
		return fmt.Sprintf("cpu=%s,energy=0,fs/disk=%d%s,mem=%d,pages=%d,vmem=%d",
			duration(secs), r.IntN(1<<30), gpu, r.Int64N(64<<30), r.IntN(5000), r.Int64N(128<<30))
	}
	noGPU := int64(-1)
	if gpus > 0 {
		noGPU = 0
	}
	peak, util := int64(1+r.IntN(80<<10))<<20, r.IntN(101)
	batch, extern := step("batch", "batch", start, end), step("extern", "extern", start, end)
	extern["tresusageinmax"] = usage(0, noGPU, 0)
	extern["tresusageinave"] = extern["tresusageinmax"]
	if gpus == 0 || r.IntN(2) == 0 {
		// The batch script does the work itself.
		avg := peak / 2
		if gpus == 0 {
			peak, avg = -1, -1
		}
		batch["tresusageinmax"] = usage(end-start, peak, min(util+r.IntN(20), 100))
		batch["tresusageinave"] = usage(end-start, avg, util)
		return []job{batch, extern}
	}
	// An srun step does the GPU work; the batch step idles.
	srun := step("0", "python", start+int64(r.IntN(10)), end)
	batch["tresusageinmax"] = usage(end-start, 0, 0)
	batch["tresusageinave"] = batch["tresusageinmax"]
	srun["tresusageinmax"] = usage(end-start, peak, min(util+r.IntN(20), 100))
	srun["tresusageinave"] = usage(end-start, peak/2, util)
	return []job{batch, extern, srun}
}

// duration formats seconds as sacct does: [D-]HH:MM:SS.
func duration(s int64) string {
	d, s := s/86400, s%86400
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
}
