// Command benchanalysis measures the whole analysis (classify, profile,
// recommend, plan) over a planted month of a million jobs, and sets it
// beside a raw aggregate scan of the same jobs by the sqlite3 CLI in the
// same run, so the two figures share the machine's noise.
//
// It is a benchmark harness, not a product command: it lives under
// internal/ and is run by scripts/bench-analysis.sh (make bench). It must
// not change what it measures: the analysis gets its input in memory,
// as cmd/gpuprof hands it over after loading, and the scan gets a plain
// table with only the columns an aggregate needs.
//
// Peak RSS: the kernel's high-water mark (VmHWM) is reset through
// /proc/self/clear_refs before every analysis round, so each round's peak
// is its own; it includes the million input jobs, whose heap size is
// reported on its own line.
package main

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/gpuprof/gpuprof/analysis"
)

// scanQuery is the raw aggregate the analysis is compared with: one pass
// over every row, grouped like the cluster summary's partition × account
// view.
const scanQuery = `SELECT partition, account, count(*), sum(gpus*elapsed_s)/3600.0,
 avg(util_mean), max(vram_peak_frac), avg(wait_s), avg(io_wait)
 FROM jobs GROUP BY partition, account;`

// errNoHWMReset says the kernel would not reset VmHWM, so a round's peak
// may be an earlier phase's (generation, the table write).
var errNoHWMReset = errors.New("cannot reset VmHWM through /proc/self/clear_refs")

func main() {
	n := flag.Int("n", 1_000_000, "jobs to plant")
	rounds := flag.Int("rounds", 3, "rounds of each side, interleaved A B A B …")
	cli := flag.String("sqlite3", "sqlite3", "sqlite3 CLI for the raw scan")
	dir := flag.String("dir", "", "directory for the table (default: a new temp dir, removed at exit)")
	withReport := flag.Bool("report", false, "add side C: the monthly report (analyse, plan, workload summary, HTML+Markdown+JSON written to dir)")
	flag.Parse()
	if err := run(os.Stdout, *n, *rounds, *cli, *dir, *withReport); err != nil {
		fmt.Fprintln(os.Stderr, "benchanalysis:", err)
		os.Exit(1)
	}
}

