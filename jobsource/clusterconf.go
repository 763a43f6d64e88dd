package jobsource

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
	"github.com/gpuprof/gpuprof/termtext"
)

// Conf is the Slurm configuration bound to the one cluster an
// answer is for: what the analysis may read of slurm.conf (nodes with
// their GPUs, types and shards; partitions and scheduler settings) and
// the one line on a configured file it did not use.
type Conf struct {
	Use analysis.ConfUse
	// Model is the bound configuration (nil when none is used): every
	// file read, its settings, node sets and gres.conf.
	Model      *slurmext.ClusterConf
	Nodes      []slurmext.NodeGres
	Sched      slurmext.SchedConf
	SchedKnown bool
}

// WhatIf is the part of a replay's parameters the configuration gives.
func (c *Conf) WhatIf() capacity.WhatIfParams {
	if c == nil {
		return capacity.WhatIfParams{}
	}
	return capacity.WhatIfParams{SlurmNodes: c.Nodes, Sched: c.Sched, SchedKnown: c.SchedKnown}
}

// BindSlurmConf is the one rule that binds a slurm.conf to a cluster's
// jobs (docs/configuration.md, "Which slurm.conf describes a cluster"):
// the file is [clusters.NAME] slurm_conf, else slurm_conf, and it is used
// only when its ClusterName is cluster (a file without one: only when
// [clusters.NAME] names it, or for the jobs recorded as "default").
// clusterOf reads a file's ClusterName ("" when it sets none). It returns
// the file to use ("" none) and, when a configured file is not used, the
// one line that says so.
func BindSlurmConf(cluster string, cfg config.Config, clusterOf func(path string) (string, error)) (path, notUsed string) {
	path = cfg.For(cluster).SlurmConf
	named := path != ""
	if !named {
		path = cfg.SlurmConf
	}
	if path == "" {
		return "", ""
	}
	p := termtext.Clean(path)
	fileCluster, err := clusterOf(path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist) && !named:
		// The default path on a host without Slurm: nothing to say.
		return "", ""
	case err != nil:
		return "", fmt.Sprintf("slurm.conf %s cannot be read (%s): not used", p, shortErr(err))
	case fileCluster == cluster:
		return path, ""
	case fileCluster == "" && (named || cluster == slurmext.DefaultCluster):
		return path, ""
	}
	hint := ""
	if !named {
		hint = fmt.Sprintf(" ([clusters.%s] slurm_conf names the file to use)", termtext.Clean(cluster))
	}
	if fileCluster == "" {
		return "", fmt.Sprintf("slurm.conf %s names no cluster (no ClusterName), the jobs are %s's: not used%s", p, termtext.Clean(cluster), hint)
	}
	return "", fmt.Sprintf("slurm.conf %s is cluster %s's, the jobs are %s's: not used%s", p, termtext.Clean(fileCluster), termtext.Clean(cluster), hint)
}

