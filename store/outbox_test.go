package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func outboxKeys(items []OutboxItem) []string {
	ks := make([]string, len(items))
	for i, it := range items {
		ks[i] = it.Key.JobID + "/" + it.Key.Node
	}
	return ks
}

func outboxLen(t *testing.T, db *DB) int {
	t.Helper()
	n, err := db.OutboxLen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOutboxDeliver(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 30, true)
	if err := db.EnqueueOutbox(ctx, j); err != nil {
		t.Fatal(err)
	}
	if n := outboxLen(t, db); n != 1 {
		t.Fatalf("OutboxLen = %d, want 1", n)
	}
	items, err := db.DueOutbox(ctx, time.Now(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("DueOutbox = %d items, want 1", len(items))
	}
	it := items[0]
	if it.Key != j.Key || it.Attempts != 0 || it.Version < 1 || it.CreatedAt.IsZero() || it.NextTry.After(time.Now()) {
		t.Errorf("item = %+v, want key %v, no attempts, due now", it, j.Key)
	}
	got, err := it.Job()
	if err != nil {
		t.Fatal(err)
	}
	if want := Normalize(j); !reflect.DeepEqual(got, want) {
		t.Errorf("queued profile:\n got %+v\nwant %+v", got, want)
	}
	ok, err := db.AckOutbox(ctx, it.Key, it.Version)
	if err != nil || !ok {
		t.Fatalf("AckOutbox = %v, %v; want true, nil", ok, err)
	}
	if n := outboxLen(t, db); n != 0 {
		t.Errorf("OutboxLen after ack = %d, want 0", n)
	}
	if ok, err := db.AckOutbox(ctx, it.Key, it.Version); err != nil || ok {
		t.Errorf("second AckOutbox = %v, %v; want false, nil", ok, err)
	}
}

func TestOutboxSupersede(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	running := richJob("1", t0, 10, false)
	finished := richJob("1", t0, 20, true)
	if err := db.EnqueueOutbox(ctx, running); err != nil {
		t.Fatal(err)
	}
	read, err := db.DueOutbox(ctx, time.Now(), 0)
	if err != nil || len(read) != 1 {
		t.Fatalf("DueOutbox = %v, %v", read, err)
	}
	// The sender is delivering the running profile when the finished one is
	// queued.
	if err := db.EnqueueOutbox(ctx, finished); err != nil {
		t.Fatal(err)
	}
	ok, err := db.AckOutbox(ctx, read[0].Key, read[0].Version)
	if err != nil || ok {
		t.Fatalf("AckOutbox of the superseded version = %v, %v; want false, nil", ok, err)
	}
	again, err := db.DueOutbox(ctx, time.Now(), 0)
	if err != nil || len(again) != 1 {
		t.Fatalf("DueOutbox after the stale ack = %v, %v; want the finished profile", again, err)
	}
	if again[0].Version <= read[0].Version {
		t.Errorf("version = %d after re-queueing, want above %d", again[0].Version, read[0].Version)
	}
	if got, err := again[0].Job(); err != nil || got.Status != profile.StatusFinished {
		t.Errorf("queued profile status = %q, %v; want finished", got.Status, err)
	}
	if ok, err := db.AckOutbox(ctx, again[0].Key, again[0].Version); err != nil || !ok {
		t.Errorf("AckOutbox of the current version = %v, %v; want true, nil", ok, err)
	}
}

func TestOutboxEnqueueSameAgain(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 10, true)
	if err := db.EnqueueOutbox(ctx, j); err != nil {
		t.Fatal(err)
	}
	read, err := db.DueOutbox(ctx, time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Enqueueing an identical profile (a repeated epilog) keeps the version,
	// so the delivery in flight still counts.
	if err := db.EnqueueOutbox(ctx, j); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.AckOutbox(ctx, read[0].Key, read[0].Version); err != nil || !ok {
		t.Errorf("AckOutbox after an identical enqueue = %v, %v; want true, nil", ok, err)
	}
}

func TestOutboxRetry(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 10, true)
	if err := db.EnqueueOutbox(ctx, j); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	next := now.Add(10 * time.Minute)
	for range 2 {
		if err := db.RetryOutbox(ctx, j.Key, next); err != nil {
			t.Fatal(err)
		}
	}
	// A newer profile keeps the schedule: the collector is still down.
	changed := j
	changed.Comment = "changed"
	if err := db.EnqueueOutbox(ctx, changed); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		at   time.Time
		want int
	}{
		{name: "before the next try", at: now, want: 0},
		{name: "at the next try", at: next, want: 1},
		{name: "later", at: next.Add(time.Hour), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := db.DueOutbox(ctx, tt.at, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tt.want {
				t.Fatalf("DueOutbox(%v) = %d items, want %d", tt.at, len(items), tt.want)
			}
			if tt.want == 1 && (items[0].Attempts != 2 || !items[0].NextTry.Equal(normTime(next))) {
				t.Errorf("item attempts %d, next try %v; want 2, %v", items[0].Attempts, items[0].NextTry, normTime(next))
			}
		})
	}
	missing := profile.Key{Cluster: "lab", JobID: "404", Node: "gpu01"}
	if err := db.RetryOutbox(ctx, missing, next); !errors.Is(err, ErrNotFound) {
		t.Errorf("RetryOutbox of a missing item: got %v, want ErrNotFound", err)
	}
}

