package cliview

// notices.go prints gpuprof notices: the notices the agents decided, with
// the jobs they are about.

import (
	"io"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// NoticesJSON is gpuprof notices --json: the rows as they are, an empty
// array (not null) when there is none.
func NoticesJSON(w io.Writer, rows []notice.Row) error {
	if rows == nil {
		rows = []notice.Row{}
	}
	return WriteJSON(w, rows)
}

// Notices prints gpuprof notices' rows, each as a heading line (time,
// job, node, user, rule in words, GPUs, status in words) with what was
// seen, the fix and, for a notice not sent, why, on the lines below; then
// how many of each status (notice.Counting). With no row it says there is
// none since since (zero: none at all). Instants are sacct's, in loc
// (nil: local).
func Notices(w io.Writer, rows []notice.Row, since time.Time, loc *time.Location) error {
	if len(rows) == 0 {
		switch {
		case !since.IsZero():
			printf(w, "No notices since %s.\n", slurmext.FormatTime(since, loc))
		default:
			printf(w, "No notices.\n")
		}
		return nil
	}
	for i, r := range rows {
		if i > 0 {
			printf(w, "\n")
		}
		job := "job " + termtext.Short(r.SlurmID, 64)
		if r.SlurmID != r.JobID {
			job += " (raw id " + termtext.Short(r.JobID, 64) + ")"
		}
		gpus := "GPUs -"
		if len(r.GPUs) > 0 {
			gpus = "GPU"
			if len(r.GPUs) > 1 {
				gpus = "GPUs"
			}
			gpus += " " + slurmext.FormatIndexList(r.GPUs)
		}
		status := analysis.NoticeStatusWords(r.Status)
		if r.Status == profile.NoticeSent && r.Recipient != "" {
			status += " to " + termtext.Short(r.Recipient, 120)
		}
		printf(w, "%s  %s on %s  user %s  %s  %s  %s\n", slurmext.FormatTime(r.Time, loc), job, termtext.Short(r.Node, 64),
			present.OrMissing(termtext.Short(r.User, 32)), analysis.NoticeRuleWords(r.Rule), gpus, termtext.Short(status, 200))
		if r.JobName != "" {
			printf(w, "    job name:  %s\n", termtext.Short(r.JobName, 120))
		}
		if r.Evidence != "" {
			printf(w, "    seen:      %s\n", termtext.Short(r.Evidence, 600))
		}
		if !r.Since.IsZero() {
			printf(w, "    since:     %s\n", slurmext.FormatTime(r.Since, loc))
		}
		if r.Fix != "" {
			printf(w, "    next time: %s\n", termtext.Short(r.Fix, 200))
		}
		if r.Detail != "" {
			printf(w, "    detail:    %s\n", termtext.Short(r.Detail, 400))
		}
	}
	printf(w, "\n%s\n", notice.Counting(statuses(rows)))
	return nil
}

// statuses are the rows' notice statuses, in order, for notice.Counting.
func statuses(rows []notice.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Status
	}
	return out
}
