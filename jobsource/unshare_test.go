package jobsource

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/profile"
	"github.com/gpuprof/gpuprof/store"
)

// unshareEnv carries the database and socket paths to the user's process
// of TestUnsharedUserReadsThroughSocket.
const unshareEnv = "GPUPROF_TEST_UNSHARE"

// TestUnsharedUser is the user's process, not a test: run by
// TestUnsharedUserReadsThroughSocket as nobody inside `unshare -Ur`.
func TestUnsharedUser(t *testing.T) {
	paths := os.Getenv(unshareEnv)
	if paths == "" {
		t.Skip("the user's process of TestUnsharedUserReadsThroughSocket")
	}
	db, socket, _ := strings.Cut(paths, ":")
	cfg := config.Default()
	cfg.DB, cfg.QuerySocket, cfg.SlurmConf = db, socket, ""
	src, err := Open(context.Background(), cfg, Options{UID: os.Getuid()})
	if err != nil {
		fmt.Printf("uid %d: open: %v\n", os.Getuid(), err)
		os.Exit(1)
	}
	defer src.Close()
	if _, err := src.Job(context.Background(), "c", "5"); err != nil {
		fmt.Printf("uid %d: job 5: %v\n", os.Getuid(), err)
		os.Exit(1)
	}
	fmt.Printf("uid %d: job 5 read through the socket %v\n", os.Getuid(), src.client != nil)
}

// TestUnsharedUserReadsThroughSocket (issue 39, finding 9): inside
// `unshare -Ur` a user is uid 0 but no root: the database is denied to
// them, and `gpuprof jobs` answers through the agent's query socket, which
// names them by their real uid. Before, uid 0 never tried the socket and
// failed with "permission denied".
func TestUnsharedUserReadsThroughSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the user's process as nobody")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare(1)")
	}
	base, err := os.MkdirTemp("", "gpuprof-unshare-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	served, err := store.Open(ctx, filepath.Join(private, "gpuprof.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	j := profile.Job{Key: profile.Key{Cluster: "c", JobID: "5", Node: "n1"}, User: "nobody", UID: 65534,
		Start: time.Now().Add(-time.Hour), End: time.Now(), Status: profile.StatusFinished, Source: "agent"}
	if err := served.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	socket := serveQuerySocket(t, base, served)

	self, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "user")
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, self)
	self.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "-Ur", bin, "-test.run=^TestUnsharedUser$", "-test.v")
	cmd.Env = append(os.Environ(), unshareEnv+"="+filepath.Join(private, "gpuprof.db")+":"+socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	got, err := cmd.CombinedOutput()
	if strings.Contains(string(got), "Operation not permitted") && strings.Contains(string(got), "unshare") {
		t.Skipf("no user namespaces here: %s", got)
	}
	if err != nil || !strings.Contains(string(got), "uid 0: job 5 read through the socket true") {
		t.Errorf("the user inside unshare -Ur: %v\n%s", err, got)
	}
}
