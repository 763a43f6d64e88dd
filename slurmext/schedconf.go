package slurmext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SchedConf is what slurm.conf says about how jobs are ordered and
// started: the priority plugin and its weights, the scheduler plugin and
// its backfill parameters, and the partitions. Settings the file does not
// give take Slurm's defaults (slurm.conf(5) of Slurm 22.05, listed in
// DefaultSchedConf); Assumed names every one that was defaulted, so a
// caller can print what it assumed.
type SchedConf struct {
	// PriorityType is "priority/basic" (FIFO by submission) or
	// "priority/multifactor".
	PriorityType string
	// PriorityWeight* are the multifactor weights (0 unless set).
	WeightAge, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS int64
	// PriorityMaxAge is the age at which the age factor reaches 1;
	// PriorityDecayHalfLife the half-life of past usage in fair-share (0:
	// no decay).
	PriorityMaxAge, PriorityDecayHalfLife time.Duration
	// PriorityFavorSmall makes the job-size factor favour small jobs.
	PriorityFavorSmall bool
	// PriorityFlags are slurm.conf's PriorityFlags, upper-cased. NoFairTree
	// is set when they turn Fair Tree (multifactor's default fair-share
	// since Slurm 19.05) off: NO_FAIR_TREE, or DEPTH_OBLIVIOUS, which
	// implies it.
	PriorityFlags []string
	NoFairTree    bool
	// PriorityCalcPeriod is how often slurmctld's decay thread decays
	// usage and recomputes every pending job's priority (5 minutes).
	PriorityCalcPeriod time.Duration

	// SchedulerType is "sched/backfill" or "sched/builtin".
	SchedulerType string
	// Backfill and main-loop parameters from SchedulerParameters.
	BfInterval, BfResolution, BfWindow time.Duration
	BfMaxJobTest                       int
	BfDisabled                         bool // bf_interval=-1
	// BfMaxJobPart and BfMaxJobUser are bf_max_job_part and
	// bf_max_job_user: the most jobs of one partition, or of one user, a
	// backfill cycle tests (0: no limit). BfContinue is bf_continue.
	BfMaxJobPart, BfMaxJobUser int
	BfContinue                 bool
	SchedInterval              time.Duration
	DefaultQueueDepth          int

	Partitions []PartitionConf
	// Assumed lists the settings taken from Slurm's defaults, as
	// "PriorityType=priority/basic".
	Assumed []string
}

// PartitionConf is one PartitionName line.
type PartitionConf struct {
	Name string
	// Nodes is the partition's Nodes= expression expanded; AllNodes is set
	// for Nodes=ALL.
	Nodes    []string
	AllNodes bool
	// MaxTime and DefaultTime; MaxTimeUnlimited for UNLIMITED/INFINITE or
	// no MaxTime (Slurm's default).
	MaxTime          time.Duration
	MaxTimeUnlimited bool
	DefaultTime      time.Duration
	PriorityTier     int
	PriorityFactor   int // PriorityJobFactor
	// QOS is the partition's own QOS (QOS=); AllowQOS the QOS names jobs
	// may use in it (nil: all).
	QOS      string
	AllowQOS []string
	Default  bool
	State    string // UP, DOWN, DRAIN, INACTIVE
}

// DefaultSchedConf returns Slurm's defaults (slurm.conf(5), 22.05).
func DefaultSchedConf() SchedConf {
	return SchedConf{
		PriorityType:          "priority/basic",
		PriorityMaxAge:        7 * 24 * time.Hour,
		PriorityDecayHalfLife: 7 * 24 * time.Hour,
		PriorityCalcPeriod:    5 * time.Minute,
		SchedulerType:         "sched/backfill",
		BfInterval:            30 * time.Second,
		BfResolution:          60 * time.Second,
		BfWindow:              24 * time.Hour,
		BfMaxJobTest:          500,
		SchedInterval:         60 * time.Second,
		DefaultQueueDepth:     100,
	}
}