// run plants n jobs, writes them to an SQLite table in dir and, for each
// of rounds, times the analysis and plan (A), a raw scan of the table (B)
// and, withReport, the whole report (C), then writes the medians' table to
// w. Within a round the order of GC, high-water-mark reset, reads and
// timers is the measurement itself: each side's steps stay together, side
// A's in roundA.
func run(w io.Writer, n, rounds int, cli, dir string, withReport bool) error {
	if n < 1 || rounds < 1 {
		return fmt.Errorf("need n ≥ 1 and rounds ≥ 1, got %d and %d", n, rounds)
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "gpuprof-bench-analysis-")
		if err != nil {
			return fmt.Errorf("temp dir: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Fprintf(w, "machine: %d CPUs (GOMAXPROCS %d), %s, %s/%s; GOGC=%s GOMEMLIMIT=%s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		envOr("GOGC", "100"), envOr("GOMEMLIMIT", "off"))

	in := plantInput(w, n)

	db := filepath.Join(dir, "jobs.db")
	t := time.Now()
	if err := writeTable(db, in.Jobs); err != nil {
		return err
	}
	st, err := os.Stat(db)
	if err != nil {
		return fmt.Errorf("stat table: %w", err)
	}
	fmt.Fprintf(w, "table: %s, %.0f MiB, written in %s (one transaction, prepared insert)\n",
		db, mib(uint64(st.Size())), time.Since(t).Round(time.Millisecond))

	scan := scanCLI(cli, db)
	if _, err := exec.LookPath(cli); err != nil {
		fmt.Fprintf(w, "NOTE: %s CLI not found (%v): the scan runs through database/sql in this process instead\n", cli, err)
		scan = scanSQL(db)
	}
	// The table was just written, so its pages are in the page cache for
	// every scan round alike; release generation garbage so the analysis
	// rounds start from the input alone.
	debug.FreeOSMemory()

	c := analysis.DefaultConfig()
	var sm samples
	var f analysis.Findings
	var cp analysis.CapacityPlan
	for r := range rounds {
		// A: the analysis.
		if f, cp, err = roundA(w, r, in, c, &sm); err != nil {
			return err
		}

		// B: the raw scan.
		sec, rows, err := scan()
		if err != nil {
			return err
		}
		sm.bWall = append(sm.bWall, sec)
		fmt.Fprintf(w, "round %d B sqlite3 scan:   %.3f s, %d groups\n", r+1, sec, rows)

		if withReport {
			// C: the whole monthly report, as `gpuprof report` runs it
			// after loading.
			runtime.GC()
			debug.FreeOSMemory()
			_ = resetHWM()
			rs, err := reportRound(in, c, dir)
			if err != nil {
				return err
			}
			hwm, err := procStatus("VmHWM")
			if err != nil {
				return err
			}
			sm.cWall = append(sm.cWall, rs.total)
			sm.cHWM = append(sm.cHWM, float64(hwm)/1024)
			fmt.Fprintf(w, "round %d C report: %.2f s (analyse+plan %.2f, workload %.2f, html %.2f, md %.2f, json %.2f), peak %.0f MiB; html %.0f KiB\n",
				r+1, rs.total, rs.analyse, rs.workload, rs.html, rs.md, rs.json, sm.cHWM[r], rs.htmlKiB)
		}
	}
	if sm.hwmNote != "" {
		fmt.Fprintf(w, "NOTE: %s; the peaks above may belong to generation or the table write\n", sm.hwmNote)
	}
	if f.Summary.Jobs != len(in.Jobs) {
		return fmt.Errorf("analysis summarised %d of %d jobs", f.Summary.Jobs, len(in.Jobs))
	}
	fmt.Fprintf(w, "findings: %d task profiles, %d recommendations, %d no-change; plan: C_now %.0f GPUs, need %d of %d (%s)\n",
		len(f.Profiles), len(f.Recommendations), len(f.NoChange), cp.CNow, cp.GPUsNeeded, cp.CurrentGPUs, cp.Constraint)

	writeMedians(w, &sm, withReport)
	return nil
}

// plantInput plants n jobs on the inventory and writes how long that took
// and the live heap they take.
func plantInput(w io.Writer, n int) analysis.Input {
	t := time.Now()
	in := analysis.Input{Jobs: analysis.Plant(spec(n), 1), Nodes: inventory()}
	gen := time.Since(t)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gpus := 0
	for i := range in.Jobs {
		gpus += len(in.Jobs[i].GPUs)
	}
	fmt.Fprintf(w, "input: %d jobs, %d GPU records, generated in %s; live heap after GC %.0f MiB (%.0f B/job)\n",
		len(in.Jobs), gpus, gen.Round(time.Millisecond), mib(ms.HeapAlloc), float64(ms.HeapAlloc)/float64(len(in.Jobs)))
	return in
}

// samples is each round's figures, one slice a measure, for the medians'
// table; hwmNote says why the peak could not be reset, where it could not.
type samples struct {
	aWall, aAnalyse, aPlan, aCPU, aHWM, aAlloc, aLive []float64
	bWall, cWall, cHWM                                []float64
	hwmNote                                           string
}

// roundA is round r's side A: the analysis and the plan of in, timed, with
// the CPU time, the peak RSS, what they allocated and what the findings
// keep, each added to s and written to w as one line. The order of GC,
// high-water-mark reset, reads and timers is the measurement itself.
func roundA(w io.Writer, r int, in analysis.Input, c analysis.Config, s *samples) (analysis.Findings, analysis.CapacityPlan, error) {
	var cp analysis.CapacityPlan
	runtime.GC()
	debug.FreeOSMemory()
	if err := resetHWM(); err != nil {
		s.hwmNote = err.Error()
	}
	base, _ := procStatus("VmRSS")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	t0 := time.Now()
	f, err := analysis.Analyse(in, c)
	if err != nil {
		return f, cp, fmt.Errorf("analyse: %w", err)
	}
	t1 := time.Now()
	hwmAnalyse, err := procStatus("VmHWM")
	if err != nil {
		return f, cp, err
	}
	cp, err = analysis.Plan(in, f, analysis.PlanParams{Growth: c.Plan.Growth, Months: c.Plan.HorizonMonths,
		NewDemand: c.Plan.NewDemand, Headroom: c.Plan.Headroom}, c)
	if err != nil {
		return f, cp, fmt.Errorf("plan: %w", err)
	}
	t2 := time.Now()
	cpu := cpuTime() - cpu0
	hwm, err := procStatus("VmHWM")
	if err != nil {
		return f, cp, err
	}
	s.aAnalyse = append(s.aAnalyse, t1.Sub(t0).Seconds())
	s.aPlan = append(s.aPlan, t2.Sub(t1).Seconds())
	s.aWall = append(s.aWall, t2.Sub(t0).Seconds())
	s.aCPU = append(s.aCPU, cpu.Seconds())
	s.aHWM = append(s.aHWM, float64(hwm)/1024)
	// What the analysis allocated in all, and what it keeps (the
	// findings) once its garbage is collected: the peak above lies
	// between the two, where the GC's pacing puts it.
	runtime.ReadMemStats(&m1)
	s.aAlloc = append(s.aAlloc, mib(m1.TotalAlloc-m0.TotalAlloc))
	runtime.GC()
	runtime.ReadMemStats(&m1)
	s.aLive = append(s.aLive, mib(m1.HeapAlloc)-mib(m0.HeapAlloc))
	fmt.Fprintf(w, "round %d A analyse+plan: %.2f s (analyse %.2f, plan %.2f), CPU %.2f s, RSS before %.0f MiB, peak %.0f MiB (%.0f by the end of Analyse); allocated %.0f MiB, findings keep %.0f MiB\n",
		r+1, s.aWall[r], s.aAnalyse[r], s.aPlan[r], s.aCPU[r], float64(base)/1024, s.aHWM[r], float64(hwmAnalyse)/1024, s.aAlloc[r], s.aLive[r])
	return f, cp, nil
}

// writeMedians writes the medians' table of the rounds and the ratios
// the targets are judged by.
func writeMedians(w io.Writer, s *samples, withReport bool) {
	ma, ms2 := median(s.aWall), median(s.bWall)
	fmt.Fprintf(w, "\n| side | rounds (s) | median (s) | peak RSS median (MiB) |\n|---|---|---|---|\n")
	fmt.Fprintf(w, "| A analyse+plan | %s | %.2f | %.0f |\n", list(s.aWall, 2), ma, median(s.aHWM))
	fmt.Fprintf(w, "|   of which Analyse | %s | %.2f | |\n", list(s.aAnalyse, 2), median(s.aAnalyse))
	fmt.Fprintf(w, "|   of which Plan | %s | %.2f | |\n", list(s.aPlan, 2), median(s.aPlan))
	fmt.Fprintf(w, "|   A CPU time | %s | %.2f | |\n", list(s.aCPU, 2), median(s.aCPU))
	fmt.Fprintf(w, "|   A allocated (MiB) | %s | %.0f | |\n", list(s.aAlloc, 0), median(s.aAlloc))
	fmt.Fprintf(w, "|   A findings kept (MiB) | %s | %.0f | |\n", list(s.aLive, 0), median(s.aLive))
	fmt.Fprintf(w, "| B sqlite3 scan | %s | %.3f | |\n", list(s.bWall, 3), ms2)
	if withReport {
		fmt.Fprintf(w, "| C report | %s | %.2f | %.0f |\n", list(s.cWall, 2), median(s.cWall), median(s.cHWM))
		fmt.Fprintf(w, "\nratio C/A (medians): %.2f×; target at 1,000,000 jobs: C ≤ 15 s (%s)\n", median(s.cWall)/ma, verdict(median(s.cWall) <= 15))
	}
	fmt.Fprintf(w, "\nratio A/B (medians): %.1f×; targets at 1,000,000 jobs: A ≤ 10 s (%s), peak RSS ≤ 1 GB = 953.7 MiB (%s)\n",
		ma/ms2, verdict(ma <= 10), verdict(median(s.aHWM) <= 1e9/(1<<20)))
}

// spec is a planted month with the shapes the recommendations look for,
// scaled to n jobs: many short debug jobs, long multi-GPU training, mid
// training with preallocated memory, services idling on a card, IO-bound
// preprocessing, idle holders and sacct history without GPU readings.
func spec(n int) analysis.PlantSpec {
	users := func(prefix string, k int) []string {
		u := make([]string, k)
		for i := range u {
			u[i] = prefix + strconv.Itoa(i)
		}
		return u
	}
	share := func(p float64) int { return max(1, int(p*float64(n))) }
	g := []analysis.PlantGroup{
		{Users: users("ml", 60), Account: "ml", Partition: "long", Name: "train", Jobs: share(0.06),
			GPUs: 4, Duration: 8 * time.Hour, Jitter: 0.5, Wait: 2 * time.Hour,
			VRAMFrac: 0.8, VRAMJitter: 0.15, Util: 85, UtilJitter: 10},
		{Users: users("ml", 60), Account: "ml", Partition: "gpu", Name: "finetune", Jobs: share(0.16),
			GPUs: 2, Duration: 3 * time.Hour, Jitter: 0.5, Wait: 40 * time.Minute,
			Util: 70, UtilJitter: 15, Preallocated: true},
		{Users: users("dev", 120), Account: "cs", Partition: "debug", Name: "debug", Jobs: share(0.40),
			Duration: 20 * time.Minute, Jitter: 0.8, LimitFactor: 12, Wait: 3 * time.Minute,
			VRAMFrac: 0.06, VRAMJitter: 0.04, Util: 25, UtilJitter: 20},
		{Users: users("svc", 10), Account: "apps", Partition: "gpu", Name: "serve", Jobs: share(0.03),
			Duration: 24 * time.Hour, Jitter: 0.2, Wait: 10 * time.Minute,
			VRAMFrac: 0.05, VRAMJitter: 0.02, Util: 8, UtilJitter: 5},
		{Users: users("bio", 30), Account: "bio", Partition: "gpu", Name: "prep", Jobs: share(0.20),
			Duration: time.Hour, Jitter: 0.3, Wait: 20 * time.Minute,
			VRAMFrac: 0.2, VRAMJitter: 0.1, Util: 15, UtilJitter: 10, IOWait: 0.5},
		{Users: users("phys", 20), Account: "phys", Partition: "gpu", Name: "sim", Jobs: share(0.05),
			GPUs: 2, IdleAll: true, Duration: 4 * time.Hour, Jitter: 0.5, Wait: time.Hour},
	}
	// sacct history takes the rest, so the total is exactly n.
	rest := n
	for _, x := range g {
		rest -= x.Jobs
	}
	if rest > 0 {
		g = append(g, analysis.PlantGroup{Users: users("old", 40), Account: "chem", Partition: "gpu", Name: "md",
			Jobs: rest, GPUs: 2, Duration: 2 * time.Hour, Jitter: 0.5, Wait: 30 * time.Minute, NoGPUData: true})
	}
	return analysis.PlantSpec{Cluster: "bench", Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Days: 30, Groups: g}
}

// inventory is 1,000 nodes of 8 H100s: long 150, debug 50, gpu the rest,
// about the GPU-hours the planted month needs.
func inventory() []analysis.Node {
	nodes := make([]analysis.Node, 1000)
	for i := range nodes {
		part := "gpu"
		switch {
		case i < 150:
			part = "long"
		case i < 200:
			part = "debug"
		}
		nodes[i] = analysis.Node{Name: fmt.Sprintf("g%04d", i), GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 8,
			MemoryTotal: 80 << 30, Partitions: []string{part}}
	}
	return nodes
}

// writeTable stores one row per job: what a raw aggregate needs, with
// NULL where the job has no reading.
func writeTable(path string, jobs []analysis.Job) error {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return fmt.Errorf("open table: %w", err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE jobs (job_id TEXT, user TEXT, account TEXT, partition TEXT,
		gpus INTEGER, elapsed_s REAL, wait_s REAL, util_mean REAL, vram_peak_frac REAL, io_wait REAL)`); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("prepare insert: %w", err)
	}
	defer ins.Close()
	for i := range jobs {
		j := &jobs[i]
		var util, vram, io sql.NullFloat64
		if len(j.GPUs) > 0 {
			for _, g := range j.GPUs {
				util.Float64 += g.UtilMean
				if g.MemoryTotal > 0 {
					vram.Float64 = max(vram.Float64, float64(g.VRAMPeak)/float64(g.MemoryTotal))
				}
			}
			util.Float64 /= float64(len(j.GPUs))
			util.Valid, vram.Valid = true, true
		}
		if j.IOWaitValid {
			io = sql.NullFloat64{Float64: j.IOWait, Valid: true}
		}
		if _, err := ins.Exec(j.ID, j.User, j.Account, j.Partition, j.ReqGPUs,
			j.End.Sub(j.Start).Seconds(), j.Start.Sub(j.Submit).Seconds(), util, vram, io); err != nil {
			return fmt.Errorf("insert job %s: %w", j.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// scanCLI times the sqlite3 CLI running scanQuery: process start, open,
// scan, print. It returns seconds and the number of result rows. The
// child's peak RSS is not reported: Go starts children with vfork, and
// Linux carries the parent's high-water mark into the child's at exec, so
// rusage would show this process's peak, not sqlite3's.
func scanCLI(cli, db string) func() (float64, int, error) {
	return func() (float64, int, error) {
		cmd := exec.Command(cli, "-readonly", db, scanQuery)
		t := time.Now()
		out, err := cmd.Output()
		sec := time.Since(t).Seconds()
		if err != nil {
			return 0, 0, fmt.Errorf("%s scan: %w", cli, err)
		}
		return sec, strings.Count(string(out), "\n"), nil
	}
}

// scanSQL is the fallback when no CLI is installed: the same query
// through database/sql in this process.
func scanSQL(path string) func() (float64, int, error) {
	return func() (float64, int, error) {
		t := time.Now()
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			return 0, 0, fmt.Errorf("open for scan: %w", err)
		}
		defer db.Close()
		rows, err := db.Query(scanQuery)
		if err != nil {
			return 0, 0, fmt.Errorf("scan: %w", err)
		}
		defer rows.Close()
		k := 0
		for rows.Next() {
			k++
		}
		if err := rows.Err(); err != nil {
			return 0, 0, fmt.Errorf("scan rows: %w", err)
		}
		return time.Since(t).Seconds(), k, nil
	}
}

// resetHWM sets VmHWM back to the current RSS (Linux ≥ 4.0).
func resetHWM() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("%w: %w", errNoHWMReset, err)
	}
	return nil
}

// procStatus reads one "Key: N kB" line of /proc/self/status, in KiB.
func procStatus(key string) (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/status: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", key, v, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", key)
}

// cpuTime is this process's user + system time: the GC's workers run on
// the second core, so CPU time may exceed wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func list(xs []float64, prec int) string {
	p := make([]string, len(xs))
	for i, x := range xs {
		p[i] = strconv.FormatFloat(x, 'f', prec, 64)
	}
	return strings.Join(p, ", ")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
