package sacct

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

func TestParseCPUTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		// The forms of Slurm's _elapsed_time (src/sacct/print.c).
		{in: "00:19.384", want: 19*time.Second + 384*time.Millisecond},
		{in: "00:00.002", want: 2 * time.Millisecond},
		{in: "59:59.999", want: 59*time.Minute + 59*time.Second + 999*time.Millisecond},
		{in: "00:00:00", want: 0},
		{in: "00:05:07", want: 5*time.Minute + 7*time.Second},
		{in: "12:34:56", want: 12*time.Hour + 34*time.Minute + 56*time.Second},
		{in: "2-00:10:00", want: 48*time.Hour + 10*time.Minute},
		{in: "103-04:00:00", want: 103*24*time.Hour + 4*time.Hour},
		{in: " 01:02:03 ", want: time.Hour + 2*time.Minute + 3*time.Second},
		{in: "", bad: true},
		{in: "5", bad: true}, // minutes for a time limit, not a CPU time
		{in: "UNLIMITED", bad: true},
		{in: "Partition_Limit", bad: true},
		{in: "00:60.000", bad: true},
		{in: "1-24:00:00", bad: true},
		{in: "1:2:3:4", bad: true},
		{in: "00:19.", bad: true},
		{in: "-00:01.000", bad: true},
		{in: "00:19.384+", bad: true}, // cut by a fixed-width column
		{in: "999999999-00:00:00", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseCPUTime(tt.in)
		switch {
		case tt.bad && !errors.Is(err, ErrBadUsage):
			t.Errorf("ParseCPUTime(%q) = %v, %v; want an ErrBadUsage", tt.in, got, err)
		case !tt.bad && (err != nil || got != tt.want):
			t.Errorf("ParseCPUTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseReqMem(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	tests := []struct {
		in          string
		cpus, nodes int
		want        uint64
		known, bad  bool
	}{
		{in: "16000M", want: 16000 * mib, known: true},
		{in: "1G", want: gib, known: true},
		{in: "1.50G", want: 3 * gib / 2, known: true},
		{in: "512K", want: 512 << 10, known: true},
		{in: "2T", want: 2 << 40, known: true},
		// Before 21.08: per CPU and per node.
		{in: "4000Mc", cpus: 4, nodes: 1, want: 16000 * mib, known: true},
		{in: "4000Mn", cpus: 8, nodes: 2, want: 8000 * mib, known: true},
		{in: "4000Mc", cpus: 0, nodes: 1}, // CPUs unknown: so is the total
		{in: ""},
		{in: "0"},
		{in: "0n", nodes: 1},
		{in: "100", bad: true}, // no unit: megabytes or bytes?
		{in: "lots", bad: true},
		{in: "16000M+", bad: true},
		{in: "4000Mx", bad: true},
		{in: "999999999999P", bad: true},
	}
	for _, tt := range tests {
		got, known, err := ParseReqMem(tt.in, tt.cpus, tt.nodes)
		switch {
		case tt.bad && (!errors.Is(err, ErrBadUsage) || known):
			t.Errorf("ParseReqMem(%q) = %d, %v, %v; want an ErrBadUsage", tt.in, got, known, err)
		case !tt.bad && (err != nil || known != tt.known || got != tt.want):
			t.Errorf("ParseReqMem(%q, %d, %d) = %d, %v, %v; want %d, %v", tt.in, tt.cpus, tt.nodes, got, known, err, tt.want, tt.known)
		}
	}
}

func TestCPUEfficiency(t *testing.T) {
	busy := slurmext.HostUsage{TotalCPU: 2*24*time.Hour + 10*time.Minute, TotalCPUValid: true}
	tests := []struct {
		name    string
		u       slurmext.HostUsage
		elapsed time.Duration
		cpus    int
		want    float64
		ok      bool
	}{
		// 2-00:10:00 of core time used of 3-04:00:00 allocated (19 h × 4).
		{"quarter of the cores idle", busy, 19 * time.Hour, 4, (48*60 + 10) / (19 * 60 * 4.0), true},
		{"TotalCPU unknown", slurmext.HostUsage{}, time.Hour, 4, 0, false},
		{"no run time", busy, 0, 4, 0, false},
		{"CPUs unknown", busy, time.Hour, 0, 0, false},
		{"nothing used", slurmext.HostUsage{TotalCPUValid: true}, time.Hour, 2, 0, true},
	}
	for _, tt := range tests {
		got, ok := tt.u.CPUEfficiency(tt.elapsed, tt.cpus)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: CPUEfficiency = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// usageOf reads a sacct capture and returns each job's record and usage
// by raw job id.
func usageOf(t *testing.T, r *Reader) (map[string]slurmext.JobRecord, map[string]slurmext.HostUsage, map[string][]string) {
	t.Helper()
	recs, us, probs := map[string]slurmext.JobRecord{}, map[string]slurmext.HostUsage{}, map[string][]string{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, us, probs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		recs[rec.JobID], us[rec.JobID] = rec, r.Usage()
		if p := r.Problems(); len(p) > 0 {
			probs[rec.JobID] = append([]string(nil), p...)
		}
	}
}

// The 22.05 captures of testdata/real/README.md ("CPU and host-memory
// accounting"), checked against what the jobs did.
func TestSacctHostUsageReal(t *testing.T) {
	const mib = 1 << 20
	ms := time.Millisecond
	files := []struct {
		name   string
		fields []string // nil: the header's, or gpuprof's own
		noCPU  bool     // no step lines: TotalCPU is unknown
	}{
		{name: "22.05-usage-P-steps.txt"},
		{name: "22.05-usage-noconvert-P-steps.txt"},
		{name: "22.05-own-P-epoch-usage.txt"},
		{name: "22.05-own-XP-epoch-usage-noheader.txt", noCPU: true},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			recs, us, probs := usageOf(t, NewReader(openFixture(t, "real", f.name), f.fields, Options{}))
			if len(recs) != 5 || len(probs) != 0 {
				t.Fatalf("%d jobs, problems %q; want 5 jobs, no problems", len(recs), probs)
			}
			// Job 1: two tasks, each stopped by RLIMIT_CPU after 10 s of
			// CPU: the steps' TotalCPU (00:00.033 + 00:19.347 + 00:00.003)
			// add up to the job line's 00:19.384 within their rounding.
			burn := us["1"]
			if f.noCPU {
				if burn.TotalCPUValid {
					t.Errorf("job 1 TotalCPU %v from job lines alone; want unknown (sacct -X prints 00:00:00)", burn.TotalCPU)
				}
			} else {
				if want := 19383 * ms; !burn.TotalCPUValid || burn.TotalCPU != want {
					t.Errorf("job 1 TotalCPU %v (valid %v), want %v", burn.TotalCPU, burn.TotalCPUValid, want)
				}
				if burn.TotalCPU < 18*time.Second || burn.TotalCPU > 20*time.Second {
					t.Errorf("job 1 TotalCPU %v; its 2 tasks burnt 10 s of CPU each", burn.TotalCPU)
				}
				el, _ := recs["1"].Elapsed()
				eff, ok := burn.CPUEfficiency(el, recs["1"].CPUs)
				if want := 19.383 / (17 * 2); !ok || math.Abs(eff-want) > 1e-9 {
					t.Errorf("job 1 CPU efficiency %v, %v (elapsed %v, %d CPUs); want %v", eff, ok, el, recs["1"].CPUs, want)
				}
				if eff, ok := us["3"].CPUEfficiency(0, 1); ok {
					t.Errorf("job 3 ran 00:00:00 and has an efficiency %v", eff)
				}
			}
			// Job 2 held 300 MiB written in Python: step 2.0's MaxRSS
			// 315292K is it plus the interpreter.
			if f.noCPU {
				if us["2"].MemPeakValid {
					t.Errorf("job 2 memory peak %d from job lines alone; want unknown", us["2"].MemPeak)
				}
			} else {
				mem := us["2"]
				if !mem.MemPeakValid || mem.MemPeak != 315292<<10 {
					t.Errorf("job 2 memory peak %d (valid %v), want 315292K", mem.MemPeak, mem.MemPeakValid)
				}
				if mem.MemPeak < 300*mib || mem.MemPeak > 340*mib {
					t.Errorf("job 2 memory peak %d MiB; it held 300 MiB", mem.MemPeak/mib)
				}
				// Job 1's steps: 1.0 was sampled (6292K), the others not.
				if m := us["1"]; !m.MemPeakValid || m.MemPeak != 6292<<10 {
					t.Errorf("job 1 memory peak %d (valid %v), want 6292K", m.MemPeak, m.MemPeakValid)
				}
				// Job 4's steps ended before a sample: unknown, not 0.
				if m := us["4"]; m.MemPeakValid {
					t.Errorf("job 4 memory peak %d; no step was sampled", m.MemPeak)
				}
			}
			wantReq := map[string]uint64{"1": 16000 * mib, "2": 512 * mib, "3": 100 * mib, "4": 200 * mib, "5": 1024 * mib}
			for id, want := range wantReq {
				if u := us[id]; !u.ReqMemValid || u.ReqMem != want {
					t.Errorf("job %s requested %d (valid %v), want %d", id, u.ReqMem, u.ReqMemValid, want)
				}
			}
		})
	}
}

// fixedWidth splits sacct's default output into rows of named values by
// the dashed line under the header, the way a reader of the screen does.
func fixedWidth(t *testing.T, text string) []map[string]string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "---") {
		t.Fatalf("no header and dashed line: %q", lines)
	}
	type span struct{ from, to int }
	var spans []span
	for i := 0; i < len(lines[1]); {
		if lines[1][i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(lines[1]) && lines[1][j] == '-' {
			j++
		}
		spans = append(spans, span{i, j})
		i = j
	}
	cut := func(l string, s span) string {
		if s.from >= len(l) {
			return ""
		}
		return strings.TrimSpace(l[s.from:min(s.to, len(l))])
	}
	var rows []map[string]string
	for _, l := range lines[2:] {
		row := map[string]string{}
		for _, s := range spans {
			row[cut(lines[0], s)] = cut(l, s)
		}
		rows = append(rows, row)
	}
	return rows
}

