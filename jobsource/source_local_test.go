package jobsource

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/collect"
	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/store"
)

// serveQuerySocket serves db's jobs on a local query socket in dir, as the
// agent does, until the test ends.
func serveQuerySocket(t *testing.T, dir string, db *store.DB) string {
	t.Helper()
	path := filepath.Join(dir, "query.sock")
	ln, err := collect.ListenLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = collect.ServeLocal(ctx, ln, db, collect.LocalOptions{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return path
}

// TestOpenSourceFallsBackToQuerySocket: a user who cannot open the
// database reads through the agent's query socket; root, a readable
// database, --db and a turned-off socket do not; and when neither works
// the error says what failed and what to do.
func TestOpenSourceFallsBackToQuerySocket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	served, err := store.Open(ctx, filepath.Join(dir, "agent.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	j := profile.Job{Key: profile.Key{Cluster: "c", JobID: "5", Node: "n1"}, User: "me", UID: os.Getuid(),
		Start: time.Now().Add(-time.Hour), End: time.Now(), Status: profile.StatusFinished, Source: "agent"}
	if err := served.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	socket := serveQuerySocket(t, dir, served)
	readable := filepath.Join(dir, "agent.db")
	unreadable := filepath.Join(dir, "private", "gpuprof.db") // missing: as a user meets a 0700 directory's file
	absentSocket := filepath.Join(dir, "none.sock")

	tests := []struct {
		name       string
		db, socket string
		o          Options
		wantClient bool     // reads through the socket
		wantErr    []string // else the error says all of these
	}{
		{name: "user without database access uses the socket", db: unreadable, socket: socket, o: Options{UID: 1001}, wantClient: true},
		{name: "local flag still uses the socket", db: unreadable, socket: socket, o: Options{UID: 1001, Local: true}, wantClient: true},
		{name: "readable database is read directly", db: readable, socket: socket, o: Options{UID: 1001}},
		{name: "root reads the database only", db: unreadable, socket: socket, o: Options{UID: 0}, wantErr: []string{unreadable}},
		{name: "--db names that file only", db: unreadable, socket: socket, o: Options{UID: 1001, DBFlag: true}, wantErr: []string{unreadable}},
		{name: "socket turned off", db: unreadable, socket: "", o: Options{UID: 1001}, wantErr: []string{unreadable}},
		{name: "neither works", db: unreadable, socket: absentSocket, o: Options{UID: 1001},
			wantErr: []string{unreadable, "no such file", absentSocket, "is `gpuprof agent` running", "systemctl start gpuprof-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.DB, cfg.QuerySocket, cfg.SlurmConf = tt.db, tt.socket, ""
			src, err := Open(ctx, cfg, tt.o)
			if len(tt.wantErr) > 0 {
				if err == nil {
					src.Close()
					t.Fatal("Open succeeded, want an error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if tt.socket != absentSocket && strings.Contains(err.Error(), "socket") {
					t.Errorf("error %q mentions a socket it was not meant to try", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer src.Close()
			if got := src.client != nil; got != tt.wantClient {
				t.Fatalf("reads through the socket = %t, want %t", got, tt.wantClient)
			}
			if tt.wantClient && (src.client.Socket != tt.socket || src.client.Munge != nil) {
				t.Errorf("client = %+v, want the socket %s and no munge", src.client, tt.socket)
			}
			if !tt.wantClient {
				// Read directly, scoped to the caller (not the file's owner).
				if uid, ok := src.ScopedUID(); !ok || uid != tt.o.UID {
					t.Errorf("direct read forces uid %v (scoped %t), want %d", uid, ok, tt.o.UID)
				}
				return
			}
			// Through the socket the server names the caller: this process.
			if _, err := src.Job(ctx, "c", "5"); err != nil {
				t.Errorf("Job of this process's own job through the socket: %v", err)
			}
		})
	}
}

// The socket users' commands look for without a configuration file is
// the one the agent creates by default.
func TestDefaultQuerySocket(t *testing.T) {
	if got, want := config.Default().QuerySocket, "/run/gpuprof/query.sock"; got != want {
		t.Errorf("default query_socket = %q, want %q", got, want)
	}
}

// TestInputAndNoticesNamesArraysThroughTheSocket: through the agent's
// query socket (a client: the notices come with the profiles), the
// digest's lean read names an unsplit array's notice as Slurm does,
// "53_[1-3]", as the local database's read does, not by its raw id: a
// lean read carries the task list (the store's analysisColumns).
func TestInputAndNoticesNamesArraysThroughTheSocket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	served, err := store.Open(ctx, filepath.Join(dir, "agent.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	start := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	r := slurmext.JobRecord{Cluster: "c", JobID: "58", ArrayJobID: "53", ArrayTaskID: -1, ArrayTaskSpec: "1-3", HetOffset: -1,
		Name: "sweep", User: "me", UID: os.Getuid(), State: slurmext.StatePending, CancelledBy: -1, Submit: start}
	if err := served.PutSchedJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	p := profile.Job{Key: profile.Key{Cluster: "c", JobID: "58", Node: "n1"}, User: "me", UID: os.Getuid(),
		Start: start, End: start.Add(time.Hour), Status: profile.StatusFinished, Source: profile.SourceAgent,
		Notices: []profile.Notice{{Rule: profile.RuleIdleJob, Status: profile.NoticeSent, Time: start.Add(30 * time.Minute), Evidence: "idle"}}}
	if err := served.PutJob(ctx, p); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DB, cfg.QuerySocket, cfg.SlurmConf = filepath.Join(dir, "private", "gpuprof.db"), serveQuerySocket(t, dir, served), ""
	src, err := Open(ctx, cfg, Options{UID: 1001})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.client == nil {
		t.Fatal("not reading through the socket")
	}
	day := store.ViewFilter{Since: start.Add(-time.Hour), Until: start.Add(24 * time.Hour)}
	lean := day
	lean.Lean = true
	_, rows, err := src.inputAndNotices(ctx, lean, start.Add(24*time.Hour), NoticeQuery{Jobs: day, Since: day.Since, Until: day.Until})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].SlurmID != "53_[1-3]" {
		t.Errorf("rows %+v, want one notice of 53_[1-3]", rows)
	}
	// The local database's lean read names it alike.
	local := ForCaller(served, store.Caller{Admin: true})
	if _, rows, err := local.inputAndNotices(ctx, lean, start.Add(24*time.Hour), NoticeQuery{Jobs: day, Since: day.Since, Until: day.Until}); err != nil ||
		len(rows) != 1 || rows[0].SlurmID != "53_[1-3]" {
		t.Errorf("local rows %+v, %v; want one notice of 53_[1-3]", rows, err)
	}
}
