package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestJobAllocationRoundTrip (issue #38): the shards slurmctld allocated
// a job on a node survive the database; a shard count without a known
// allocation is refused, never stored as a guess.
func TestJobAllocationRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	j := richJob("38", start, 4, true)
	j.Shards, j.AllocKnown = 2, true
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shards != 2 || !got.AllocKnown {
		t.Errorf("read back shards %d (known %t), want 2 (known)", got.Shards, got.AllocKnown)
	}
	bad := richJob("39", start, 4, true)
	bad.Shards = 2
	if err := db.PutJob(ctx, bad); !errors.Is(err, ErrInvalid) {
		t.Errorf("shards without a known allocation: err %v, want ErrInvalid", err)
	}
}
