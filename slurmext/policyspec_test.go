package slurmext

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePartitionSpec(t *testing.T) {
	tests := []struct {
		spec  string
		want  PartitionConf
		given []string
	}{
		{spec: "debug:Nodes=gpu[01-02],MaxTime=1:00:00,PriorityTier=2",
			want:  PartitionConf{Name: "debug", Nodes: []string{"gpu01", "gpu02"}, MaxTime: time.Hour, PriorityTier: 2, PriorityFactor: 1, State: "UP"},
			given: []string{"nodes", "maxtime", "prioritytier"}},
		{spec: "gpu:MaxTime=2-00:00:00",
			want:  PartitionConf{Name: "gpu", MaxTime: 48 * time.Hour, PriorityTier: 1, PriorityFactor: 1, State: "UP"},
			given: []string{"maxtime"}},
		// Commas inside brackets belong to the hostlist.
		{spec: "gpu:Nodes=gpu[01,03-04],PriorityJobFactor=5",
			want:  PartitionConf{Name: "gpu", Nodes: []string{"gpu01", "gpu03", "gpu04"}, MaxTimeUnlimited: true, PriorityTier: 1, PriorityFactor: 5, State: "UP"},
			given: []string{"nodes", "priorityjobfactor"}},
		// List-valued keys take the items without '=' after them.
		{spec: " a.b-c_1 : nodes = gpu01 , gpu[03-04] ,maxtime=90, AllowQOS=normal,high,Default=yes , state=drain",
			want: PartitionConf{Name: "a.b-c_1", Nodes: []string{"gpu01", "gpu03", "gpu04"}, MaxTime: 90 * time.Minute, PriorityTier: 1, PriorityFactor: 1,
				AllowQOS: []string{"normal", "high"}, Default: true, State: "DRAIN"},
			given: []string{"nodes", "maxtime", "allowqos", "default", "state"}},
		{spec: "all:Nodes=ALL,MaxTime=INFINITE,DefaultTime=30,QOS=part_qos,AllowQOS=ALL,Default=NO,State=inactive",
			want: PartitionConf{Name: "all", AllNodes: true, MaxTimeUnlimited: true, DefaultTime: 30 * time.Minute, PriorityTier: 1, PriorityFactor: 1,
				QOS: "part_qos", State: "INACTIVE"},
			given: []string{"nodes", "maxtime", "defaulttime", "qos", "allowqos", "default", "state"}},
		{spec: "x:PriorityTier=0,PriorityJobFactor=65533,MaxTime=UNLIMITED",
			want:  PartitionConf{Name: "x", MaxTimeUnlimited: true, PriorityFactor: 65533, State: "UP"},
			given: []string{"prioritytier", "priorityjobfactor", "maxtime"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			p, given, err := ParsePartitionSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, tt.want) {
				t.Errorf("got  %+v\nwant %+v", p, tt.want)
			}
			want := map[string]bool{}
			for _, k := range tt.given {
				want[k] = true
			}
			if !maps.Equal(given, want) {
				t.Errorf("given %v, want %v", given, want)
			}
		})
	}
}