// ReadSchedConf reads the scheduling settings and partitions of a
// slurm.conf. Keys are matched case-insensitively, as Slurm does; a later
// line overrides an earlier one; PartitionName=DEFAULT lines set the
// defaults of the partition lines after them; a partition's Nodes= may
// name NodeSets. The text may not Include files (LoadClusterConf reads a
// file and follows them). A value that cannot be read is an error naming
// the line, wrapping ErrBadSlurmConf: refused, not guessed.
func ReadSchedConf(r io.Reader) (SchedConf, error) {
	t, err := readConfStream(r, "slurm.conf")
	if err != nil {
		return DefaultSchedConf(), confErr(err)
	}
	decls, err := nodeDecls(t.Lines)
	if err != nil {
		return DefaultSchedConf(), err
	}
	sets, err := nodeSetsOf(t.Lines, decls)
	if err != nil {
		return DefaultSchedConf(), err
	}
	return schedOf(t.Lines, sets)
}

// schedOf reads the scheduler settings and partitions of a configuration's
// lines; sets are its node sets, which a partition's Nodes= may name.
func schedOf(lines []ConfLine, sets map[string][]string) (SchedConf, error) {
	c := DefaultSchedConf()
	set := map[string]bool{}
	var (
		partDef  = map[string]string{}
		partIdx  = map[string]int{}
		firstErr error
		members  int
	)
	for _, l := range lines {
		badf := func(format string, a ...any) error {
			return fmt.Errorf("slurm.conf %s: "+format+": %w", append([]any{l.Where()}, append(a, ErrBadSlurmConf)...)...)
		}
		fields := map[string]string{}
		for _, p := range l.Pairs {
			fields[strings.ToLower(p.Key)] = p.Value
		}
		first := strings.ToLower(l.Pairs[0].Key)
		if first == "partitionname" {
			name := l.Pairs[0].Value
			if strings.EqualFold(name, "DEFAULT") {
				for k, v := range fields {
					if k != "partitionname" {
						partDef[k] = v
					}
				}
				continue
			}
			merged := map[string]string{}
			for k, v := range partDef {
				merged[k] = v
			}
			for k, v := range fields {
				merged[k] = v
			}
			p, err := parsePartition(name, merged, sets)
			if err != nil && firstErr == nil {
				firstErr = badf("PartitionName=%s: %v", QuoteShort(name), err)
			}
			if members += len(p.Nodes); members > maxConfMembers {
				return c, fmt.Errorf("slurm.conf %s: partitions name more than %d nodes in all: %w", l.Where(), maxConfMembers, ErrTooLarge)
			}
			if i, ok := partIdx[name]; ok {
				c.Partitions[i] = p
			} else {
				partIdx[name] = len(c.Partitions)
				c.Partitions = append(c.Partitions, p)
			}
			continue
		}
		if isRecordKey(first) {
			continue
		}
		for k, v := range fields {
			if err := c.setKey(k, v, set); err != nil && firstErr == nil {
				firstErr = badf("%s=%s: %v", k, QuoteShort(v), err)
			}
		}
	}
	if firstErr != nil {
		return c, firstErr
	}
	d := DefaultSchedConf()
	for _, a := range []struct {
		key, val string
	}{
		{"prioritytype", d.PriorityType},
		{"prioritymaxage", "7-0"},
		{"prioritydecayhalflife", "7-0"},
		{"schedulertype", d.SchedulerType},
		{"bf_interval", "30"},
		{"bf_resolution", "60"},
		{"bf_window", "1440"},
		{"bf_max_job_test", "500"},
		{"sched_interval", "60"},
	} {
		if !set[a.key] {
			c.Assumed = append(c.Assumed, schedKeyName[a.key]+"="+a.val)
		}
	}
	return c, nil
}

