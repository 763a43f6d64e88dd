package notice

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
)

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
}

// DigestUser is one user's line in the digest.
type DigestUser struct {
	Name      string
	IdleHours float64
	HeldHours float64
	Jobs      int
	Notices   int
}

// DigestNotice is what the digest counts of a notice of the day: whose
// job it was about, and on which cluster.
type DigestNotice struct {
	User, Cluster string
}

// SummariseDay sums the day in (every user's jobs, read for the window
// w with the clock at now) per user, by the monthly report's rule
// (analysis.SummariseWorkload: each GPU's idle fraction × its hours in
// the day, a never-touched allocation fully), with the day's notices
// counted per user. clusters are those of the day's jobs; the notices'
// are added.
func SummariseDay(in analysis.Input, w analysis.Window, now time.Time, clusters []string, notices []DigestNotice, c analysis.Config) Digest {
	d := Digest{Window: w, Now: now}
	seen := map[string]bool{}
	for _, k := range clusters {
		seen[k] = true
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
