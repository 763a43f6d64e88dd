package notice

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/internal/texttable"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// DayWindow is the local day [00:00, next 00:00), in now's location,
// that holds the instant spec names: any form slurmext.ParseTimeSpec
// takes (2026-12-03, yesterday, today, 12/03).
func DayWindow(spec string, now time.Time) (analysis.Window, error) {
	t, err := slurmext.ParseTimeSpec(spec, now)
	if err != nil {
		return analysis.Window{}, err
	}
	t = t.In(now.Location())
	from := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, now.Location())
	return analysis.Window{From: from, To: from.AddDate(0, 0, 1)}, nil
}

// Digest is what the admins' digest of one day (gpuprof notices digest)
// says: the GPU-hours held and idle, in all and per user, and how many
// notices each user's jobs got. The notices themselves are the caller's
// to list.
type Digest struct {
	Window    analysis.Window
	Now       time.Time // the day is cut here when it has not ended
	Clusters  []string
	Jobs      int
	HeldHours float64
	IdleHours float64
	Measured  float64 // GPU-hours with readings, of which IdleHours were idle
	// Users are those who held idle GPUs or got notices, most idle first
	// (ties by name).
	Users []DigestUser
	// Notices are the day's, in the order SummariseDay was given them.
	Notices []Row
}

// DigestUser is one user's line in the digest.
type DigestUser struct {
	Name      string
	IdleHours float64
	HeldHours float64
	Jobs      int
	Notices   int
}

// SummariseDay sums the day in (every user's jobs, read for the window
// w with the clock at now) per user, by the monthly report's rule
// (analysis.SummariseWorkload: each GPU's idle fraction × its hours in
// the day, a never-touched allocation fully), with the day's notices
// counted per user. The clusters are those of the day's jobs and of the
// notices.
func SummariseDay(in analysis.Input, w analysis.Window, now time.Time, notices []Row, c analysis.Config) Digest {
	d := Digest{Window: w, Now: now, Notices: notices}
	seen := map[string]bool{}
	for i := range in.Jobs {
		seen[in.Jobs[i].Cluster] = true
	}
	perUser := map[string]int{}
	for _, n := range notices {
		perUser[n.User]++
		seen[n.Cluster] = true
	}
	for k := range seen {
		d.Clusters = append(d.Clusters, k)
	}
	slices.Sort(d.Clusters)
	wl := analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: w, TopN: max(len(in.Jobs), 1)}, c)
	d.Jobs = wl.Headline.Jobs
	d.HeldHours = wl.Headline.AllocatedGPUHours
	d.IdleHours = wl.Headline.IdleGPUHours
	d.Measured = wl.Headline.MeasuredGPUHours
	for _, u := range wl.Users {
		if u.IdleGPUHours <= 0 && perUser[u.Name] == 0 {
			continue
		}
		d.Users = append(d.Users, DigestUser{Name: u.Name, IdleHours: u.IdleGPUHours, HeldHours: u.GPUHours,
			Jobs: u.Jobs, Notices: perUser[u.Name]})
		delete(perUser, u.Name)
	}
	for name, n := range perUser { // notices of users with no GPU-hours that day
		d.Users = append(d.Users, DigestUser{Name: name, Notices: n})
	}
	slices.SortFunc(d.Users, func(a, b DigestUser) int {
		return cmp.Or(cmp.Compare(b.IdleHours, a.IdleHours), strings.Compare(a.Name, b.Name))
	})
	return d
}

// Subject is the digest's mail subject.
func (d Digest) Subject() string {
	where := "the cluster"
	if len(d.Clusters) > 0 {
		where = strings.Join(d.Clusters, ", ")
	}
	return fmt.Sprintf("gpuprof: idle GPUs on %s, %s", termtext.Short(where, 80), d.Window.From.Format("2006-01-02"))
}

