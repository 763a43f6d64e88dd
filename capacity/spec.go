package capacity

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/slurmext"
)

// Specs are a what-if's changes as a person writes them (gpuprof
// whatif's --add, --remove, --partition, --qos, --node, --growth and
// --horizon; docs/whatif.md). ParseSpecs reads them into WhatIfParams.
type Specs struct {
	// Add and Remove are GPUs: "2xH100", Add also "2xH100:partition".
	Add, Remove []string
	// Partitions change or add a partition: "NAME:Nodes=…,MaxTime=…".
	Partitions []string
	// QOS set a QOS's limits: "NAME:MaxTRESPerUser=gres/gpu=4,…".
	QOS []string
	// Nodes are the cluster's nodes: "gpu[01-02]:4xh100[:partition]".
	Nodes []string
	// Growth per year ("30%" or "0.3") and Horizon ("12mo", "1y"): both
	// or neither (the caller checks the pair).
	Growth, Horizon string
}

// SpecError is a spec ParseSpecs could not read. Spec names its kind as
// the command line does: "add", "remove", "partition", "qos", "node",
// "growth" or "horizon".
type SpecError struct {
	Spec string
	Err  error
}

func (e *SpecError) Error() string { return e.Spec + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// ParseSpecs reads s into p's Growth, Months, Changes and FlagNodes, in
// this order: growth, horizon, add, remove, partition, qos, node. The
// first spec it cannot read is the error, a *SpecError.
func ParseSpecs(s Specs, p *WhatIfParams) error {
	if s.Growth != "" {
		var err error
		if p.Growth, err = ParseGrowth(s.Growth); err != nil {
			return &SpecError{"growth", err}
		}
		if p.Months, err = ParseHorizon(s.Horizon); err != nil {
			return &SpecError{"horizon", err}
		}
	}
	for _, x := range s.Add {
		c, err := ParseGPUCount(x, true)
		if err != nil {
			return &SpecError{"add", err}
		}
		c.Kind = analysis.ChangeAdd
		p.Changes = append(p.Changes, c)
	}
	for _, x := range s.Remove {
		c, err := ParseGPUCount(x, false)
		if err != nil {
			return &SpecError{"remove", err}
		}
		c.Kind = analysis.ChangeRemove
		p.Changes = append(p.Changes, c)
	}
	for _, x := range s.Partitions {
		pc, set, err := slurmext.ParsePartitionSpec(x)
		if err != nil {
			return &SpecError{"partition", err}
		}
		p.Changes = append(p.Changes, analysis.Change{Kind: analysis.ChangePartition, PartitionConf: pc, PartitionSet: set, Spec: x})
	}
	for _, x := range s.QOS {
		q, err := slurmext.ParseQOSSpec(x)
		if err != nil {
			return &SpecError{"qos", err}
		}
		p.Changes = append(p.Changes, analysis.Change{Kind: analysis.ChangeQOS, QOS: q, Spec: x})
	}
	for _, x := range s.Nodes {
		nodes, err := ParseNodeSpec(x)
		if err != nil {
			return &SpecError{"node", err}
		}
		p.FlagNodes = append(p.FlagNodes, nodes...)
	}
	return nil
}

// gpuCountRe is compiled on first use, not at start-up: its bounded
// repetitions expand into a large program, and every gpuprof process (a
// slurmd hook among them) would pay for it (issue #41).
var gpuCountRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]{1,4})[xX]([A-Za-z0-9][A-Za-z0-9._-]{0,63})(?::([A-Za-z0-9_.-]{1,64}))?$`)
})

// ParseGPUCount reads "2xH100" or, with a partition, "2xH100:gpu".
func ParseGPUCount(s string, partitionOK bool) (analysis.Change, error) {
	m := gpuCountRe().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || !partitionOK && m[3] != "" {
		form := `"2xH100"`
		if partitionOK {
			form = `"2xH100" or "2xH100:partition"`
		}
		return analysis.Change{}, fmt.Errorf("%q: want %s", s, form)
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 {
		return analysis.Change{}, fmt.Errorf("%q: want at least one GPU", s)
	}
	return analysis.Change{Count: n, Model: m[2], Partition: m[3], Spec: s}, nil
}

// ParseNodeSpec reads "gpu[01-02]:4xh100" or "gpu01:4xh100:gpu".
func ParseNodeSpec(s string) ([]analysis.Node, error) {
	hosts, rest, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("%q: want NODES:COUNTxTYPE[:partition], e.g. gpu[01-02]:4xh100", s)
	}
	names, err := slurmext.ExpandHostlist(hosts)
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("%q: bad node list %q", s, hosts)
	}
	c, err := ParseGPUCount(rest, true)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", s, err)
	}
	var out []analysis.Node
	for _, n := range names {
		nd := analysis.Node{Name: n, GPUModel: c.Model, GPUs: c.Count}
		if c.Partition != "" {
			nd.Partitions = []string{c.Partition}
		}
		out = append(out, nd)
	}
	return out, nil
}

// ParseGrowth reads a yearly demand growth as ParseFraction does,
// refusing one of -100 % or less (demand would vanish).
func ParseGrowth(s string) (float64, error) {
	g, err := ParseFraction(s)
	if err != nil {
		return 0, err
	}
	if g <= -1 {
		return 0, fmt.Errorf("%s would make demand vanish", s)
	}
	return g, nil
}

// ParseFraction reads "30%" as 0.3 and "0.3" as 0.3. A bare number above 1
// is refused rather than guessed: "30" could mean 30 % or 3000 %.
func ParseFraction(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pctForm := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bad fraction %q (want \"30%%\" or \"0.3\")", s)
	}
	if pctForm {
		return v / 100, nil
	}
	if math.Abs(v) > 1 {
		return 0, fmt.Errorf("bare %q is ambiguous: write \"%s%%\" or a fraction such as \"0.3\"", s, t)
	}
	return v, nil
}

// ParseHorizon reads "12mo", "18mo", "1y", "1.5y" or "2yr" as a whole
// number of months.
func ParseHorizon(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	var num string
	var perUnit float64
	switch {
	case strings.HasSuffix(t, "mo"):
		num, perUnit = strings.TrimSuffix(t, "mo"), 1
	case strings.HasSuffix(t, "yr"):
		num, perUnit = strings.TrimSuffix(t, "yr"), 12
	case strings.HasSuffix(t, "y"):
		num, perUnit = strings.TrimSuffix(t, "y"), 12
	default:
		return 0, fmt.Errorf("bad horizon %q (want months \"12mo\" or years \"1y\")", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("bad horizon %q (want months \"12mo\" or years \"1y\")", s)
	}
	months := v * perUnit
	if months != math.Trunc(months) || months > 1200 {
		return 0, fmt.Errorf("horizon %q is not a whole number of months up to 100 years", s)
	}
	return int(months), nil
}
