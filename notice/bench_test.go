package notice

import (
	"testing"
	"time"
)

// BenchmarkTick is the rules' cost per sampling tick of one 8-GPU job:
// eight readings observed and one evaluation, the work the agent adds per
// job and tick with notices on.
func BenchmarkTick(b *testing.B) {
	r := testRules()
	r.Oversized = OversizedRule{Enabled: true, Window: time.Hour, UtilBelow: 30, MemoryShare: 0.25, Margin: 1.2, Shards: true}
	r.CancelGrace = time.Hour
	gpus := gpusOf(8, 80*gib)
	tr := NewTracker(r, 8, nil)
	tr.AllowCancel()
	rd := *busyRd()
	now := t0
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(time.Second)
		rd.Time = now
		for i := range gpus {
			tr.Observe(i, rd)
		}
		tr.Evaluate(now, t0, gpus)
	}
}