// WriteBody writes the digest's text: the day's idle GPU-hours, the users
// who held idle GPUs (most idle first) and the notices sent.
func (d Digest) WriteBody(w io.Writer) {
	printf := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	day := d.Window.From.Format("2006-01-02")
	upTo := ""
	if d.Now.Before(d.Window.To) {
		upTo = " up to " + d.Now.Format("15:04")
	}
	printf("Idle GPUs on %s%s (local time), from gpuprof's readings.\n\n", day, upTo)
	if d.HeldHours == 0 && len(d.Notices) == 0 {
		printf("No GPU was held that day.\n")
		return
	}
	share := ""
	if d.Measured > 0 {
		share = fmt.Sprintf(" (%s of the %s GPU-hours with readings)", present.Percent(d.IdleHours/d.Measured), present.GPUHours(d.Measured))
	}
	printf("%s GPU-hours were held by %s; %s GPU-hours of them were idle%s.\n",
		present.GPUHours(d.HeldHours), present.Count(d.Jobs, "job", "jobs"), present.GPUHours(d.IdleHours), share)
	if len(d.Users) == 0 {
		printf("\nNobody held an idle GPU.\n")
	} else {
		printf("\nWho held idle GPUs:\n\n")
		tb := texttable.New("USER", "IDLE GPU-HOURS", "HELD GPU-HOURS", "JOBS", "NOTICES")
		tb.Right[1], tb.Right[2], tb.Right[3], tb.Right[4] = true, true, true, true
		for _, u := range d.Users {
			tb.Row(present.OrMissing(termtext.Short(u.Name, 32)), present.GPUHours(u.IdleHours), present.GPUHours(u.HeldHours),
				fmt.Sprint(u.Jobs), fmt.Sprint(u.Notices))
		}
		_ = tb.Write(w)
	}
	if len(d.Notices) == 0 {
		printf("\nNo notices that day.\n")
		return
	}
	statuses := make([]string, len(d.Notices))
	for i, n := range d.Notices {
		statuses[i] = n.Status
	}
	printf("\nNotices that day (%s):\n\n", Counting(statuses))
	for _, n := range d.Notices {
		printf("%s  job %s  user %s  %s  %s\n", n.Time.In(d.Window.From.Location()).Format("15:04:05"),
			termtext.Short(n.SlurmID, 64), present.OrMissing(termtext.Short(n.User, 32)), analysis.NoticeRuleWords(n.Rule),
			analysis.NoticeStatusWords(n.Status))
		if n.Evidence != "" {
			printf("    %s\n", termtext.Short(n.Evidence, 300))
		}
	}
	printf("\ngpuprof notices --since %s --until %s lists them with their fixes.\n",
		day, d.Window.To.Format("2006-01-02"))
}

// Counting is the line that counts notices by status, most first (ties
// by status): "3 notices: 2 sent, 1 not sent: daily cap", for the
// notices with these statuses.
func Counting(statuses []string) string {
	counts := map[string]int{}
	var order []string
	for _, s := range statuses {
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	slices.SortFunc(order, func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	})
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[s], analysis.NoticeStatusWords(s))
	}
	word := "notices"
	if len(statuses) == 1 {
		word = "notice"
	}
	return fmt.Sprintf("%d %s: %s", len(statuses), word, strings.Join(parts, ", "))
}

// SendDigest mails the digest (subject and body) to to through the
// [notices] mail program (notices.sendmail, bounded by
// notices.send_timeout), From notices.from, composed as every notice is
// (Compose: one recipient, sanitised headers and body). It works whether
// or not notices are enabled on this host: the digest is the admins' own
// mail.
func SendDigest(ctx context.Context, c config.NoticesConfig, to, subject, body string, now time.Time) error {
	msg, err := Compose(Message{From: c.From, To: to, Subject: subject, Body: body,
		Date: now, ID: "digest." + now.Format("20060102")})
	if err != nil {
		return fmt.Errorf("notices digest: %w", err)
	}
	m := Mailer{Program: c.Sendmail, Timeout: time.Duration(c.SendTimeout)}
	if err := m.Send(ctx, to, msg); err != nil {
		return fmt.Errorf("notices digest: mail to %s: %w", to, err)
	}
	return nil
}