func TestParsePartitionSpecErrors(t *testing.T) {
	tests := []struct {
		spec, msg string
		also      error // a second sentinel the error wraps
	}{
		{spec: "", msg: "no ':'"},
		{spec: "debug", msg: "no ':'"},
		{spec: "MaxTime=60", msg: "no ':'"},
		{spec: ":MaxTime=60", msg: "no name"},
		{spec: "de bug:MaxTime=60", msg: `name "de bug"`},
		{spec: "dëbug:MaxTime=60", msg: "letters, digits"},
		{spec: "Nodes=gpu01:MaxTime=60", msg: `name "Nodes=gpu01"`},
		{spec: "default:MaxTime=60", msg: "DEFAULT"},
		{spec: "debug:", msg: "nothing after ':'"},
		{spec: "debug:MaxTime", msg: `item "MaxTime" is not Key=Value`},
		{spec: "debug:MaxTime=60,gpu01", msg: `item "gpu01" is not Key=Value`},
		{spec: "debug:MaxTime=60,,State=UP", msg: "empty item"},
		{spec: "debug:MaxTime=60,", msg: "empty item"},
		{spec: "debug:=60", msg: "has no key"},
		{spec: "debug:MaxNodes=4", msg: `unknown key "MaxNodes"; the keys are Nodes, MaxTime, DefaultTime, PriorityTier, PriorityJobFactor, QOS, AllowQOS, Default, State`},
		{spec: "debug:MaxTime=60,maxtime=30", msg: "MaxTime given twice"},
		{spec: "debug:MaxTime=", msg: "MaxTime has no value"},
		{spec: "debug:Nodes=gpu[01-02", msg: "'[' without ']'"},
		{spec: "debug:Nodes=gpu01-02]", msg: "']' without '['"},
		{spec: "debug:Nodes=gpu[02-01]", msg: "Nodes", also: ErrBadHostlist},
		{spec: "debug:Nodes=gpu[0-99999]", msg: "Nodes", also: ErrTooLarge},
		{spec: "debug:Nodes=gpu01,ALL", msg: "ALL stands alone"},
		{spec: "debug:MaxTime=1:2:3:4", msg: "MaxTime", also: ErrBadDuration},
		{spec: "debug:DefaultTime=soon", msg: "DefaultTime", also: ErrBadDuration},
		{spec: "debug:MaxTime=Partition_Limit", msg: "Partition_Limit is a job's"},
		{spec: "debug:PriorityTier=-1", msg: `PriorityTier="-1": want a whole number from 0 to 65533`},
		{spec: "debug:PriorityJobFactor=65534", msg: "PriorityJobFactor"},
		{spec: "debug:PriorityTier=high", msg: "PriorityTier"},
		{spec: "debug:QOS=a b", msg: `QOS="a b"`},
		{spec: "debug:AllowQOS=normal,hi!gh", msg: `AllowQOS: "hi!gh"`},
		{spec: "debug:Default=true", msg: `Default="true": want YES or NO`},
		{spec: "debug:State=OPEN", msg: `State="OPEN": want UP, DOWN, DRAIN or INACTIVE`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			p, given, err := ParsePartitionSpec(tt.spec)
			if err == nil {
				t.Fatalf("no error; got %+v %v", p, given)
			}
			if !errors.Is(err, ErrBadPolicySpec) || (tt.also != nil && !errors.Is(err, tt.also)) {
				t.Errorf("error %v wraps not ErrBadPolicySpec and %v", err, tt.also)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			checkErrorMessage(t, err)
			if !reflect.DeepEqual(p, PartitionConf{}) || given != nil {
				t.Errorf("with the error: %+v %v", p, given)
			}
		})
	}
}

// TestPartitionSpecRoundTrip: a spec gives what ReadSchedConf gives for the
// PartitionName line with the same keys and values.
func TestPartitionSpecRoundTrip(t *testing.T) {
	tests := []struct{ line, spec string }{
		{"PartitionName=gpu Nodes=gpu[01-03] Default=YES PriorityTier=2 QOS=gpunormal MaxTime=1-00:00:00",
			"gpu:Nodes=gpu[01-03],Default=YES,PriorityTier=2,QOS=gpunormal,MaxTime=1-00:00:00"},
		{"PartitionName=debug Nodes=gpu04,gpu[06,08] MaxTime=30 DefaultTime=10 AllowQos=debug,normal PriorityJobFactor=3",
			"debug:Nodes=gpu04,gpu[06,08],MaxTime=30,DefaultTime=10,AllowQos=debug,normal,PriorityJobFactor=3"},
		{"PartitionName=all Nodes=ALL MaxTime=INFINITE State=DOWN", "all:Nodes=ALL,MaxTime=INFINITE,State=DOWN"},
		{"PartitionName=long MaxTime=UNLIMITED DefaultTime=2-12 state=drain", "long:MaxTime=UNLIMITED,DefaultTime=2-12,state=drain"},
		{"PartitionName=bare", "bare:State=UP"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			c, err := ReadSchedConf(strings.NewReader(tt.line + "\n"))
			if err != nil || len(c.Partitions) != 1 {
				t.Fatalf("ReadSchedConf: %v, %d partitions", err, len(c.Partitions))
			}
			p, _, err := ParsePartitionSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, c.Partitions[0]) {
				t.Errorf("spec      %+v\nslurm.conf %+v", p, c.Partitions[0])
			}
		})
	}
	p, _, err := ParsePartitionSpec("all:MaxTime=INFINITE")
	if err != nil || !p.MaxTimeUnlimited || p.MaxTime != 0 {
		t.Errorf("MaxTime=INFINITE: %+v, %v; want MaxTimeUnlimited", p, err)
	}
}