// The fixed-width capture holds the same values as the -P one; the reader
// refuses it as a whole, and its values, read by column, parse alike.
func TestSacctHostUsageFixedWidth(t *testing.T) {
	r := NewReader(openFixture(t, "real", "22.05-usage-default.txt"), nil, Options{})
	if _, err := r.Next(); !errors.Is(err, ErrLayout) {
		t.Fatalf("fixed-width output: Next = %v, want it refused (ErrLayout)", err)
	}
	fixed := fixedWidth(t, readFixture(t, "real", "22.05-usage-default.txt"))
	parsable := strings.Split(strings.TrimSpace(readFixture(t, "real", "22.05-usage-P-steps.txt")), "\n")
	header := strings.Split(parsable[0], "|")
	if len(fixed) != len(parsable)-1 {
		t.Fatalf("%d fixed-width rows, %d parsable", len(fixed), len(parsable)-1)
	}
	for i, line := range parsable[1:] {
		vals := strings.Split(line, "|")
		p := map[string]string{}
		for k, h := range header {
			p[h] = vals[k]
		}
		fw := fixed[i]
		if fw["JobID"] != p["JobID"] {
			t.Fatalf("row %d: JobID %q fixed, %q parsable", i, fw["JobID"], p["JobID"])
		}
		for _, col := range []string{"TotalCPU", "UserCPU", "SystemCPU"} {
			a, errA := ParseCPUTime(fw[col])
			b, errB := ParseCPUTime(p[col])
			if errA != nil || errB != nil || a != b {
				t.Errorf("%s %s: fixed %q = %v (%v), parsable %q = %v (%v)", p["JobID"], col, fw[col], a, errA, p[col], b, errB)
			}
		}
		for _, col := range []string{"MaxRSS", "AveRSS"} {
			if fw[col] == "" && p[col] == "" {
				continue
			}
			a, _, errA := parseRSS(fw[col])
			b, _, errB := parseRSS(p[col])
			if errA != nil || errB != nil || a != b {
				t.Errorf("%s %s: fixed %q, parsable %q", p["JobID"], col, fw[col], p[col])
			}
		}
		a, ka, errA := ParseReqMem(fw["ReqMem"], 1, 1)
		b, kb, errB := ParseReqMem(p["ReqMem"], 1, 1)
		if errA != nil || errB != nil || a != b || ka != kb {
			t.Errorf("%s ReqMem: fixed %q, parsable %q", p["JobID"], fw["ReqMem"], p["ReqMem"])
		}
		// Columns too narrow for their value end in '+': never a number.
		if v := fw["ReqTRES"]; strings.HasSuffix(v, "+") {
			if _, known, err := ParseReqMem(v, 1, 1); err == nil || known {
				t.Errorf("%s: cut value %q read as a size", p["JobID"], v)
			}
		}
	}
}

