package store

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSetSchedArgsReused: insertFresh reuses one args slice for every row,
// and setSchedArgs keeps a value equal to the row before's. Whatever the
// row before was, the values are those of a fresh slice (schedArgs), of the
// same types: a column that turns NULL, a number that equals the one
// before in another type, a string that changes.
func TestSetSchedArgsReused(t *testing.T) {
	at := time.Unix(1_790_000_000, 0)
	full := rec("7", "COMPLETED", at, at.Add(time.Hour), "sacct")
	full.Submit, full.Eligible = at.Add(-time.Minute), at.Add(-time.Minute)
	full.TimeLimit = 2 * time.Hour
	full.UID, full.User, full.Account, full.Partition, full.QOS = 1000, "alice", "a", "gpu", "normal"
	full.ReqTRES, full.AllocTRES, full.GPUsFrom = "gres/gpu=1", "gres/gpu=1", slurmext.GPUsFromReqTRES
	full.SlurmGPUMem, full.SlurmGPUMemValid = 1<<30, true
	full.SlurmGPUUtil, full.SlurmGPUUtilValid = 42.5, true
	full.Usage = slurmext.HostUsage{TotalCPU: 90 * time.Second, TotalCPUValid: true, MemPeak: 1 << 20, MemPeakValid: true,
		ReqMem: 2 << 20, ReqMemValid: true, TotalCPURead: true, MemPeakRead: true}
	full.NodeList, full.NodeCount, full.CPUs, full.ReqGPUs = "gpu01", 1, 8, 1

	bare := rec("8", "FAILED", time.Time{}, time.Time{}, "sacct")
	bare.Unlimited = true

	other := full
	other.JobID, other.Name, other.State = "9", "train", "TIMEOUT"
	other.TimeLimit = 0
	other.SlurmGPUUtil = math.Copysign(0, -1) // -0: not == 0 by its bits
	other.Usage.TotalCPU = 0                  // 0 s where 90 s was: a float
	other.UID = 0

	rows := []slurmext.JobRecord{full, bare, other, full, other, bare, bare, full, full}
	args := make([]any, schedColumnCount)
	for i, r := range rows {
		r = NormalizeRecord(r)
		setSchedArgs(args, r, int64(i))
		want := schedArgs(r, int64(i))
		if len(want) != schedColumnCount-1 {
			t.Fatalf("schedArgs: %d values, want %d", len(want), schedColumnCount-1)
		}
		for c := range want {
			if !reflect.DeepEqual(args[c], want[c]) || reflect.TypeOf(args[c]) != reflect.TypeOf(want[c]) ||
				isNegZero(args[c]) != isNegZero(want[c]) {
				t.Errorf("row %d (job %s), column %d: %#v reused, want %#v", i, r.JobID, c, args[c], want[c])
			}
		}
	}
}

func isNegZero(v any) bool {
	f, ok := v.(float64)
	return ok && f == 0 && math.Signbit(f)
}
