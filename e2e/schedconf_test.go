package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSchedConfAsSlurmReadsIt: slurmext.ReadSchedConf reads the shared
// test cluster's slurm.conf as slurmctld does — its partitions as
// `scontrol show partition` reports them, and the priority and backfill
// settings (Slurm's defaults where the file says nothing) as `scontrol show
// config` does. The partitions the tests' scopes create at run time are
// slurmctld's only: the file does not list them.
func TestSchedConfAsSlurmReadsIt(t *testing.T) {
	requireClusterHost(t)
	t.Parallel()
	c := sharedConf(t)
	f, err := os.Open(c.Conf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := slurmext.ReadSchedConf(f)
	if err != nil {
		t.Fatal(err)
	}

	config := map[string]string{}
	for line := range strings.SplitSeq(c.run(t, "scontrol", "show", "config"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			config[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if got.PriorityType != config["PriorityType"] || got.SchedulerType != config["SchedulerType"] {
		t.Errorf("PriorityType %q SchedulerType %q; scontrol says %q, %q",
			got.PriorityType, got.SchedulerType, config["PriorityType"], config["SchedulerType"])
	}
	for key, d := range map[string]time.Duration{"PriorityMaxAge": got.PriorityMaxAge, "PriorityDecayHalfLife": got.PriorityDecayHalfLife} {
		if _, shown := config[key]; !shown {
			continue // priority/basic: scontrol shows no multifactor settings
		}
		want, _, err := slurmext.ParseDuration(config[key])
		if err != nil || d != want {
			t.Errorf("%s = %v; scontrol says %q (%v)", key, d, config[key], err)
		}
	}
	if p := config["SchedulerParameters"]; p != "(null)" && p != "" {
		t.Fatalf("the test cluster sets SchedulerParameters=%s; this test checks Slurm's defaults", p)
	}
	if got.BfInterval != 30*time.Second || got.BfWindow != 24*time.Hour || got.BfResolution != time.Minute || got.BfMaxJobTest != 500 {
		t.Errorf("backfill defaults %v %v %v %d, want Slurm's 30s, 1440 min, 60s, 500", got.BfInterval, got.BfWindow, got.BfResolution, got.BfMaxJobTest)
	}

	parts := map[string]map[string]string{}
	for line := range strings.SplitSeq(c.run(t, "scontrol", "show", "partition", "-o"), "\n") {
		fields := map[string]string{}
		for f := range strings.FieldsSeq(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				fields[k] = v
			}
		}
		if name := fields["PartitionName"]; name != "" && !scopeMade(name) {
			parts[name] = fields
		}
	}
	if len(parts) != len(got.Partitions) {
		t.Fatalf("%d partitions read, scontrol shows %d", len(got.Partitions), len(parts))
	}
	for _, p := range got.Partitions {
		s, ok := parts[p.Name]
		if !ok {
			t.Errorf("partition %s: scontrol does not show it", p.Name)
			continue
		}
		if p.MaxTimeUnlimited != (s["MaxTime"] == "UNLIMITED") {
			t.Errorf("partition %s: unlimited %v, scontrol MaxTime=%s", p.Name, p.MaxTimeUnlimited, s["MaxTime"])
		}
		if !p.MaxTimeUnlimited {
			want, _, _ := slurmext.ParseDuration(s["MaxTime"])
			if p.MaxTime != want {
				t.Errorf("partition %s: MaxTime %v, scontrol %s", p.Name, p.MaxTime, s["MaxTime"])
			}
		}
		if tier := s["PriorityTier"]; tier != "" && tier != strconv.Itoa(p.PriorityTier) {
			t.Errorf("partition %s: PriorityTier %d, scontrol %s", p.Name, p.PriorityTier, tier)
		}
		if (s["Default"] == "YES") != p.Default {
			t.Errorf("partition %s: default %v, scontrol Default=%s", p.Name, p.Default, s["Default"])
		}
		nodes, err := slurmext.ExpandHostlist(s["Nodes"])
		if err != nil || strings.Join(nodes, ",") != strings.Join(p.Nodes, ",") {
			t.Errorf("partition %s: nodes %v, scontrol Nodes=%s", p.Name, p.Nodes, s["Nodes"])
		}
		if s["State"] != p.State {
			t.Errorf("partition %s: state %s, scontrol %s", p.Name, p.State, s["State"])
		}
	}
}