// Malformed accounting values are noted with their line and column and
// leave the job's value unknown; the rest of the job imports.
func TestSacctHostUsageMalformed(t *testing.T) {
	in := strings.Join([]string{
		"JobID|JobIDRaw|State|Start|End|AllocCPUS|TotalCPU|MaxRSS|ReqMem",
		"7|7|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|4|01:00:00||4G",
		"7.batch|7.batch|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|4|lots|12Q|",
		"7.0|7.0|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|4|01:00:00|2G|",
		"8|8|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|4|00:00:00||4000",
		"8.0|8.0|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|4|00:30:00|1G|",
		"9|9|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:00:00||1G",
	}, "\n") + "\n"
	recs, us, probs := usageOf(t, NewReader(strings.NewReader(in), nil, Options{}))
	if len(recs) != 3 {
		t.Fatalf("%d jobs, want 3", len(recs))
	}
	if u := us["7"]; u.TotalCPUValid || u.MemPeakValid || !u.ReqMemValid || u.ReqMem != 4<<30 {
		t.Errorf("job 7 %+v: want TotalCPU and memory peak unknown (a step's are malformed), ReqMem 4G", u)
	}
	want7 := []string{
		`step "7.batch": TotalCPU: line 3: CPU time "lots": want [D-][HH:]MM:SS[.mmm]: malformed sacct accounting value`,
		`step "7.batch": MaxRSS: line 3: memory size "12Q": want bytes or a size such as 6292K: malformed sacct accounting value`,
	}
	if got := strings.Join(probs["7"], "\n"); got != strings.Join(want7, "\n") {
		t.Errorf("job 7 problems:\n%s\nwant\n%s", got, strings.Join(want7, "\n"))
	}
	if u := us["8"]; !u.TotalCPUValid || u.TotalCPU != 30*time.Minute || u.ReqMemValid || !u.MemPeakValid || u.MemPeak != 1<<30 {
		t.Errorf("job 8 %+v: want TotalCPU 00:30:00 from its step, ReqMem unknown, memory peak 1G", u)
	}
	if len(probs["8"]) != 1 || !strings.Contains(probs["8"][0], "ReqMem: line 5:") {
		t.Errorf("job 8 problems %q, want one naming ReqMem and line 5", probs["8"])
	}
	// A job line without steps: its TotalCPU of 00:00:00 is not believed.
	if u := us["9"]; u.TotalCPUValid || u.MemPeakValid || !u.ReqMemValid {
		t.Errorf("job 9 %+v: want TotalCPU and memory peak unknown, ReqMem known", u)
	}
	if len(probs["9"]) != 0 {
		t.Errorf("job 9 problems %q", probs["9"])
	}
}

