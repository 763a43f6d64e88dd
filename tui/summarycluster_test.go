package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// confSource is a fakeSource that knows the Slurm configuration of each
// cluster, as the CLI's source does (only a cluster's own slurm.conf), and
// records which clusters it was asked about.
type confSource struct {
	*fakeSource
	asked []string
}

func newConfSource(jobs []store.JobView) *confSource {
	s := &confSource{fakeSource: &fakeSource{jobs: jobs, admin: true}}
	s.clusterConf = func(cluster string) (analysis.ConfUse, []slurmext.NodeGres) {
		s.asked = append(s.asked, cluster)
		return analysis.ConfUse{Cluster: cluster, NotUsed: "slurm.conf /etc/slurm/slurm.conf is cluster lab2's, the jobs are " + cluster + "'s: not used"}, nil
	}
	return s
}

// TestSummaryOfOneCluster: the month's summary is of one cluster, counted
// with that cluster's own Slurm configuration (asked for by name), and
// shows the line on a slurm.conf of another cluster left aside; a month
// holding jobs of two clusters is not summarised, and says to choose one.
func TestSummaryOfOneCluster(t *testing.T) {
	cfg := analysis.DefaultConfig()
	src := newConfSource(genJobs(40))
	res, err := loadSummary(context.Background(), src, "", testNow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(src.asked, ",") != "hpc" || !strings.Contains(res.notUsed, "the jobs are hpc's: not used") {
		t.Errorf("asked %v, not used %q; want hpc's configuration and its line", src.asked, res.notUsed)
	}
	m := New(context.Background(), src, Identity{User: "root", Admin: true}, Options{NoColor: true, Now: func() time.Time { return testNow }})
	m = drive(t, m, m.Init())
	m = send(t, m, tea.WindowSizeMsg{Width: 200, Height: 40})
	m = press(t, m, "m")
	if out := m.render(); !strings.Contains(out, "is cluster lab2's, the jobs are hpc's: not used") {
		t.Errorf("the summary does not show the line:\n%s", out)
	}

	two := newConfSource(genJobs(40))
	for i := range two.jobs {
		if i%2 == 0 {
			two.jobs[i].Cluster = "dlrm"
			if two.jobs[i].Sched != nil {
				s := *two.jobs[i].Sched
				s.Cluster = "dlrm"
				two.jobs[i].Sched = &s
			}
		}
	}
	_, err = loadSummary(context.Background(), two, "", testNow, cfg)
	if err == nil || !strings.Contains(err.Error(), "this month's jobs are of 2 clusters (dlrm, hpc)") || !strings.Contains(err.Error(), "--cluster") || len(two.asked) != 0 {
		t.Errorf("two clusters: %v (asked %v), want a refusal naming both", err, two.asked)
	}
}
