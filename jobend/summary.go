package jobend

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// Summary is what the mail and the AdminComment say of one job.
type Summary struct {
	Cluster, JobID string
	// SlurmID is the id as Slurm prints it (53_1, 60+1), JobID's when
	// the same.
	SlurmID string
	// Profiled: at least one node's GPU profile exists. Without one the
	// summary says so and nothing else.
	Profiled bool
	// Final: every node closed its profile (the epilog ran); false
	// while a node still has the job running, the figures then being
	// those up to LastSample.
	Final      bool
	LastSample time.Time

	Metrics analysis.Metrics
	Class   analysis.Class
	// Hint is the first of the job's hints (analysis.Hints orders them
	// by rule, the most telling first); nil when none.
	Hint *analysis.Hint
}

// Summarise draws v's fact sheet under c (types: the GPU types of its
// cluster, nil when none known): the one show and the TUI's detail draw
// (analysis.ExamineView), so that the mail says what they say.
func Summarise(v store.JobView, c analysis.Config, types []analysis.GPUType) Summary {
	s := Summary{Cluster: v.Cluster, JobID: v.JobID, SlurmID: v.SlurmID(), Profiled: len(v.Profiles) > 0, Final: len(v.Profiles) > 0}
	for _, p := range v.Profiles {
		if p.Status == profile.StatusRunning {
			s.Final = false
		}
		if p.LastSample.After(s.LastSample) {
			s.LastSample = p.LastSample
		}
	}
	f := analysis.ExamineView(v.SchedView(), v.Profiles, c, types)
	s.Metrics, s.Class = f.Metrics, f.Class
	if len(f.Hints) > 0 {
		h := f.Hints[0]
		s.Hint = &h
	}
	return s
}

// maxLine bounds a body line; the mailer and the reader both cope with
// less.
const maxLine = 300

// MailText is the summary as the mail's body gets it: a separator line,
// then one short line per figure, each cleaned of control and escape
// characters (termtext.Clean) and cut, so that nothing in it can end the
// body or look like a header. loc is the zone of the instants (nil:
// local).
func (s Summary) MailText(loc *time.Location) string {
	var lines []string
	add := func(l string) {
		l, _ = termtext.Cut(termtext.Clean(l), maxLine)
		lines = append(lines, l)
	}
	add("-- ")
	add("GPU summary by gpuprof for job " + s.SlurmID + " (cluster " + s.Cluster + ")")
	if !s.Profiled {
		add("No GPU readings: gpuprof has no GPU profile of this job (a CPU job, or the node's agent did not see it).")
		return strings.Join(lines, "\n") + "\n"
	}
	m := s.Metrics
	shown := m.Shown()
	held := "GPUs held/used:  " + present.GPUs(shown.GPUs, shown.Used, shown.UsedKnown)
	if sh := present.ShardsOf(shown.Shards, shown.GPUs); sh != "" {
		held += " (" + sh + ")"
	}
	add(held)
	switch {
	case m.VRAMPeakValid && m.VRAMCard > 0:
		l := "VRAM peak:       " + present.GiB(m.VRAMPeak) + " of " + present.GiB(m.VRAMCard) + " GiB (" + present.WholePercent(m.VRAMPeakFrac) + " %)"
		if m.VRAMModel != "" {
			l += " on " + m.VRAMModel
		}
		add(l)
	case m.VRAMPeakBytesValid:
		add("VRAM peak:       " + present.GiB(m.VRAMPeak) + " GiB (card size unknown)")
	case m.Preallocated:
		add("VRAM peak:       not a need: the framework reserved " + present.WholePercent(m.VRAMReservedFrac) + " % of the card up front")
	default:
		add("VRAM peak:       not measured")
	}
	if m.UtilMeanValid {
		add("Utilisation:     mean " + present.Util(m.UtilMean) + " % (the share of time a kernel ran)")
	} else {
		add("Utilisation:     not measured")
	}
	if m.SMMeanValid {
		l := "SM activity:     mean " + present.Activity(m.SMMean) + " % (the share of the SMs busy)"
		if m.SMShared {
			l += ", of a GPU shared with other jobs"
		}
		add(l)
	} else {
		add("SM activity:     unknown (no GPM reading on this GPU)")
	}
	if m.IdleValid {
		add("Idle:            " + present.WholePercent(m.IdleFraction) + " % of the samples at 0 % utilisation")
	} else {
		add("Idle:            unknown")
	}
	add("Class:           " + s.Class.String())
	switch {
	case s.Hint == nil:
		add("Hint:            none: nothing to change")
	case s.Hint.Option != "":
		add("Hint:            #SBATCH " + s.Hint.Option)
		if s.Hint.Why != "" {
			add("                 " + s.Hint.Why)
		}
	default:
		add("Hint:            " + s.Hint.Why)
	}
	if !s.Final {
		l := "(The node had not closed the job's profile yet"
		if !s.LastSample.IsZero() {
			l += ": readings up to " + present.Instant(s.LastSample, loc)
		}
		add(l + ".)")
	}
	add("More: gpuprof show " + s.SlurmID)
	return strings.Join(lines, "\n") + "\n"
}

