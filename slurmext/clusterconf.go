package slurmext

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// ClusterConf is one cluster's Slurm configuration, read once as slurmctld
// reads it (ReadConfText: Include lines followed): its name, its nodes with
// their GPUs, its node sets, its partitions and scheduler settings, and,
// when there is one, its gres.conf. Every reader of Slurm's configuration
// takes this value instead of reading files itself.
type ClusterConf struct {
	// SlurmConf is the slurm.conf read; Files it and every file it
	// included, in the order read.
	SlurmConf string
	Files     []string
	// ClusterName is the ClusterName set (lowercased, as Slurm records
	// it), "" when none is set or the one set is not a valid name.
	ClusterName string
	// Nodes are the NodeName lines' nodes (NodeName=DEFAULT applied), in
	// file order.
	Nodes []NodeGres
	// NodeSets are the NodeSet lines' sets, by name, expanded.
	NodeSets map[string][]string
	// Sched are the scheduler settings and the partitions (Nodes= resolved
	// through node sets).
	Sched SchedConf
	// Gres is gres.conf when one was read (LoadGres); nil else.
	Gres *GresFile

	settings map[string]string
}

// Setting returns the last value slurm.conf gives a setting that is not a
// node, node set or partition line (key case-insensitive), and whether it
// gives one: what the files do not decide is not guessed.
func (c *ClusterConf) Setting(key string) (string, bool) {
	if c == nil {
		return "", false
	}
	v, ok := c.settings[strings.ToLower(key)]
	return v, ok
}

// isRecordKey reports whether key (lowercased) starts a record line in
// slurm.conf: the rest of such a line belongs to the record. Any other
// line is settings. A switch, not a map: a map literal is built before
// main in every binary that links slurmext, a hook's too (issue #41).
func isRecordKey(key string) bool {
	switch key {
	case "nodename", "partitionname", "nodeset", "frontendname", "downnodes", "switchname":
		return true
	}
	return false
}

// maxConfMembers bounds the nodes all partitions, and all node sets,
// name together.
const maxConfMembers = 1 << 22

// LoadClusterConf reads the slurm.conf at path with open (nil:
// ReadConfFile), following Include lines, into a ClusterConf. Errors name
// the file and line.
func LoadClusterConf(path string, open ConfOpener) (*ClusterConf, error) {
	t, err := ReadConfText(path, open)
	if err != nil {
		return nil, err
	}
	return NewClusterConf(t)
}

