package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCheckOwner: the owner a push may name is Slurm's (the scheduler
// record's uid, when known), else that of the job's finished profiles,
// else that of its running profiles on other nodes; the node's own
// running profile decides nothing.
func TestCheckOwner(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	put := func(id, node string, uid int, finished bool) {
		var end time.Time
		if finished {
			end = at(2)
		}
		if err := db.PutJob(ctx, simpleJob("lab", id, node, "u", uid, at(1), end)); err != nil {
			t.Fatal(err)
		}
	}
	sched := func(id string, uid int) {
		r := rec(id, "COMPLETED", at(1), at(2), "jobcomp")
		r.UID = uid
		if err := db.PutSchedJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sched("1", 1001) // Slurm says 1001
	put("1", "n1", 1001, true)
	sched("2", -1) // a record that does not know the owner
	put("2", "n1", 1002, true)
	put("3", "n1", 1001, false) // running on n1 only
	put("4", "n1", 1001, true)  // finished on n1
	tests := []struct {
		name string
		id   string
		node string
		uid  int
		want bool // ErrOwner
	}{
		{name: "Slurm's owner", id: "1", node: "n2", uid: 1001},
		{name: "not Slurm's owner", id: "1", node: "n2", uid: 1002, want: true},
		{name: "not Slurm's owner, the same node", id: "1", node: "n1", uid: 1002, want: true},
		{name: "a record without owner: the profiles decide", id: "2", node: "n2", uid: 1001, want: true},
		{name: "a record without owner, the profiles' owner", id: "2", node: "n2", uid: 1002},
		{name: "the node's own running profile decides nothing", id: "3", node: "n1", uid: 1002},
		{name: "another node's running profile decides", id: "3", node: "n2", uid: 1002, want: true},
		{name: "a finished profile decides, on its own node too", id: "4", node: "n1", uid: 1002, want: true},
		{name: "a finished profile's owner again", id: "4", node: "n1", uid: 1001},
		{name: "a new job", id: "5", node: "n1", uid: 1002},
		{name: "the same id on another cluster", id: "1", node: "n1", uid: 1002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := simpleJob("lab", tt.id, tt.node, "u", tt.uid, at(1), time.Time{})
			if tt.name == "the same id on another cluster" {
				j.Cluster = "other"
			}
			err := db.WithTx(ctx, func(tx *Tx) error { return tx.CheckOwner(ctx, j) })
			if got := errors.Is(err, ErrOwner); got != tt.want {
				t.Errorf("CheckOwner(job %s node %s uid %d) = %v, want ErrOwner %t", tt.id, tt.node, tt.uid, err, tt.want)
			}
			if err != nil && !errors.Is(err, ErrOwner) {
				t.Errorf("CheckOwner: %v", err)
			}
		})
	}
}