// CommentPrefix starts every AdminComment gpuprof writes; a comment that
// does not start with it is another tool's, never overwritten.
const CommentPrefix = "gpuprof:v1:"

// MaxComment bounds the AdminComment: a few hundred bytes, well under
// what slurmdbd's admin_comment column (text) and a portal's cell hold.
const MaxComment = 300

// AdminComment is the summary as a machine-readable AdminComment:
// CommentPrefix, then comma-separated key=value pairs, lowercase and
// quote-free so that sacctmgr stores it unchanged on every Slurm from
// 22.05 on (slurmext.AdminCommentSafe); a figure not measured is left
// out, never written as 0. docs/notices.md, "The summary in sacct",
// lists the keys:
//
//	gpuprof:v1:gpus=2,used=1,util=41,sm=22.5,idle=0.37,vram_gib=12.3,vram_frac=0.15,class=idle_allocation,hint=unused_gpus,final=1
func (s Summary) AdminComment() string {
	kv := []string{}
	add := func(k, v string) { kv = append(kv, k+"="+v) }
	if !s.Profiled {
		add("profile", "none")
	} else {
		m := s.Metrics
		shown := m.Shown()
		add("gpus", strconv.Itoa(shown.GPUs))
		if shown.UsedKnown {
			add("used", strconv.Itoa(shown.Used))
		}
		if m.UtilMeanValid {
			add("util", strconv.FormatFloat(max(m.UtilMean, 0), 'f', 0, 64))
		}
		if m.SMMeanValid {
			add("sm", strconv.FormatFloat(max(m.SMMean, 0), 'f', 1, 64))
		}
		if m.IdleValid {
			add("idle", strconv.FormatFloat(m.IdleFraction, 'f', 2, 64))
		}
		if m.VRAMPeakValid || m.VRAMPeakBytesValid {
			add("vram_gib", strconv.FormatFloat(float64(m.VRAMPeak)/(1<<30), 'f', 1, 64))
		}
		if m.VRAMPeakValid && m.VRAMCard > 0 {
			add("vram_frac", strconv.FormatFloat(m.VRAMPeakFrac, 'f', 2, 64))
		}
		add("class", s.Class.String())
		if s.Hint != nil {
			add("hint", s.Hint.Rule)
		}
		if s.Final {
			add("final", "1")
		} else {
			add("final", "0")
		}
	}
	// Numbers are written with strconv, not present: no digit
	// grouping, whose comma would split a pair.
	out := CommentPrefix + strings.Join(kv, ",")
	for len(out) > MaxComment && len(kv) > 0 {
		kv = kv[:len(kv)-1]
		out = CommentPrefix + strings.Join(kv, ",")
	}
	return out
}

// Ours says whether an AdminComment is empty or one gpuprof wrote, the
// only ones Annotate replaces.
func Ours(comment string) bool {
	c := strings.TrimSpace(comment)
	return c == "" || strings.HasPrefix(c, CommentPrefix)
}

// Find reads one job's view: jobsource.Source.Job, scoped to its caller.
type Find func(ctx context.Context, cluster, jobID string) (store.JobView, error)

// Await reads job id until every node has closed its profile (the
// epilog ran: the final figures) or until, then returns the last view
// read; found is false when no read found the job. Slurm sends the end
// mail and runs jobcomp as the nodes run their epilogs, so the first read
// may see the job still running. every is the pause between reads.
func Await(ctx context.Context, find Find, cluster, jobID string, until time.Time, every time.Duration) (v store.JobView, found bool, err error) {
	for {
		got, ferr := find(ctx, cluster, jobID)
		switch {
		case ferr == nil:
			v, found, err = got, true, nil
			if Closed(got) {
				return v, true, nil
			}
		case !found:
			err = ferr
		}
		wait := min(every, time.Until(until))
		if wait <= 0 {
			return v, found, err
		}
		select {
		case <-ctx.Done():
			return v, found, err
		case <-time.After(wait):
		}
	}
}

// Closed says whether v has profiles and none is still running, or is
// a job that ended without asking for a GPU (no profile will come): its
// figures are final.
func Closed(v store.JobView) bool {
	if len(v.Profiles) == 0 && v.Sched != nil && !v.Sched.End.IsZero() && v.Sched.ReqGPUs == 0 && v.Sched.ReqShards == 0 {
		return true
	}
	for _, p := range v.Profiles {
		if p.Status == profile.StatusRunning {
			return false
		}
	}
	return len(v.Profiles) > 0
}
