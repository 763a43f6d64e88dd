package store

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Issue 39, findings 2 and 3: an account of the group that may write the
// database's directory swaps the database's name for a link to a root-only
// WAL database, or for a FIFO, with renameat2(RENAME_EXCHANGE), in a loop,
// while root opens the database for writing and read-only (the query
// socket's handle) again and again. Root must never open what the link
// leads to (no -wal or -shm appears beside it) and never block.

// exchangerEnv names the directory the exchanger (this test binary, run
// as nobody) swaps names in.
const exchangerEnv = "GPUPROF_TEST_EXCHANGE_DIR"

// TestExchanger is the attacker's process, not a test: run by
// TestOpenExchangeRace as another account.
func TestExchanger(t *testing.T) {
	dir := os.Getenv(exchangerEnv)
	if dir == "" {
		t.Skip("the attacker's process of TestOpenExchangeRace")
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	db := filepath.Join(dir, "gpuprof.db")
	others := []string{filepath.Join(dir, "link"), filepath.Join(dir, "fifo")}
	n := 0
	for i := 0; ; i++ {
		select {
		case <-stop:
			fmt.Printf("exchanges %d\n", n)
			return
		default:
		}
		if unix.Renameat2(unix.AT_FDCWD, db, unix.AT_FDCWD, others[i/2%2], unix.RENAME_EXCHANGE) == nil {
			n++
		}
	}
}

func TestOpenExchangeRace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attacker runs as nobody")
	}
	base, err := os.MkdirTemp("", "gpuprof-race-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// The state directory as packaged (root:GROUP 2770), the attacker in
	// GROUP; a root-only directory with a WAL database of root's.
	state, foreign := filepath.Join(base, "state"), filepath.Join(base, "root-only")
	for _, d := range []string{state, foreign} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(state, 0, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(foreign, "secret.db")
	s, err := sql.Open("sqlite3", "file:"+secret+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	noSide := func() {
		t.Helper()
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Lstat(secret + suffix); err == nil {
				t.Fatalf("root created %s%s in a directory of root's alone, through the swapped name", secret, suffix)
			}
		}
	}
	noSide()
	ctx := context.Background()
	path := filepath.Join(state, "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Symlink(secret, filepath.Join(state, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(state, "fifo"), 0o666); err != nil {
		t.Fatal(err)
	}

	// The attacker: this binary, copied where nobody may run it.
	self, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "attacker")
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
	var stdout strings.Builder
	cmd := exec.Command(bin, "-test.run=^TestExchanger$", "-test.v")
	cmd.Env = append(os.Environ(), exchangerEnv+"="+state)
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	}
	defer stop()
	time.Sleep(200 * time.Millisecond)

	within := func(what string, fn func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still blocked after 10 s", what)
			return nil
		}
	}
	opened := map[string]int{}
	for i := range 200 {
		for _, ro := range []bool{false, true} {
			what := fmt.Sprintf("open %d (read-only %v)", i, ro)
			err := within(what, func() error {
				db, err := Open(ctx, path, Options{ReadOnly: ro, BusyTimeout: 2 * time.Second})
				if err != nil {
					return err
				}
				defer db.Close()
				_, err = db.ReaderFor(System).ListNotices(ctx, NoticeFilter{})
				return err
			})
			if err == nil {
				opened[fmt.Sprint("read-only ", ro)]++
			}
			noSide()
		}
	}
	stop()
	n := 0
	for line := range strings.Lines(stdout.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "exchanges "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	t.Logf("opened: %v; the attacker exchanged the names %d times", opened, n)
	if n == 0 {
		t.Fatalf("the attacker exchanged nothing: %s", stdout.String())
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o770 {
		t.Errorf("state directory mode after the opens: %v, %v; want 2770 given back", fi.Mode(), err)
	}
}