// NewClusterConf builds the model from a configuration's lines.
func NewClusterConf(t *ConfText) (*ClusterConf, error) {
	c := &ClusterConf{settings: settingsOf(t.Lines)}
	if len(t.Files) > 0 {
		c.SlurmConf = t.Files[0]
	}
	c.Files = t.Files
	if n, ok := c.Setting("ClusterName"); ok {
		if n = strings.ToLower(n); ValidClusterName(n) {
			c.ClusterName = n
		}
	}
	decls, err := nodeDecls(t.Lines)
	if err != nil {
		return nil, err
	}
	if c.Nodes, err = nodeGresOf(decls); err != nil {
		return nil, err
	}
	if c.NodeSets, err = nodeSetsOf(t.Lines, decls); err != nil {
		return nil, err
	}
	if c.Sched, err = schedOf(t.Lines, c.NodeSets); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadGres reads gres.conf at path (nil open: ReadConfFile), following its
// Include lines, into c.Gres.
func (c *ClusterConf) LoadGres(path string, open ConfOpener) error {
	t, err := ReadConfText(path, open)
	if err != nil {
		return err
	}
	c.Gres = &GresFile{Path: path, Files: t.Files, lines: t.Lines}
	return nil
}

// GresConfPath is the gres.conf beside the slurm.conf read.
func (c *ClusterConf) GresConfPath() string {
	return filepath.Join(filepath.Dir(c.SlurmConf), "gres.conf")
}

// settingsOf gives the last value of each key of the lines that are not
// records.
func settingsOf(lines []ConfLine) map[string]string {
	m := map[string]string{}
	for _, l := range lines {
		if isRecordKey(strings.ToLower(l.Pairs[0].Key)) {
			continue
		}
		for _, p := range l.Pairs {
			m[strings.ToLower(p.Key)] = p.Value
		}
	}
	return m
}

// nodeDecl is one node as the NodeName lines declare it.
type nodeDecl struct {
	name     string
	gres     string
	features []string
	where    string
}

// nodeDecls expands the NodeName lines (NodeName=DEFAULT applied to the
// lines after it; a node named twice keeps its last line).
func nodeDecls(lines []ConfLine) ([]nodeDecl, error) {
	var (
		out            []nodeDecl
		index          = map[string]int{}
		defGres, defFt string
	)
	for _, l := range lines {
		if !strings.EqualFold(l.Pairs[0].Key, "NodeName") {
			continue
		}
		name := l.Pairs[0].Value
		gres, hasGres := l.Get("Gres")
		ft, hasFt := l.Get("Features")
		if f, ok := l.Get("Feature"); ok {
			ft, hasFt = f, true
		}
		if strings.EqualFold(name, "DEFAULT") {
			if hasGres {
				defGres = gres
			}
			if hasFt {
				defFt = ft
			}
			continue
		}
		if !hasGres {
			gres = defGres
		}
		if !hasFt {
			ft = defFt
		}
		names, err := ExpandHostlist(name)
		if err != nil {
			return nil, fmt.Errorf("slurm.conf %s: NodeName=%s: %v: %w", l.Where(), QuoteShort(name), err, ErrBadSlurmConf)
		}
		var features []string
		for f := range strings.SplitSeq(ft, ",") {
			if f = strings.TrimSpace(f); f != "" {
				features = append(features, f)
			}
		}
		for _, n := range names {
			d := nodeDecl{name: n, gres: gres, features: features, where: l.Where()}
			if i, ok := index[n]; ok {
				out[i] = d
				continue
			}
			if len(out) >= maxConfNodes {
				return nil, fmt.Errorf("slurm.conf: more than %d nodes: %w", maxConfNodes, ErrTooLarge)
			}
			index[n] = len(out)
			out = append(out, d)
		}
	}
	return out, nil
}

func nodeGresOf(decls []nodeDecl) ([]NodeGres, error) {
	var nodes []NodeGres
	cache := map[string]NodeGres{}
	for _, d := range decls {
		g, ok := cache[d.gres]
		if !ok {
			var err error
			if g, err = parseNodeGres(d.gres); err != nil {
				return nil, fmt.Errorf("slurm.conf %s: Gres=%s: %v: %w", d.where, QuoteShort(d.gres), err, ErrBadSlurmConf)
			}
			cache[d.gres] = g
		}
		g.Name = d.name
		nodes = append(nodes, g)
	}
	return nodes, nil
}

// nodeSetsOf expands the NodeSet lines: Nodes= a hostlist, Feature= the
// nodes with that feature.
func nodeSetsOf(lines []ConfLine, decls []nodeDecl) (map[string][]string, error) {
	sets := map[string][]string{}
	total := 0
	for _, l := range lines {
		if !strings.EqualFold(l.Pairs[0].Key, "NodeSet") {
			continue
		}
		name := l.Pairs[0].Value
		var members []string
		if v, ok := l.Get("Nodes"); ok {
			if strings.EqualFold(v, "ALL") {
				for _, d := range decls {
					members = append(members, d.name)
				}
			} else {
				ns, err := ExpandHostlist(v)
				if err != nil {
					return nil, fmt.Errorf("slurm.conf %s: NodeSet=%s Nodes=%s: %v: %w", l.Where(), QuoteShort(name), QuoteShort(v), err, ErrBadSlurmConf)
				}
				members = append(members, ns...)
			}
		}
		if v, ok := l.Get("Feature"); ok {
			for _, d := range decls {
				for _, f := range d.features {
					if f == v {
						members = append(members, d.name)
						break
					}
				}
			}
		}
		sets[name] = dedupe(members)
		if total += len(sets[name]); total > maxConfMembers {
			return nil, fmt.Errorf("slurm.conf %s: node sets name more than %d nodes in all: %w", l.Where(), maxConfMembers, ErrTooLarge)
		}
	}
	return sets, nil
}

func dedupe(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// ReadClusterConf reads one slurm.conf text (no Include may be in it: a
// stream has no directory to resolve it from).
func ReadClusterConf(r io.Reader) (*ClusterConf, error) {
	t, err := readConfStream(r, "slurm.conf")
	if err != nil {
		return nil, err
	}
	return NewClusterConf(t)
}

func readConfStream(r io.Reader, name string) (*ConfText, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxConfBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > MaxConfBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", name, MaxConfBytes, ErrTooLarge)
	}
	return ParseConfText(name, b)
}

// confErr wraps a syntax error of slurm.conf in ErrBadSlurmConf too, so
// callers that test for it keep working.
func confErr(err error) error {
	if err != nil && errors.Is(err, ErrBadConf) && !errors.Is(err, ErrBadSlurmConf) {
		return fmt.Errorf("%w: %w", err, ErrBadSlurmConf)
	}
	return err
}