// Text without the accounting columns imports as before, every value
// unknown; ReqTRES still says what memory was requested.
func TestSacctHostUsageAbsent(t *testing.T) {
	for _, f := range []string{"22.05-issue-P-steps.txt", "22.05-reordered-Xp.txt", "22.05-own-P-epoch-steps.txt"} {
		recs, us, _ := usageOf(t, NewReader(openFixture(t, "real", f), nil, Options{}))
		if len(recs) == 0 {
			t.Fatalf("%s: no jobs", f)
		}
		for id, u := range us {
			if u.TotalCPUValid || u.ReqMemValid {
				t.Errorf("%s: job %s: %+v from a layout without TotalCPU or ReqMem", f, id, u)
			}
			if b, ok := slurmext.MemFromTRES(recs[id].ReqTRES); strings.Contains(recs[id].ReqTRES, "mem=16000M") && (!ok || b != 16000<<20) {
				t.Errorf("%s: job %s ReqTRES %s: MemFromTRES = %d, %v; want 16000M", f, id, recs[id].ReqTRES, b, ok)
			}
		}
	}
}

func TestMemFromTRES(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"billing=2,cpu=2,mem=16000M,node=1", 16000 << 20, true},
		{"cpu=4,mem=1.50G", 3 << 29, true},
		{"cpu=4,mem=0", 0, false},
		{"cpu=4,node=1", 0, false},
		{"cpu=4,mem=lots", 0, false},
		{"mem=", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		if got, ok := slurmext.MemFromTRES(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("MemFromTRES(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSacctUsageRead (issue #30): HostUsage.TotalCPURead and MemPeakRead
// say the import read the job's steps in a layout with the column, so
// that show points to sacct only where sacct has something the import
// did not bring.
func TestSacctUsageRead(t *testing.T) {
	const head = "JobID|JobIDRaw|State|Start|End|AllocCPUS|TotalCPU|MaxRSS|ReqMem"
	in := strings.Join([]string{
		head,
		// 11: steps read, MaxRSS empty (they ended before the first
		// sample): read, and sacct has none.
		"11|11|COMPLETED|2026-12-03T10:00:00|2026-12-03T10:00:05|2|00:00:00||1G",
		"11.batch|11.batch|COMPLETED|2026-12-03T10:00:00|2026-12-03T10:00:05|2|00:00.010||",
		// 12: both measured.
		"12|12|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:00:00||1G",
		"12.0|12.0|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:30:00|1G|",
		// 13: no step lines (as sacct -X): not read.
		"13|13|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:00:00||1G",
		// 14: a malformed MaxRSS: not read (sacct shows what it is).
		"14|14|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:00:00||1G",
		"14.0|14.0|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00|2|00:30:00|12Q|",
	}, "\n") + "\n"
	_, us, _ := usageOf(t, NewReader(strings.NewReader(in), nil, Options{}))
	tests := []struct {
		id       string
		cpu, rss bool
	}{
		{"11", true, true}, {"12", true, true}, {"13", false, false}, {"14", true, false},
	}
	for _, tt := range tests {
		if u := us[tt.id]; u.TotalCPURead != tt.cpu || u.MemPeakRead != tt.rss {
			t.Errorf("job %s: TotalCPURead %v MemPeakRead %v, want %v %v (%+v)", tt.id, u.TotalCPURead, u.MemPeakRead, tt.cpu, tt.rss, u)
		}
	}
	if u := us["11"]; u.MemPeakValid {
		t.Errorf("job 11: memory peak %+v, want unknown (MaxRSS empty)", u)
	}
	// A layout without the columns read nothing.
	_, us, _ = usageOf(t, NewReader(strings.NewReader("JobID|JobIDRaw|State|Start|End\n"+
		"15|15|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00\n15.0|15.0|COMPLETED|2026-12-03T10:00:00|2026-12-03T11:00:00\n"), nil, Options{}))
	if u := us["15"]; u.TotalCPURead || u.MemPeakRead {
		t.Errorf("job 15 (no usage columns): %+v, want nothing read", u)
	}
}
