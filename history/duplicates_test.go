package history

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

func TestDuplicatesConflicts(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	job := func(id, state string, end time.Time) slurmext.JobRecord {
		return slurmext.JobRecord{Cluster: "lab", JobID: id, State: slurmext.JobState(state), Start: at, End: end, Source: Source}
	}
	done := job("7", "COMPLETED", at.Add(time.Hour))
	failed := job("7", "FAILED", at.Add(time.Hour))
	requeued := job("7", "REQUEUED", at.Add(time.Minute))
	otherCluster := done
	otherCluster.Cluster = "lab2"
	tests := []struct {
		name string
		recs []slurmext.JobRecord
		want []bool
	}{
		{name: "one line", recs: []slurmext.JobRecord{done}, want: []bool{false}},
		{name: "the same line twice", recs: []slurmext.JobRecord{done, done}, want: []bool{false, false}},
		{name: "different", recs: []slurmext.JobRecord{done, failed}, want: []bool{false, true}},
		{name: "reported once", recs: []slurmext.JobRecord{done, failed, done, failed}, want: []bool{false, true, false, false}},
		{name: "a requeued run, then the last", recs: []slurmext.JobRecord{requeued, done}, want: []bool{false, false}},
		{name: "the last run, then a requeued one", recs: []slurmext.JobRecord{done, requeued}, want: []bool{false, false}},
		{name: "another cluster's job of the same id", recs: []slurmext.JobRecord{done, otherCluster}, want: []bool{false, false}},
		{name: "back to the first cluster", recs: []slurmext.JobRecord{done, otherCluster, failed}, want: []bool{false, false, true}},
		// Ids kept as numbers and as text are never the same job.
		{name: "a leading zero is another id", recs: []slurmext.JobRecord{done, job("07", "FAILED", at.Add(time.Hour))}, want: []bool{false, false}},
		{name: "ids as text conflict", recs: []slurmext.JobRecord{job("07", "COMPLETED", at), job("07", "FAILED", at)}, want: []bool{false, true}},
		{name: "a SLUID", recs: []slurmext.JobRecord{job("s0123456789abc", "COMPLETED", at), job("s0123456789abc", "FAILED", at)}, want: []bool{false, true}},
		{name: "the largest 19 digits", recs: []slurmext.JobRecord{job("9999999999999999999", "COMPLETED", at), job("9999999999999999999", "FAILED", at)}, want: []bool{false, true}},
		{name: "20 digits, as text", recs: []slurmext.JobRecord{job("18446744073709551617", "COMPLETED", at), job("1", "FAILED", at), job("18446744073709551617", "FAILED", at)}, want: []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDuplicates()
			for i := range tt.recs {
				if got := d.conflicts(&tt.recs[i]); got != tt.want[i] {
					t.Errorf("record %d (%s %s): conflicts = %v, want %v", i, tt.recs[i].Cluster, tt.recs[i].State, got, tt.want[i])
				}
			}
		})
	}
}

// BenchmarkDuplicates is the cost per record imported of finding
// duplicates, on distinct jobs (the common case).
func BenchmarkDuplicates(b *testing.B) {
	recs := make([]slurmext.JobRecord, 100_000)
	for i := range recs {
		recs[i] = slurmext.JobRecord{Cluster: "lab", JobID: strconv.Itoa(100000 + i), Name: "train", User: "alice",
			State: "COMPLETED", ReqTRES: "billing=8,cpu=8,gres/gpu=1,mem=16000M,node=1", Source: Source}
	}
	b.ReportAllocs()
	for b.Loop() {
		d := newDuplicates()
		for i := range recs {
			d.conflicts(&recs[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// TestDuplicatesKeepNoLines: the duplicate finder keeps a job's ids, not
// the line they were cut from. Each record's JobID and Cluster here are
// slices of a line of 4 KiB, as sacct's text reader cuts them; before the
// keys were copied, 20,000 jobs kept 80 MB of lines alive (a million
// jobs of sacct text, about 430 MB).
func TestDuplicatesKeepNoLines(t *testing.T) {
	const jobs, lineBytes = 20_000, 4 << 10
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	d := newDuplicates()
	before := heap()
	for i := range jobs {
		line := strings.Repeat(" ", lineBytes-20) + "lab|" + strconv.Itoa(1_000_000+i)
		rec := slurmext.JobRecord{Cluster: line[lineBytes-20 : lineBytes-17], JobID: line[lineBytes-16:]}
		d.conflicts(&rec)
	}
	held := heap() - before
	if perJob := held / jobs; perJob > lineBytes/4 {
		t.Errorf("the duplicate finder holds %d bytes a job after %d jobs (lines of %d bytes): it keeps the lines", perJob, jobs, lineBytes)
	}
	runtime.KeepAlive(d)
}
