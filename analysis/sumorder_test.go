package analysis

import (
	"math/rand"
	"testing"
	"time"
)

// The sums of GPU-hours are the same in every order of the jobs (the store
// hands a large window over in no particular order), and the workload's
// headline and the cluster summary print one number, to the last digit:
// random placed months (whole GPUs, shards, jobs running past the
// window) with a planted task of 1,000.5 GPU-hours, shuffled. Fails on
// float sums of hours, which follow the order of their terms.
func TestGPUHoursSameInEveryOrder(t *testing.T) {
	for seed := range int64(8) {
		r := rand.New(rand.NewSource(seed))
		in := randomPlacedMonth(r)
		// A 500-hour run on two GPUs and five 6-minute runs on one.
		at := march.From.Add(time.Hour)
		in.Jobs = append(in.Jobs, ran("pat", at, at.Add(500*time.Hour)))
		in.Jobs[len(in.Jobs)-1].ReqGPUs = 2
		for k := range 5 {
			s := at.Add(time.Duration(k+1) * 24 * time.Hour)
			in.Jobs = append(in.Jobs, ran("pat", s, s.Add(6*time.Minute)))
			in.Jobs[len(in.Jobs)-1].ReqGPUs = 1
		}
		c := DefaultConfig()
		var want Findings
		for k := range 12 {
			if k > 0 {
				r.Shuffle(len(in.Jobs), func(a, b int) { in.Jobs[a], in.Jobs[b] = in.Jobs[b], in.Jobs[a] })
			}
			f, err := Analyse(in, c)
			if err != nil {
				t.Fatal(err)
			}
			w := SummariseWorkload(in, WorkloadParams{Window: march}, c)
			if w.Headline.AllocatedGPUHours != f.Summary.GPUHours {
				t.Errorf("seed %d, order %d: headline %.17g GPU-hours, summary %.17g", seed, k, w.Headline.AllocatedGPUHours, f.Summary.GPUHours)
			}
			if k == 0 {
				want = f
				continue
			}
			if f.Summary.GPUHours != want.Summary.GPUHours || f.Counting.OpenGPUHours != want.Counting.OpenGPUHours {
				t.Errorf("seed %d, order %d: summary %.17g, open %.17g GPU-hours; first order %.17g, %.17g", seed, k,
					f.Summary.GPUHours, f.Counting.OpenGPUHours, want.Summary.GPUHours, want.Counting.OpenGPUHours)
			}
			for i, p := range f.Profiles {
				if q := want.Profiles[i]; p.TaskKey != q.TaskKey || p.GPUHours != q.GPUHours {
					t.Errorf("seed %d, order %d: task %d is %v %.17g GPU-hours, first order %v %.17g", seed, k, i, p.TaskKey, p.GPUHours, q.TaskKey, q.GPUHours)
				}
			}
			for i, p := range f.Summary.Partitions {
				if p.GPUHours != want.Summary.Partitions[i].GPUHours {
					t.Errorf("seed %d, order %d: partition %q %.17g GPU-hours, first order %.17g", seed, k, p.Partition, p.GPUHours, want.Summary.Partitions[i].GPUHours)
				}
			}
		}
	}
}
