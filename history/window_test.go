package history_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/history"
)

// TestWindow: a live import ends now unless told; it starts where it is
// told, else an hour before where the last import of the cluster stopped,
// else 90 days before its end; a start not before the end is refused.
func TestWindow(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	now := t0.Add(30 * 24 * time.Hour)
	mark := t0.Add(10 * 24 * time.Hour)
	if err := db.SetImportMark(ctx, "marked", history.Source, mark); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name           string
		cluster        string
		since, until   time.Time
		wantFrom, want time.Time
		wantErr        error
	}{
		{name: "first import", cluster: "new", wantFrom: now.AddDate(0, 0, -90), want: now},
		{name: "first import until", cluster: "new", until: t0, wantFrom: t0.AddDate(0, 0, -90), want: t0},
		{name: "resumed", cluster: "marked", wantFrom: mark.Add(-time.Hour), want: now},
		{name: "since given", cluster: "marked", since: t0, wantFrom: t0, want: now},
		{name: "since and until", cluster: "marked", since: t0, until: t0.Add(time.Hour), wantFrom: t0, want: t0.Add(time.Hour)},
		{name: "since is now", cluster: "new", since: now, wantErr: history.ErrEmptyWindow},
		{name: "since after now", cluster: "new", since: now.Add(time.Hour), wantErr: history.ErrEmptyWindow},
	} {
		t.Run(tt.name, func(t *testing.T) {
			from, to, err := history.Window(ctx, db, tt.cluster, tt.since, tt.until, now)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (!from.Equal(tt.wantFrom) || !to.Equal(tt.want)) {
				t.Errorf("window = %v to %v, want %v to %v", from, to, tt.wantFrom, tt.want)
			}
		})
	}
}

// TestStartSacct: sacct's output is read; a failing sacct's standard
// error is in the error its wait returns.
func TestStartSacct(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, script string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, wait, err := history.StartSacct(context.Background(), fake("ok", "echo JobID\n"), t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out)
	if err := wait(); err != nil || string(b) != "JobID\n" {
		t.Errorf("read %q, wait %v; want \"JobID\\n\", nil", b, err)
	}
	out, wait, err = history.StartSacct(context.Background(), fake("fails", "echo 'sacct: error: Problem talking to the database' >&2\nexit 1\n"), t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(out)
	if err := wait(); err == nil || !strings.Contains(err.Error(), "Problem talking to the database") {
		t.Errorf("wait = %v, want sacct's complaint", err)
	}
	if _, _, err := history.StartSacct(context.Background(), filepath.Join(dir, "absent"), t0, t0.Add(time.Hour)); err == nil || !strings.HasPrefix(err.Error(), "run sacct: ") {
		t.Errorf("absent sacct: err = %v, want run sacct: …", err)
	}
}

// TestStartLive: a live import runs sacct over its window (Window) and
// says which; an empty window runs nothing.
func TestStartLive(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	sacct := filepath.Join(t.TempDir(), "sacct")
	if err := os.WriteFile(sacct, []byte("#!/bin/sh\necho JobID\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(30 * 24 * time.Hour)
	live, err := history.StartLive(ctx, sacct, db, "c1", time.Time{}, time.Time{}, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(live.Out)
	if err := live.Wait(); err != nil || string(b) != "JobID\n" {
		t.Errorf("read %q, wait %v; want \"JobID\\n\", nil", b, err)
	}
	if want := now.AddDate(0, 0, -history.LookbackDays); !live.From.Equal(want) || !live.To.Equal(now) {
		t.Errorf("window %v..%v, want %v..%v", live.From, live.To, want, now)
	}
	if _, err := history.StartLive(ctx, filepath.Join(t.TempDir(), "absent"), db, "c1", now, now, now); !errors.Is(err, history.ErrEmptyWindow) {
		t.Errorf("empty window: %v, want ErrEmptyWindow (and sacct not run)", err)
	}
}
