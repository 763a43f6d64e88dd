package slurmext

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadSchedConf(t *testing.T) {
	conf := `ClusterName=lab
# priority
PriorityType=priority/multifactor
PriorityWeightAge=1000
priorityweightfairshare=10000   # case does not matter
PriorityWeightJobSize=100
PriorityWeightPartition=5000
PriorityWeightQOS=2000
PriorityDecayHalfLife=14-0
PriorityMaxAge=1-00:00:00
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=60,bf_window=4320,bf_resolution=300,\
bf_max_job_test=1000,bf_continue,default_queue_depth=200,bf_max_job_part=50,Bf_Max_Job_User=20
NodeName=gpu[01-04] CPUs=64 Gres=gpu:h100:8
PartitionName=DEFAULT State=UP MaxTime=1-00:00:00
PartitionName=gpu Nodes=gpu[01-03] Default=YES PriorityTier=2 QOS=gpunormal
PartitionName=debug Nodes=gpu04 MaxTime=30 DefaultTime=10 AllowQos=debug,normal PriorityJobFactor=3
PartitionName=all Nodes=ALL MaxTime=UNLIMITED State=DOWN
`
	c, err := ReadSchedConf(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	if c.PriorityType != "priority/multifactor" || c.WeightAge != 1000 || c.WeightFairshare != 10000 ||
		c.WeightJobSize != 100 || c.WeightPartition != 5000 || c.WeightQOS != 2000 {
		t.Errorf("priority: %+v", c)
	}
	if c.PriorityDecayHalfLife != 14*24*time.Hour || c.PriorityMaxAge != 24*time.Hour {
		t.Errorf("decay %v max age %v", c.PriorityDecayHalfLife, c.PriorityMaxAge)
	}
	if c.BfInterval != time.Minute || c.BfWindow != 72*time.Hour || c.BfResolution != 5*time.Minute ||
		c.BfMaxJobTest != 1000 || c.DefaultQueueDepth != 200 || c.BfDisabled ||
		c.BfMaxJobPart != 50 || c.BfMaxJobUser != 20 || !c.BfContinue {
		t.Errorf("backfill: %+v", c)
	}
	if want := []string{"SchedulerParameters sched_interval=60"}; !slices.Equal(c.Assumed, want) {
		t.Errorf("assumed %q, want %q", c.Assumed, want)
	}
	if len(c.Partitions) != 3 {
		t.Fatalf("%d partitions, want 3: %+v", len(c.Partitions), c.Partitions)
	}
	gpu, debug, all := c.Partitions[0], c.Partitions[1], c.Partitions[2]
	if gpu.Name != "gpu" || !slices.Equal(gpu.Nodes, []string{"gpu01", "gpu02", "gpu03"}) || !gpu.Default ||
		gpu.PriorityTier != 2 || gpu.QOS != "gpunormal" || gpu.MaxTime != 24*time.Hour || gpu.MaxTimeUnlimited || gpu.State != "UP" {
		t.Errorf("gpu: %+v", gpu)
	}
	if debug.MaxTime != 30*time.Minute || debug.DefaultTime != 10*time.Minute || !slices.Equal(debug.AllowQOS, []string{"debug", "normal"}) ||
		debug.PriorityTier != 1 || debug.PriorityFactor != 3 || debug.Default {
		t.Errorf("debug: %+v", debug)
	}
	if !all.AllNodes || !all.MaxTimeUnlimited || all.State != "DOWN" {
		t.Errorf("all: %+v", all)
	}
}

func TestReadSchedConfDefaults(t *testing.T) {
	c, err := ReadSchedConf(strings.NewReader("ClusterName=x\nPartitionName=p Nodes=n1\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultSchedConf()
	if c.PriorityType != "priority/basic" || c.SchedulerType != "sched/backfill" || c.BfInterval != d.BfInterval ||
		c.BfWindow != 24*time.Hour || c.BfResolution != time.Minute || c.BfMaxJobTest != 500 ||
		c.BfMaxJobPart != 0 || c.BfMaxJobUser != 0 || c.BfContinue {
		t.Errorf("defaults: %+v", c)
	}
	if len(c.Assumed) != 9 || c.Assumed[0] != "PriorityType=priority/basic" {
		t.Errorf("assumed %q, want all nine defaults named", c.Assumed)
	}
	if p := c.Partitions[0]; !p.MaxTimeUnlimited || p.PriorityTier != 1 || p.AllNodes {
		t.Errorf("partition defaults: %+v", p)
	}
}

func TestReadSchedConfRefusesBadValues(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"PriorityWeightAge=lots\n", `line 1: priorityweightage="lots"`},
		{"\n\nSchedulerParameters=bf_window=0\n", "line 3"},
		{"SchedulerParameters=bf_interval=abc\n", "bf_interval=abc"},
		{"SchedulerParameters=bf_max_job_part=-1\n", "bf_max_job_part=-1"},
		{"SchedulerParameters=bf_max_job_user=ten\n", "bf_max_job_user=ten"},
		{"PartitionName=p Nodes=gpu[01-\n", `PartitionName="p"`},
		{"PartitionName=p MaxTime=forever\n", "forever"},
		{"PartitionName=p PriorityTier=-1\n", `prioritytier="-1"`},
		{"PriorityMaxAge=UNLIMITED\n", "prioritymaxage"},
	} {
		_, err := ReadSchedConf(strings.NewReader(tc.conf))
		if !errors.Is(err, ErrBadSlurmConf) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want ErrBadSlurmConf naming %q", tc.conf, err, tc.want)
		}
	}
	c, err := ReadSchedConf(strings.NewReader("SchedulerParameters=bf_interval=-1\n"))
	if err != nil || !c.BfDisabled {
		t.Errorf("bf_interval=-1: %v disabled=%v, want backfill disabled", err, c.BfDisabled)
	}
}

// TestReadSchedConfPriorityFlags: Fair Tree is multifactor's fair-share
// unless PriorityFlags turns it off (NO_FAIR_TREE, or DEPTH_OBLIVIOUS,
// which implies it); other flags leave it on.
func TestReadSchedConfPriorityFlags(t *testing.T) {
	for _, tc := range []struct {
		line       string
		flags      []string
		noFairTree bool
	}{
		{"", nil, false},
		{"PriorityFlags=ACCRUE_ALWAYS,SMALL_RELATIVE_TO_TIME\n", []string{"ACCRUE_ALWAYS", "SMALL_RELATIVE_TO_TIME"}, false},
		{"PriorityFlags=no_fair_tree\n", []string{"NO_FAIR_TREE"}, true},
		{"PriorityFlags=CALCULATE_RUNNING,NO_FAIR_TREE\n", []string{"CALCULATE_RUNNING", "NO_FAIR_TREE"}, true},
		{"PriorityFlags=DEPTH_OBLIVIOUS\n", []string{"DEPTH_OBLIVIOUS"}, true},
	} {
		c, err := ReadSchedConf(strings.NewReader("PriorityType=priority/multifactor\n" + tc.line + "PartitionName=p Nodes=n1\n"))
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if !slices.Equal(c.PriorityFlags, tc.flags) || c.NoFairTree != tc.noFairTree {
			t.Errorf("%q: flags %q no fair tree %t, want %q %t", tc.line, c.PriorityFlags, c.NoFairTree, tc.flags, tc.noFairTree)
		}
	}
}