// schedKeyName spells the keys ReadSchedConf defaults as slurm.conf(5)
// does.
var schedKeyName = map[string]string{
	"prioritytype": "PriorityType", "prioritymaxage": "PriorityMaxAge",
	"prioritydecayhalflife": "PriorityDecayHalfLife", "schedulertype": "SchedulerType",
	"bf_interval": "SchedulerParameters bf_interval", "bf_resolution": "SchedulerParameters bf_resolution",
	"bf_window": "SchedulerParameters bf_window", "bf_max_job_test": "SchedulerParameters bf_max_job_test",
	"sched_interval": "SchedulerParameters sched_interval",
}

func (c *SchedConf) setKey(k, v string, set map[string]bool) error {
	weight := func(dst *int64) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a non-negative integer")
		}
		*dst = n
		return nil
	}
	dur := func(dst *time.Duration) error {
		d, unlimited, err := ParseDuration(v)
		if err != nil || unlimited {
			return fmt.Errorf("want a time such as 7-0 or 14-00:00:00")
		}
		*dst = d
		return nil
	}
	set[k] = true
	switch k {
	case "prioritytype":
		c.PriorityType = strings.ToLower(v)
	case "priorityweightage":
		return weight(&c.WeightAge)
	case "priorityweightfairshare":
		return weight(&c.WeightFairshare)
	case "priorityweightjobsize":
		return weight(&c.WeightJobSize)
	case "priorityweightpartition":
		return weight(&c.WeightPartition)
	case "priorityweightqos":
		return weight(&c.WeightQOS)
	case "prioritymaxage":
		return dur(&c.PriorityMaxAge)
	case "prioritydecayhalflife":
		return dur(&c.PriorityDecayHalfLife)
	case "prioritycalcperiod":
		return dur(&c.PriorityCalcPeriod)
	case "priorityflags":
		c.PriorityFlags, c.NoFairTree = nil, false
		for f := range strings.SplitSeq(v, ",") {
			f = strings.ToUpper(strings.TrimSpace(f))
			if f == "" {
				continue
			}
			c.PriorityFlags = append(c.PriorityFlags, f)
			if f == "NO_FAIR_TREE" || f == "DEPTH_OBLIVIOUS" {
				c.NoFairTree = true
			}
		}
	case "priorityfavorsmall":
		c.PriorityFavorSmall = strings.EqualFold(v, "yes")
	case "schedulertype":
		c.SchedulerType = strings.ToLower(v)
	case "schedulerparameters":
		return c.setSchedulerParameters(v, set)
	}
	return nil
}

// setSchedulerParameters reads the comma-separated SchedulerParameters
// options that shape scheduling; others are read past.
func (c *SchedConf) setSchedulerParameters(v string, set map[string]bool) error {
	for opt := range strings.SplitSeq(v, ",") {
		k, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
		qval := QuoteShort(val)
		k = strings.ToLower(k)
		if !hasVal {
			if k == "bf_continue" {
				c.BfContinue = true
			}
			continue
		}
		n, err := strconv.Atoi(val)
		num := func() error {
			if err != nil {
				return fmt.Errorf("%s=%s: want an integer", QuoteShort(k), qval)
			}
			return nil
		}
		switch k {
		case "bf_interval":
			if err := num(); err != nil {
				return err
			}
			if n == -1 {
				c.BfDisabled = true
			} else if n < 1 {
				return fmt.Errorf("bf_interval=%d: want -1 or at least 1", n)
			}
			c.BfInterval = time.Duration(max(n, 1)) * time.Second
		case "bf_resolution":
			if err := num(); err != nil || n < 1 {
				return fmt.Errorf("bf_resolution=%s: want seconds, at least 1", qval)
			}
			c.BfResolution = time.Duration(n) * time.Second
		case "bf_window":
			if err := num(); err != nil || n < 1 {
				return fmt.Errorf("bf_window=%s: want minutes, at least 1", qval)
			}
			c.BfWindow = time.Duration(n) * time.Minute
		case "bf_max_job_test":
			if err := num(); err != nil || n < 1 {
				return fmt.Errorf("bf_max_job_test=%s: want at least 1", qval)
			}
			c.BfMaxJobTest = n
		case "bf_max_job_part", "bf_max_job_user":
			if err := num(); err != nil || n < 0 {
				return fmt.Errorf("%s=%s: want 0 (no limit) or more", QuoteShort(k), qval)
			}
			if k == "bf_max_job_part" {
				c.BfMaxJobPart = n
			} else {
				c.BfMaxJobUser = n
			}
		case "sched_interval":
			if err := num(); err != nil {
				return err
			}
			c.SchedInterval = time.Duration(n) * time.Second
		case "default_queue_depth":
			if err := num(); err != nil || n < 1 {
				return fmt.Errorf("default_queue_depth=%s: want at least 1", qval)
			}
			c.DefaultQueueDepth = n
		default:
			continue
		}
		set[k] = true
	}
	return nil
}

