package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gpuprof/gpuprof/slurmext"
)

// Placement is what Slurm's records (jobcomp's reports, sacct imports)
// say about where a job ran, for one node.
type Placement struct {
	// OnNode: a report of the job lists the node in its NodeList.
	OnNode bool
	// Nodes are the node lists the job's reports give (hostlist
	// expressions, each once, in order of arrival); empty when no report
	// of the job names a node (none yet, or it never started).
	Nodes []string
}

// PlacedOn says whether Slurm's records place job jobID of cluster on
// node: any of its reports, of any run, whose node list names it (a
// requeued job ran on other nodes before). A job with no record yet is
// placed nowhere (the zero Placement, no error).
func (db *DB) PlacedOn(ctx context.Context, cluster, jobID, node string) (p Placement, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		p, err = tx.PlacedOn(ctx, cluster, jobID, node)
		return err
	})
	return p, err
}

// PlacedOn is DB.PlacedOn within a transaction.
func (t *Tx) PlacedOn(ctx context.Context, cluster, jobID, node string) (Placement, error) {
	rs, err := t.schedReports(ctx, cluster, jobID)
	switch {
	case errors.Is(err, ErrNotFound):
		return Placement{}, nil
	case err != nil:
		return Placement{}, fmt.Errorf("placement of job %s/%s: %w", cluster, jobID, err)
	}
	var p Placement
	for _, r := range rs {
		if r.NodeList == "" || slices.Contains(p.Nodes, r.NodeList) {
			continue
		}
		p.Nodes = append(p.Nodes, r.NodeList)
		// The store keeps only node lists slurmext parsed; one it cannot
		// read places nothing.
		if on, err := slurmext.HostlistContains(r.NodeList, node); err == nil && on {
			p.OnNode = true
		}
	}
	return p, nil
}