func TestParseQOSSpec(t *testing.T) {
	set := func(keys ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range keys {
			m[k] = true
		}
		return m
	}
	tests := []struct {
		spec string
		want QOSLimits
	}{
		// A TRES list continues over the commas until the next key.
		{spec: "gpu-short:MaxTRESPerUser=cpu=8,gres/gpu=4,MaxJobsPerUser=2",
			want: QOSLimits{Name: "gpu-short", MaxGPUsPerUser: 4, MaxJobsPerUser: 2, Set: set("maxtresperuser", "maxjobsperuser")}},
		{spec: "high:Priority=1000,GrpTRES=gres/gpu=16,mem=512G,node=4,MaxWall=4:00:00,MaxTRESPU=gres/gpu=2",
			want: QOSLimits{Name: "high", Priority: 1000, GrpGPUs: 16, MaxWall: 4 * time.Hour, MaxGPUsPerUser: 2,
				Set: set("priority", "grptres", "maxwall", "maxtresperuser")}},
		// Typed counts are summed without an untyped one...
		{spec: "typed:maxtresperuser=gres/gpu:h100=2,gres/gpu:a100_3g.20gb=3",
			want: QOSLimits{Name: "typed", MaxGPUsPerUser: 5, Set: set("maxtresperuser")}},
		// ...and the untyped one is the total when given.
		{spec: "both:GrpTRES=gres/gpu:h100=2,gres/gpu=8",
			want: QOSLimits{Name: "both", GrpGPUs: 8, Set: set("grptres")}},
		// -1 clears, as in sacctmgr.
		{spec: "clear:Priority=-1,MaxJobs=-1,GrpTRES=gres/gpu=-1,MaxWall=-1",
			want: QOSLimits{Name: "clear", Set: set("priority", "maxjobsperuser", "grptres", "maxwall")}},
		{spec: "unl:MaxWall=UNLIMITED,MaxJobsPU=7,Priority=0",
			want: QOSLimits{Name: "unl", MaxJobsPerUser: 7, Set: set("maxwall", "maxjobsperuser", "priority")}},
		{spec: "mins: MaxWallDurationPerJob = 90 , PRIORITY = 5 ",
			want: QOSLimits{Name: "mins", MaxWall: 90 * time.Minute, Priority: 5, Set: set("maxwall", "priority")}},
		// A list without a GPU count leaves the GPU limit alone.
		{spec: "cpus:MaxTRESPerUser=cpu=64,mem=100G,billing=10,license/matlab=1,gres/shard=4,MaxJobs=3",
			want: QOSLimits{Name: "cpus", MaxJobsPerUser: 3, Set: set("maxjobsperuser")}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			q, err := ParseQOSSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(q, tt.want) {
				t.Errorf("got  %+v\nwant %+v", q, tt.want)
			}
		})
	}
}

