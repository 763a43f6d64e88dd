package capacity

import (
	"cmp"
	"fmt"
	"github.com/gpuprof/gpuprof/internal/present"
	"slices"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
)

// leftOuts counts the jobs a replay leaves out, grouped by reason, and the
// GPU-hours of every GPU job of the window, counted as every output
// counts GPU time (analysis.GPUHoursCounter), so that the left-out share is of the same
// GPU-hours the report shows.
type leftOuts struct {
	gh     *analysis.GPUHoursCounter
	jobs   int
	total  analysis.ExactSum // the same in every order of the jobs
	groups map[leftOutKey]*leftOutGroup
}

// leftOutKey is one reason: its kind, the partition (or QOS) it is about,
// the GPU type asked for, and what the partition has.
type leftOutKey struct {
	kind, part, typ string
	have            int
}

type leftOutGroup struct {
	key   leftOutKey
	jobs  int
	hours analysis.ExactSum
	asked int // the most any of its jobs asked for
	ids   []string
}

// leftOutIDs is how many job ids each reason keeps.
const leftOutIDs = 5

func newLeftOuts(in analysis.Input, w analysis.Window) *leftOuts {
	win := analysis.Input{Jobs: in.Jobs, Nodes: in.Nodes, Window: w, Now: in.Now}
	return &leftOuts{gh: analysis.NewGPUHoursCounter(&win), groups: map[leftOutKey]*leftOutGroup{}}
}

// count adds the job's GPU-hours in the window to the total and returns
// them.
func (l *leftOuts) count(j *analysis.Job) float64 {
	h := l.gh.GPUHours(j)
	l.jobs++
	l.total.Add(h)
	return h
}

// leave records a job left out for the reason k; asked is what it asks
// for that the reason is about, hours its GPU-hours (count's).
func (l *leftOuts) leave(j *analysis.Job, k leftOutKey, asked int, hours float64) {
	g := l.groups[k]
	if g == nil {
		g = &leftOutGroup{key: k}
		l.groups[k] = g
	}
	g.jobs++
	g.hours.Add(hours)
	g.asked = max(g.asked, asked)
	if len(g.ids) < leftOutIDs {
		g.ids = append(g.ids, j.ID)
	}
}

// fill writes the counts into s (whose Replayed is set).
func (l *leftOuts) fill(s *SimJobs) {
	s.GPUJobs, s.LeftOut, s.GPUHours = l.jobs, 0, l.total.Float()
	var leftOut analysis.ExactSum // the groups come in the map's order
	s.LeftOutReasons, s.LeftOutWhy = []LeftOutReason{}, []string{}
	for _, g := range l.groups {
		s.LeftOut += g.jobs
		leftOut.AddSum(g.hours)
		need, hw := g.need()
		s.LeftOutReasons = append(s.LeftOutReasons, LeftOutReason{Kind: g.key.kind, Text: g.text(), Jobs: g.jobs, GPUHours: g.hours.Float(), JobIDs: g.ids,
			Partition: g.key.part, GPUType: g.key.typ, Asked: g.asked, Have: g.key.have, Need: need, Hardware: hw})
	}
	s.LeftOutGPUHours = leftOut.Float()
	slices.SortFunc(s.LeftOutReasons, func(a, b LeftOutReason) int {
		if c := cmp.Compare(b.Jobs, a.Jobs); c != 0 {
			return c
		}
		return cmp.Compare(a.Text, b.Text)
	})
	for _, r := range s.LeftOutReasons {
		s.LeftOutWhy = append(s.LeftOutWhy, fmt.Sprintf("%d: %s", r.Jobs, r.Text))
	}
	switch {
	case s.LeftOut == 0:
		s.LeftOutShare = 0
	case s.GPUHours > 0:
		s.LeftOutShare = s.LeftOutGPUHours / s.GPUHours
	default:
		s.LeftOutShare = float64(s.LeftOut) / float64(max(s.GPUJobs, s.LeftOut+s.Replayed))
	}
}

// need says what the group's jobs need that the cluster lacks, and
// whether nodes or GPUs would give it (hardware) rather than a policy.
func (g *leftOutGroup) need() (string, bool) {
	k := g.key
	of := ""
	if k.typ != "" {
		of = " of type " + k.typ
	}
	switch k.kind {
	case LeftOutGPUs:
		return fmt.Sprintf("a node of %s%s in partition %s", present.Count(g.asked, "GPU", "GPUs"), of, k.part), true
	case LeftOutShards:
		return fmt.Sprintf("GPUs%s of %d shards each in partition %s", of, g.asked, k.part), true
	case LeftOutGPUType:
		return fmt.Sprintf("a node with GPUs of type %s in partition %s", k.typ, k.part), true
	case LeftOutNodes:
		return fmt.Sprintf("%s%s with room for their GPUs in partition %s", present.Count(g.asked, "node", "nodes"), of, k.part), true
	case LeftOutPartition:
		return fmt.Sprintf("partition %s, which the cluster's configuration lacks", k.part), false
	case LeftOutQOS:
		return fmt.Sprintf("QOS %s to allow %s (a policy, not a purchase)", k.part, present.Count(g.asked, "GPU", "GPUs")), false
	case LeftOutTimeLimit:
		return fmt.Sprintf("partition %s's MaxTime raised to %s (a policy, not a purchase)", k.part, present.Duration(time.Duration(g.asked)*time.Second)), false
	case LeftOutNoRecord:
		return "a scheduler record with a submit time (nothing to buy)", false
	}
	return k.kind, false
}

// text says the reason in words.
func (g *leftOutGroup) text() string {
	k := g.key
	in := "partition " + k.part
	if k.typ != "" {
		in = fmt.Sprintf("type %s in partition %s", k.typ, k.part)
	}
	switch k.kind {
	case LeftOutNoRecord:
		return "no scheduler record, or no eligible or submit time in it"
	case LeftOutPartition:
		return fmt.Sprintf("partition %q not in the cluster", k.part)
	case LeftOutQOS:
		return fmt.Sprintf("more GPUs (up to %d) than QOS %s allows (%d)", g.asked, k.part, k.have)
	case LeftOutTimeLimit:
		return fmt.Sprintf("a time limit (up to %s) above partition %s's MaxTime (%s)",
			present.Duration(time.Duration(g.asked)*time.Second), k.part, present.Duration(time.Duration(k.have)*time.Second))
	case LeftOutGPUType:
		return fmt.Sprintf("GPU type %q, which no node of partition %s has", k.typ, k.part)
	case LeftOutShards:
		if k.have == 0 {
			return fmt.Sprintf("shards (up to %d per GPU), but no GPU of %s has shards", g.asked, in)
		}
		return fmt.Sprintf("more shards per GPU (up to %d) than a GPU of %s has (%d)", g.asked, in, k.have)
	case LeftOutGPUs:
		return fmt.Sprintf("more GPUs on one node (up to %d) than a node of %s has (%d)", g.asked, in, k.have)
	case LeftOutNodes:
		return fmt.Sprintf("more nodes (up to %d) than %s has with room for their GPUs (%d)", g.asked, in, k.have)
	}
	return k.kind
}
