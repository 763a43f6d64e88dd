package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/store"
)

// The commands are wired: profiles reads the database named by --db.
func TestProfilesCommand(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the local database shows other users' jobs to root or admin_group only")
	}
	dir := t.TempDir()
	t.Setenv("GPUPROF_CONFIG", "")
	db := filepath.Join(dir, "m.db")
	var buf bytes.Buffer
	root := newRootCommand()
	root.SetOut(&buf)
	root.SetArgs([]string{"demo", "month", "--out", dir, "--db", db, "--days", "1"})
	if err := root.Execute(); err != nil {
		t.Fatalf("demo month: %v", err)
	}
	if !strings.Contains(buf.String(), "demo month: 4 nodes") {
		t.Errorf("demo month output %q", buf.String())
	}
	buf.Reset()
	root = newRootCommand()
	root.SetOut(&buf)
	root.SetArgs([]string{"profiles", "--db", db, "--user", "alice"})
	if err := root.Execute(); err != nil {
		t.Fatalf("profiles: %v", err)
	}
	got := buf.String()
	if !strings.Contains(got, "train_vit_large") || strings.Contains(got, "serve_embeddings") {
		t.Errorf("profiles --user alice:\n%s", got)
	}
}

// inputFromViews converts views as the analysis commands do while reading.
func inputFromViews(views []store.JobView) analysis.Input {
	b := analysis.NewInputBuilder()
	for _, v := range views {
		b.Add(v.Sched, v.Profiles)
	}
	return b.Input(analysis.Window{}, time.Time{})
}