// parsePartition reads one partition's fields (keys lowercased, DEFAULT
// values merged in).
func parsePartition(name string, f map[string]string, sets map[string][]string) (PartitionConf, error) {
	p := PartitionConf{Name: name, MaxTimeUnlimited: true, PriorityTier: 1, PriorityFactor: 1, State: "UP"}
	if v, ok := f["nodes"]; ok && v != "" {
		if err := p.setNodes(v, sets); err != nil {
			return p, err
		}
	}
	if v, ok := f["maxtime"]; ok {
		d, unlimited, err := ParseDuration(v)
		if err != nil {
			return p, err
		}
		p.MaxTime, p.MaxTimeUnlimited = d, unlimited || d == 0
	}
	if v, ok := f["defaulttime"]; ok {
		d, _, err := ParseDuration(v)
		if err != nil {
			return p, err
		}
		p.DefaultTime = d
	}
	intField := func(key string, dst *int) error {
		if v, ok := f[key]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s=%s: want a non-negative integer", key, QuoteShort(v))
			}
			*dst = n
		}
		return nil
	}
	if err := intField("prioritytier", &p.PriorityTier); err != nil {
		return p, err
	}
	if err := intField("priorityjobfactor", &p.PriorityFactor); err != nil {
		return p, err
	}
	p.QOS = f["qos"]
	if v, ok := f["allowqos"]; ok && !strings.EqualFold(v, "ALL") && v != "" {
		p.AllowQOS = strings.Split(v, ",")
	}
	p.Default = strings.EqualFold(f["default"], "yes")
	if v, ok := f["state"]; ok {
		p.State = strings.ToUpper(v)
	}
	return p, nil
}

// setNodes reads a partition's Nodes=: "ALL", or a comma-separated list of
// hostlists and node set names.
func (p *PartitionConf) setNodes(v string, sets map[string][]string) error {
	if strings.EqualFold(v, "ALL") {
		p.AllNodes = true
		return nil
	}
	if _, ok := sets[v]; !ok && !strings.Contains(v, ",") {
		nodes, err := ExpandHostlist(v)
		if err != nil {
			return fmt.Errorf("Nodes=%s: %v", QuoteShort(v), err)
		}
		p.Nodes = nodes
		return nil
	}
	var nodes []string
	for _, item := range splitTopLevel(v) {
		switch members, isSet := sets[item]; {
		case strings.EqualFold(item, "ALL"):
			p.AllNodes = true
		case isSet:
			nodes = append(nodes, members...)
		default:
			ns, err := ExpandHostlist(item)
			if err != nil {
				return fmt.Errorf("Nodes=%s: %v", QuoteShort(v), err)
			}
			nodes = append(nodes, ns...)
		}
		if len(nodes) > MaxHostlistHosts {
			return fmt.Errorf("Nodes=%s: more than %d nodes: %w", QuoteShort(v), MaxHostlistHosts, ErrTooLarge)
		}
	}
	p.Nodes = dedupe(nodes)
	return nil
}

// splitTopLevel splits a list at the commas outside brackets.
func splitTopLevel(v string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(v[start:]); s != "" {
		out = append(out, s)
	}
	return out
}
