// Package yearsim makes the jobs of the simulated years (issue #42): the
// finished profiles an 8-GPU node records on a day of a realistic mix of
// short and long jobs, recorded the agent's way (every reading observed).
// The node's year (store) and the collector's (collect) both run on it,
// so their figures in docs/benchmarks.md describe the same days.
//
// It is for tests and benchmarks: it writes nothing and reads nothing.
package yearsim

import (
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// Kind is one kind of job a simulated node runs every day.
type Kind struct {
	Name     string
	PerDay   int
	GPUs     int
	Run      time.Duration
	Interval time.Duration // the agent's sampling interval for it
}

// Mix is an 8-GPU node's day (37 % of its GPU-hours busy): many short
// jobs, a few medium ones, one long training run.
var Mix = []Kind{
	{"short", 40, 1, 10 * time.Minute, time.Second},
	{"medium", 4, 2, 2 * time.Hour, time.Second},
	{"long", 1, 4, 12 * time.Hour, 10 * time.Second},
}

// Job is a finished job of kind k with key key starting at start,
// recorded the agent's way (every reading observed); seed varies its
// readings and its owner (one of 11 users, uids 1000–1010).
func Job(k Kind, key profile.Key, start time.Time, seed int) profile.Job {
	j := profile.Job{
		Key:            key,
		User:           fmt.Sprintf("user%d", seed%11),
		UID:            1000 + seed%11,
		GID:            100,
		Account:        "acct",
		Partition:      "gpu",
		Start:          start,
		Status:         profile.StatusRunning,
		Source:         profile.SourceAgent,
		SampleInterval: k.Interval,
	}
	n := int(k.Run / k.Interval)
	for g := range k.GPUs {
		gp := profile.NewGPU(gpu.Device{UUID: fmt.Sprintf("GPU-%08d-%s", g, key.Node), Name: "NVIDIA H100 80GB HBM3", Minor: g, MemoryTotal: 80 << 30},
			g, start, k.Interval, profile.DefaultMaxPoints)
		for i := range n {
			gp.Observe(profile.Reading{
				Time:      start.Add(time.Duration(i) * k.Interval),
				Util:      gpu.Some(uint32((i*7 + seed + g*13) % 101)),
				MemUsed:   gpu.Some(uint64(20<<30 + ((i+seed)%50)<<20)),
				PowerMW:   gpu.Some(uint32(300_000 + i%1000)),
				TempC:     gpu.Some(uint32(60 + i%20)),
				Processes: 1,
			}, k.Interval)
		}
		j.GPUs = append(j.GPUs, gp)
	}
	j.LastSample = start.Add(k.Run)
	j.Finish(start.Add(k.Run))
	return j
}

// Day calls fn with every job node ends on day (0 the first) of a year
// starting at day0, in start order within each kind: jobs spread evenly
// over the day. next numbers the jobs (it is advanced by one a job).
func Day(day0 time.Time, day int, cluster, node string, next *int, fn func(profile.Job) error) error {
	for _, k := range Mix {
		for n := range k.PerDay {
			*next++
			start := day0.AddDate(0, 0, day).Add(time.Duration(n) * 24 * time.Hour / time.Duration(k.PerDay))
			j := Job(k, profile.Key{Cluster: cluster, JobID: fmt.Sprint(*next), Node: node}, start, *next)
			if err := fn(j); err != nil {
				return err
			}
		}
	}
	return nil
}