func TestParseQOSSpecErrors(t *testing.T) {
	tests := []struct {
		spec, msg string
		also      error
	}{
		{spec: "normal", msg: "no ':'"},
		{spec: ":Priority=1", msg: "no name"},
		{spec: "no/rmal:Priority=1", msg: `name "no/rmal"`},
		{spec: "normal:", msg: "nothing after ':'"},
		{spec: "normal:Priority=1,,MaxJobs=2", msg: "empty item"},
		{spec: "normal:Priority", msg: "Priority has no value"},
		{spec: "normal:Priority=", msg: "Priority has no value"},
		{spec: "normal:gres/gpu=4", msg: `unknown key "gres/gpu"; the keys are Priority, MaxJobsPerUser (MaxJobs, MaxJobsPU), MaxTRESPerUser (MaxTRESPU), GrpTRES, MaxWall`},
		{spec: "normal:Priority=1,MaxSubmitJobs=4", msg: `unknown key "MaxSubmitJobs"`},
		{spec: "normal:Priority=1,foo", msg: `item "foo" is not Key=Value`},
		{spec: "normal:=4", msg: "has no key"},
		{spec: "normal:Priority=1,priority=2", msg: "Priority given twice"},
		{spec: "normal:MaxJobs=1,MaxJobsPerUser=2", msg: "MaxJobsPerUser given twice"},
		{spec: "normal:MaxTRESPU=gres/gpu=1,MaxTRESPerUser=gres/gpu=2", msg: "MaxTRESPerUser given twice"},
		{spec: "normal:Priority=-2", msg: `Priority="-2": want a whole number from -1 (no limit) to 2147483647`},
		{spec: "normal:Priority=high", msg: `Priority="high"`},
		{spec: "normal:MaxJobs=2147483648", msg: "MaxJobsPerUser"},
		{spec: "normal:MaxJobs=1.5", msg: "MaxJobsPerUser"},
		{spec: "normal:MaxJobsPerUser=0", msg: "MaxJobsPerUser=0 lets nothing run"},
		{spec: "normal:MaxWall=0", msg: "lets nothing run"},
		{spec: "normal:MaxWall=-2", msg: "MaxWall", also: ErrBadDuration},
		{spec: "normal:MaxWall=a while", msg: "MaxWall", also: ErrBadDuration},
		{spec: "normal:MaxWall=Partition_Limit", msg: "Partition_Limit"},
		{spec: "normal:GrpTRES=gres/gpu", msg: "GrpTRES", also: ErrBadTRES},
		{spec: "normal:GrpTRES=gres/gpu=2,gres/gpu=3", msg: "given twice", also: ErrBadTRES},
		{spec: "normal:GrpTRES=gpu=4", msg: `unknown TRES "gpu"`},
		{spec: "normal:MaxTRESPerUser=gres/gpu=2,MaxSubmit=3", msg: `unknown TRES "MaxSubmit"`},
		{spec: "normal:GrpTRES=gres/gpu=four", msg: `GrpTRES gres/gpu="four"`},
		{spec: "normal:GrpTRES=gres/gpu=0", msg: "gres/gpu=0 lets nothing run"},
		{spec: "normal:GrpTRES=gres/gpu=-3", msg: "gres/gpu"},
		{spec: "normal:GrpTRES=gres/gpu:h 100=1", msg: "a GPU type holds only"},
		{spec: "normal:MaxTRESPU=gres/gpu:a=2147483647,gres/gpu:b=1", msg: "add up to more than"},
		{spec: "normal:MaxTRESPU=cpu=lots", msg: `cpu="lots": want -1 or a count`},
		{spec: "normal:MaxTRESPU=mem=G", msg: `mem="G"`},
		{spec: "normal:MaxTRESPU=gres/=1", msg: `unknown TRES "gres/"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			q, err := ParseQOSSpec(tt.spec)
			if err == nil {
				t.Fatalf("no error; got %+v", q)
			}
			if !errors.Is(err, ErrBadPolicySpec) || (tt.also != nil && !errors.Is(err, tt.also)) {
				t.Errorf("error %v wraps not ErrBadPolicySpec and %v", err, tt.also)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			checkErrorMessage(t, err)
			if !reflect.DeepEqual(q, QOSLimits{}) {
				t.Errorf("with the error: %+v", q)
			}
		})
	}
}
