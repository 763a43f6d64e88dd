package mksacct

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

func generated(t *testing.T, jobs int, seed uint64, steps bool) []byte {
	t.Helper()
	var b bytes.Buffer
	o := Options{Jobs: jobs, Seed: seed, Base: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Fields: sacct.Fields(),
		Header: steps, Steps: steps}
	if err := Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The benchmark measures the import of what sacct prints, so every line
// must be one the reader takes whole, with no value it had to drop, in both
// shapes: allocations only (sacct -X --noheader) and with a header and
// steps (what gpuprof's own sacct command prints).
func TestGeneratedLinesParse(t *testing.T) {
	const jobs = 20_000
	for _, steps := range []bool{false, true} {
		t.Run(fmt.Sprintf("steps=%v", steps), func(t *testing.T) {
			out := generated(t, jobs, 7, steps)
			if n := bytes.Count(out, []byte("\n")); (n != jobs) == !steps || n < jobs {
				t.Fatalf("%d lines for %d jobs (steps %v)", n, jobs, steps)
			}
			sr := sacct.NewReader(bytes.NewReader(out), nil, sacct.Options{Cluster: "lab"})
			ids := map[string]bool{}
			var arrays, het, pending, gpus, mem, util int
			states := map[string]int{}
			for {
				rec, err := sr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("after %d records: %v", len(ids), err)
				}
				if p := sr.Problems(); len(p) > 0 {
					t.Errorf("job %s: problems %q", rec.JobID, p)
				}
				if ids[rec.JobID] {
					t.Errorf("raw id %s twice", rec.JobID)
				}
				ids[rec.JobID] = true
				switch {
				case rec.ArrayJobID != "":
					arrays++
				case rec.HetJobID != "":
					het++
				}
				if rec.Start.IsZero() {
					pending++
				}
				if rec.ReqGPUs > 0 {
					gpus++
				}
				if rec.SlurmGPUMemValid {
					mem++
				}
				if rec.SlurmGPUUtilValid {
					util++
				}
				if (rec.SlurmGPUMemValid || rec.SlurmGPUUtilValid) && rec.ReqGPUs == 0 {
					t.Errorf("job %s has GPU readings but no GPUs", rec.JobID)
				}
				states[string(rec.State)]++
			}
			if len(ids) != jobs {
				t.Fatalf("read %d records, want %d", len(ids), jobs)
			}
			// The mix the doc comment promises, loosely: the point is that
			// each kind is there in a fair share, not the exact share.
			for name, n := range map[string]int{"array tasks": arrays, "het components": het, "never started": pending, "with GPUs": gpus} {
				if n < jobs/1000 {
					t.Errorf("%s: %d of %d records", name, n, jobs)
				}
			}
			for _, s := range []string{"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"} {
				if states[s] == 0 {
					t.Errorf("no %s record among %v", s, states)
				}
			}
			switch {
			case !steps && (mem > 0 || util > 0):
				t.Errorf("allocation lines only, yet %d memory and %d utilisation readings", mem, util)
			case steps && (mem < gpus/2 || util < gpus/2):
				t.Errorf("%d memory and %d utilisation readings for %d GPU jobs; want most of them", mem, util, gpus)
			}
		})
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	a, b, c := generated(t, 2000, 1, true), generated(t, 2000, 1, true), generated(t, 2000, 2, true)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same file")
	}
}

func TestWriteRefusesUnknownField(t *testing.T) {
	err := Write(io.Discard, Options{Jobs: 1, Fields: []string{"JobID", "NoSuchField"}})
	if err == nil || !strings.Contains(err.Error(), "NoSuchField") {
		t.Fatalf("err = %v, want one naming the field", err)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		name string
		s    int64
		want string
	}{
		{name: "zero", s: 0, want: "00:00:00"},
		{name: "minutes", s: 125, want: "00:02:05"},
		{name: "hours", s: 7322, want: "02:02:02"},
		{name: "days", s: 3*86400 + 61, want: "3-00:01:01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := duration(tt.s); got != tt.want {
				t.Errorf("duration(%d) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}
