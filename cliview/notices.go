package cliview

// notices.go prints gpuprof notices: the notices the agents decided, with
// the jobs they are about.

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
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
// how many of each status (NoticeCounting). With no row it says there is
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
		job := "job " + Clean(r.SlurmID, 64)
		if r.SlurmID != r.JobID {
			job += " (raw id " + Clean(r.JobID, 64) + ")"
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
			status += " to " + Clean(r.Recipient, 120)
		}
		printf(w, "%s  %s on %s  user %s  %s  %s  %s\n", slurmext.FormatTime(r.Time, loc), job, Clean(r.Node, 64),
			OrDash(Clean(r.User, 32)), analysis.NoticeRuleWords(r.Rule), gpus, Clean(status, 200))
		if r.JobName != "" {
			printf(w, "    job name:  %s\n", Clean(r.JobName, 120))
		}
		if r.Evidence != "" {
			printf(w, "    seen:      %s\n", Clean(r.Evidence, 600))
		}
		if !r.Since.IsZero() {
			printf(w, "    since:     %s\n", slurmext.FormatTime(r.Since, loc))
		}
		if r.Fix != "" {
			printf(w, "    next time: %s\n", Clean(r.Fix, 200))
		}
		if r.Detail != "" {
			printf(w, "    detail:    %s\n", Clean(r.Detail, 400))
		}
	}
	printf(w, "\n%s\n", NoticeCounting(rows))
	return nil
}

// NoticeCounting is the last line of the notices listing (and of the
// digest's): "3 notices: 2 sent, 1 not sent: daily cap", the statuses
// most frequent first.
func NoticeCounting(rows []notice.Row) string {
	counts := map[string]int{}
	var order []string
	for _, r := range rows {
		if counts[r.Status] == 0 {
			order = append(order, r.Status)
		}
		counts[r.Status]++
	}
	slices.SortFunc(order, func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	})
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[s], analysis.NoticeStatusWords(s))
	}
	word := "notices"
	if len(rows) == 1 {
		word = "notice"
	}
	return fmt.Sprintf("%d %s: %s", len(rows), word, strings.Join(parts, ", "))
}