func TestOutboxDueOrder(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	for _, j := range []profile.Job{
		simpleJob("lab", "1", "gpu01", "a", 1, t0, t0.Add(time.Hour)),
		simpleJob("lab", "2", "gpu01", "a", 1, t0, t0.Add(time.Hour)),
		simpleJob("lab", "3", "gpu01", "a", 1, t0, t0.Add(time.Hour)),
		simpleJob("lab", "3", "gpu02", "a", 1, t0, t0.Add(time.Hour)),
	} {
		if err := db.EnqueueOutbox(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now() // after the enqueues: all of them are due
	// 1 failed before; it waits behind the others until its retry time.
	if err := db.RetryOutbox(ctx, profile.Key{Cluster: "lab", JobID: "1", Node: "gpu01"}, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		at    time.Time
		limit int
		want  []string
	}{
		{name: "due now", at: now, want: []string{"2/gpu01", "3/gpu01", "3/gpu02"}},
		{name: "limit", at: now, limit: 2, want: []string{"2/gpu01", "3/gpu01"}},
		{name: "retry due too", at: now.Add(time.Minute), want: []string{"2/gpu01", "3/gpu01", "3/gpu02", "1/gpu01"}},
		{name: "nothing due yet", at: now.Add(-time.Hour), want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := db.DueOutbox(ctx, tt.at, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got := outboxKeys(items); !slices.Equal(got, tt.want) {
				t.Errorf("DueOutbox = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOutboxInTx(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 10, true)
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(tx *Tx) error {
		if err := tx.PutJob(ctx, j); err != nil {
			return err
		}
		if err := tx.EnqueueOutbox(ctx, j); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n := outboxLen(t, db); n != 0 {
		t.Errorf("OutboxLen after rollback = %d, want 0", n)
	}
	err = db.WithTx(ctx, func(tx *Tx) error {
		if err := tx.PutJob(ctx, j); err != nil {
			return err
		}
		return tx.EnqueueOutbox(ctx, j)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := outboxLen(t, db); n != 1 {
		t.Errorf("OutboxLen after commit = %d, want 1", n)
	}
}

func TestOutboxInvalid(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 5, true)
	j.Node = ""
	if err := db.EnqueueOutbox(ctx, j); !errors.Is(err, ErrInvalid) {
		t.Errorf("EnqueueOutbox: got %v, want ErrInvalid", err)
	}
	if n := outboxLen(t, db); n != 0 {
		t.Errorf("OutboxLen = %d, want 0", n)
	}
}
