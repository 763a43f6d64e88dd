package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func TestRequeuedRunReplacesFinishedProfile(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	t0 := time.Unix(1_800_000_000, 0)
	first := richJob("42", t0, 10, true) // finished run
	if err := db.PutJob(ctx, first); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, first.Key)
	if err != nil {
		t.Fatal(err)
	}

	// A late snapshot of the same run: refused.
	stale := richJob("42", t0, 5, false)
	if err := db.PutJob(ctx, stale); !errors.Is(err, ErrFinished) {
		t.Fatalf("stale running snapshot: %v, want ErrFinished", err)
	}

	// The job ran again after the first run ended (requeue): a new run.
	again := richJob("42", got.End.Add(30*time.Second), 3, false)
	if err := db.PutJob(ctx, again); err != nil {
		t.Fatalf("requeued run refused: %v", err)
	}
	now, err := db.GetJob(ctx, first.Key)
	if err != nil {
		t.Fatal(err)
	}
	if now.Status != profile.StatusRunning || !now.Start.Equal(again.Start.Truncate(time.Second)) {
		t.Errorf("after the requeued run's snapshot: status %s start %v, want running from %v", now.Status, now.Start, again.Start)
	}
}
