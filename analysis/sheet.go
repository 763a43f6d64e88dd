package analysis

import (
	"strings"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// Sheet is the fact sheet of one job: the analysis' findings (Examine)
// with, node by node and GPU by GPU, what was recorded there: each GPU's
// facts, its GPM activity and its XID errors, the notices decided for
// the job on each node, and the job's caveats. gpuprof show, the
// terminal UI's detail and the job-end mail draw this one value
// (ExamineView builds it), and the notice mail's evidence takes its GPUs'
// figures and XIDs from the sheet's GPU part (SheetGPU), so that no two
// of them work out a fact of the job each its own way (issue #41).
type Sheet struct {
	JobFindings
	// Job is the job as the analysis sees it (FromView).
	Job Job
	// Nodes are the job's profiles, in the view's order.
	Nodes []NodeSheet
	// Flags are the job's caveats in words: GPUs never used, memory a
	// framework reserved, a shared GPU, readings missing part of the job
	// ("partial data on gpu01: …"), the recorder's node names and
	// reasons made safe for a terminal (termtext.Clean) piece by piece.
	Flags []string
}

// NodeSheet is what one node's agent recorded of the job.
type NodeSheet struct {
	Profile *profile.Job
	// GPUs are the profile's GPUs, in its order.
	GPUs []GPUSheet
	// Notices are the notices decided for the job on the node, oldest
	// first (profile.Job.Notices), each worded by NoticeLine.
	Notices []profile.Notice
}

// GPUSheet is one GPU of a job's fact sheet.
type GPUSheet struct {
	// GPU holds the readings (their timelines, processes, temperature).
	GPU *profile.GPU
	// Facts are utilisation, memory, energy and caveats as every page
	// writes them.
	Facts present.GPUFacts
	// Activity is what GPM measured beside the duty cycle; nil where no
	// GPM reading came (a GPU before Hopper, an older profile).
	Activity *ActivityFacts
	XIDs     XIDList
}

// ActivityFacts are a GPU's GPM metrics: SM and tensor activity and DRAM
// bandwidth, and whose activity they are (profile.ActivityScope*).
type ActivityFacts struct {
	SM, Tensor, DRAM Stat
	Scope            string
}

// Stat is a GPM metric's mean and p95, percent; Known is false without a
// reading, P95Known without a p95.
type Stat struct {
	Mean, P95       float64
	Known, P95Known bool
}

// String writes the metric as show and the TUI's detail do
// (present.ActivityStat: "mean 4.5 %, p95 12 %"), present.Missing
// without a reading.
func (s Stat) String() string {
	if !s.Known {
		return present.Missing
	}
	return present.ActivityStat(s.Mean, s.P95, s.P95Known)
}

func statOf(st profile.ActivityStat) Stat {
	var s Stat
	s.Mean, s.Known = st.Mean()
	s.P95, s.P95Known = st.Percentile(95)
	return s
}

// XIDList is the XID errors seen on one GPU during a job: how many came
// (exact), and each code kept once, in order of first appearance, with
// its class (the policy table gpu.XID) and how often it came among those
// kept (profile.MaxXIDs of them).
type XIDList struct {
	Count int
	Codes []XIDCode
}

// XIDCode is one XID code of a GPU and how often it came.
type XIDCode struct {
	Code  uint64
	Class gpu.XIDClass
	N     int
}

// String writes the code with its name, class and count (present.XID).
func (x XIDCode) String() string { return present.XID(x.Code, x.N) }

// Kept is how many XID events are kept (Count when no more came than
// profile.MaxXIDs).
func (x XIDList) Kept() int {
	n := 0
	for _, c := range x.Codes {
		n += c.N
	}
	return n
}

// ByClass counts the kept events of class c.
func (x XIDList) ByClass(c gpu.XIDClass) int {
	n := 0
	for _, k := range x.Codes {
		if k.Class == c {
			n += k.N
		}
	}
	return n
}

// XIDsOf lists the XIDs of a GPU that saw count of them, xids the events
// kept: the one rule the sheet (and so show, the TUI's detail and the
// notice mail) lists them by.
func XIDsOf(count int, xids []profile.XID) XIDList {
	out := XIDList{Count: count}
	at := map[uint64]int{}
	for _, x := range xids {
		i, ok := at[x.Code]
		if !ok {
			i = len(out.Codes)
			at[x.Code] = i
			out.Codes = append(out.Codes, XIDCode{Code: x.Code, Class: gpu.XID(x.Code).Class})
		}
		out.Codes[i].N++
	}
	return out
}

// ExamineView builds the fact sheet of the job whose scheduler record is
// rec (nil: none) and whose node profiles are profiles, the two halves of
// a store.JobView, under c; types are the GPU types of its cluster (nil:
// none known), which a hint may suggest a smaller one of.
func ExamineView(rec *slurmext.JobRecord, profiles []profile.Job, c Config, types []GPUType) Sheet {
	j := FromView(rec, profiles)
	s := Sheet{JobFindings: Examine(j, c, types), Job: j, Nodes: make([]NodeSheet, len(profiles))}
	// j.GPUs holds the analysis' view of the profiles' GPUs, one per GPU
	// in this order (FromView): their facts are not worked out again.
	i := 0
	for n := range profiles {
		p := &profiles[n]
		ns := NodeSheet{Profile: p, GPUs: make([]GPUSheet, len(p.GPUs)), Notices: p.Notices}
		for k := range p.GPUs {
			g := &p.GPUs[k]
			var ag GPU
			if i < len(j.GPUs) {
				ag = j.GPUs[i]
			} else {
				ag = fromProfileGPU(p.Node, g)
			}
			i++
			ns.GPUs[k] = gpuSheet(g, &ag)
		}
		s.Nodes[n] = ns
	}
	s.Flags = jobFlags(&s.Metrics, profiles)
	return s
}

// gpuSheet is one GPU's part of the sheet; ag is the analysis' view of g.
func gpuSheet(g *profile.GPU, ag *GPU) GPUSheet {
	gs := GPUSheet{GPU: g, Facts: ag.Facts(), XIDs: XIDsOf(g.XIDCount, g.XIDs)}
	if a := g.Activity; a != nil {
		gs.Activity = &ActivityFacts{SM: statOf(a.SM), Tensor: statOf(a.Tensor), DRAM: statOf(a.DRAM), Scope: a.Scope}
	}
	return gs
}

// jobFlags are the job's caveats (Sheet.Flags) from its measures m and
// its profiles.
func jobFlags(m *Metrics, profiles []profile.Job) []string {
	var fs []string
	if n := m.IdleAllocatedGPUs; n > 0 {
		fs = append(fs, "idle allocation: "+present.Count(n, "GPU", "GPUs")+" never touched by a process")
	}
	if m.Preallocated {
		fs = append(fs, "preallocated memory: the peak is what a framework reserved, not what it needed")
	}
	if m.Shared {
		fs = append(fs, "shared GPU: readings are the job's processes', energy not attributable")
	}
	for i := range profiles {
		p := &profiles[i]
		if !p.Partial {
			continue
		}
		reasons := "reason not recorded"
		if len(p.PartialReasons) > 0 {
			reasons = strings.Join(p.PartialReasons, "; ")
		}
		fs = append(fs, "partial data on "+termtext.Clean(p.Node)+": "+termtext.Clean(reasons))
	}
	return fs
}

// SheetGPU is one recorded GPU's part of a fact sheet, for a page that
// shows a GPU alone (ExamineView makes those of a job).
func SheetGPU(node string, g *profile.GPU) GPUSheet {
	ag := fromProfileGPU(node, g)
	return gpuSheet(g, &ag)
}