// shortErr is an error without the path the sentence already names.
func shortErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// BindConf reads what the analysis uses of cluster's Slurm configuration.
// With slurm_source "scontrol" or "auto", this host's slurmctld when it
// answers as cluster (liveModel): everything from it, nothing from the
// files. Else, or when it does not answer, the files (the line on the live
// cluster then in Use.NotUsed): the slurm.conf BindSlurmConf chooses (its nodes and scheduler settings)
// and the gres.conf beside it or named for the cluster (the GPU types of
// nodes whose Gres= names none). A slurm.conf that is used and cannot be
// parsed is an error: refused, not guessed.
func BindConf(cluster string, cfg config.Config) (*Conf, error) {
	c := &Conf{Use: analysis.ConfUse{Cluster: cluster}}
	liveNote := ""
	if cfg.SlurmSource == "scontrol" || cfg.SlurmSource == "auto" {
		m, note := liveModel(cluster, cfg.SlurmSource == "auto")
		if m != nil {
			c.Model, c.Nodes, c.Sched = m, m.Nodes, m.Sched
			c.SchedKnown = true
			c.Use.Source = slurmext.ScontrolSource
			return c, nil
		}
		liveNote = note
	}
	cfg.SlurmConf = localSlurmConf(cfg.SlurmConf)
	path, notUsed := BindSlurmConf(cluster, cfg, slurmext.ConfClusterName)
	c.Use.NotUsed = joinNotes(liveNote, notUsed)
	if path == "" {
		return c, nil
	}
	if cfg.SlurmSource == "scontrol" || cfg.SlurmSource == "auto" {
		c.Use.Source = "files"
	}
	m, err := slurmext.LoadClusterConf(path, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	c.Model, c.Nodes, c.Sched = m, m.Nodes, m.Sched
	c.SchedKnown = true
	c.Use.SlurmConf = path
	gres := cfg.For(cluster).GresConf
	if gres == "" {
		gres = m.GresConfPath()
	}
	if err := m.LoadGres(gres, nil); err == nil {
		c.Use.GresConf = gres
		if c.Nodes, err = gresTypes(m.Gres, c.Nodes); err != nil {
			return nil, fmt.Errorf("read %s: %w", gres, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", gres, err)
	}
	return c, nil
}

// joinNotes joins the lines on sources not used.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// gresTypes gives each node whose Gres= names no GPU type the type
// gres.conf gives all of its GPUs, when it gives them one and its lines
// count as many GPUs as Gres= does (with AutoDetect, a line without File=
// or Count= leaves the count to the hardware: the type is then taken only
// when it is the node's one type).
func gresTypes(g *slurmext.GresFile, nodes []slurmext.NodeGres) ([]slurmext.NodeGres, error) {
	out := slices.Clone(nodes)
	for i := range out {
		n := &out[i]
		if n.GPUs <= 0 || n.GPUType != "" {
			continue
		}
		gc, err := g.For(n.Name)
		if err != nil {
			return nil, err
		}
		t, count, known := "", 0, true
		for k, d := range gc.Declared {
			if k == 0 {
				t = strings.ToLower(d.Type)
			} else if !strings.EqualFold(d.Type, t) {
				t = ""
				break
			}
			count += d.Count
			known = known && d.CountKnown
		}
		auto := gc.AutoDetect != "" && !strings.EqualFold(gc.AutoDetect, "off")
		if t != "" && (count == n.GPUs || (!known && auto)) {
			n.GPUType = t
			n.GPUsByType = []slurmext.TypeCount{{Type: t, Count: n.GPUs}}
		}
	}
	return out, nil
}

// Clusters names the clusters of the jobs f selects, sorted: one job and
// two counts when they are all of one cluster, else one lean pass.
func (s *Source) Clusters(ctx context.Context, f store.ViewFilter) ([]string, error) {
	names, _, err := s.clusters(ctx, f)
	return names, err
}

// clusters is Clusters with, when the jobs are all of one cluster, how
// many they are (0 else): counted to tell, and read again by no one.
func (s *Source) clusters(ctx context.Context, f store.ViewFilter) ([]string, int, error) {
	one := f
	one.Limit, one.Offset, one.WithSeries, one.Lean = 1, 0, false, true
	vs, err := s.Jobs(ctx, one)
	if err != nil || len(vs) == 0 {
		return nil, 0, err
	}
	c := vs[0].Cluster
	all, err := s.Count(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	of := f
	of.Cluster = c
	n, err := s.Count(ctx, of)
	if err != nil {
		return nil, 0, err
	}
	if n == all {
		return []string{c}, n, nil
	}
	seen := map[string]bool{}
	lean := f
	lean.Lean, lean.WithSeries = true, false
	err = s.Each(ctx, lean, func(v store.JobView) error {
		seen[v.Cluster] = true
		return nil
	})
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, 0, err
}

// forCluster chooses the one cluster an answer is for and binds its
// Slurm configuration (BindConf): flag (--cluster) when given, else the
// one cluster of the jobs f selects; without jobs in f's window, the
// database's one cluster, else this host's (the cluster setting, else
// slurm_conf's ClusterName). Jobs of several clusters are refused, naming
// them (SeveralClustersError). It returns the cluster, its configuration
// and how many jobs of it f selects, when they were counted to choose it
// (0: not counted). Scope.Bind is its one user.
func (s *Source) forCluster(ctx context.Context, f store.ViewFilter, flag string) (string, *Conf, int, error) {
	cluster := slurmext.NormalClusterName(flag)
	counted := 0
	if cluster != "" {
		if err := s.CheckCluster(ctx, cluster); err != nil {
			return "", nil, 0, err
		}
	}
	if cluster == "" {
		names, n, err := s.clusters(ctx, f)
		if err != nil {
			return "", nil, 0, err
		}
		counted = n
		if len(names) == 0 {
			// No job in the window: the database's one cluster (a report
			// of an empty month still compares it with earlier ones), else
			// this host's when the database has it or no job at all.
			all := f
			all.Since, all.Until = time.Time{}, time.Time{}
			if names, err = s.Clusters(ctx, all); err != nil {
				return "", nil, 0, err
			}
			if host := slurmext.ClusterName(s.cfg.Cluster, "", localSlurmConf(s.cfg.SlurmConf)); len(names) != 1 && (len(names) == 0 || slices.Contains(names, host)) {
				names = []string{host}
			}
		}
		if len(names) > 1 {
			return "", nil, 0, &SeveralClustersError{Names: names}
		}
		cluster = names[0]
	}
	conf, err := BindConf(cluster, s.cfg)
	if err != nil {
		return "", nil, 0, err
	}
	return cluster, conf, counted, nil
}

// SeveralClustersError refuses an answer asked of the jobs of several
// clusters, naming them: a usage error (the caller chooses one).
type SeveralClustersError struct{ Names []string }

func (e *SeveralClustersError) Error() string {
	clean := make([]string, len(e.Names))
	for i, n := range e.Names {
		clean[i] = termtext.Clean(n)
	}
	return fmt.Sprintf("the jobs of the window belong to %d clusters (%s): an answer is for one cluster, its slurm.conf and its inventory; choose it with --cluster",
		len(e.Names), strings.Join(clean, ", "))
}

// BindModel is BindSlurmConf for a node-side reader (the agent and its
// notices): the bound slurm.conf read once (nil when none is bound, or it
// cannot be read) and, when a configured file is not used, the line that
// says why. A slurm.conf of another cluster is refused as the analysis
// refuses it.
func BindModel(cluster string, cfg config.Config) (*slurmext.ClusterConf, string) {
	cfg.SlurmConf = localSlurmConf(cfg.SlurmConf)
	path, notUsed := BindSlurmConf(cluster, cfg, slurmext.ConfClusterName)
	if path == "" {
		return nil, notUsed
	}
	m, err := slurmext.LoadClusterConf(path, nil)
	if err != nil {
		return nil, fmt.Sprintf("slurm.conf %s cannot be read (%s): not used", termtext.Clean(path), termtext.Clean(shortErr(err)))
	}
	return m, ""
}

// ConfRoots are where a configless node keeps slurmd's copy of the
// configuration (slurmext.FindSlurmConf); tests point them at fixtures.
// A command does not take SLURM_CONF from its environment (its answers do
// not change with the caller's environment: slurm_conf names the file).
var ConfRoots = func() slurmext.ConfRoots {
	r := slurmext.DefaultConfRoots()
	r.Env = ""
	return r
}()

// localSlurmConf is this host's slurm.conf: the configured file, else, on a
// configless node, slurmd's cached copy (the answer's conf.slurm_conf then
// names it).
func localSlurmConf(configured string) string {
	p, _ := slurmext.FindSlurmConf(configured, ConfRoots)
	return p
}
