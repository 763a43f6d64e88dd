package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
	"github.com/gpuprof/gpuprof/internal/safefs/safefstest"
)

// The packaged spool is /var/lib/gpuprof/spool, both root:gpuprof 2770:
// the gpuprof user (serve, import) and the SlurmUser (jobcomp) may rename,
// remove and plant entries in both, so root (the agent, the prolog and
// epilog) must follow no link there. Each test plants what such an account
// could and runs the real code as root; the link's target (standing in for
// /etc) must stay untouched. The tests run as root, whose own planted links
// stand for the group's: the code cannot tell, the directory's mode says
// who may have planted them.

// sharedSpool returns a state directory and its spool, both set-group-ID
// and group-writable as packaged.
func sharedSpool(t *testing.T) (state string, d Dir) {
	t.Helper()
	state = groupdirtest.Dir(t, "gpuprof")
	sp := filepath.Join(state, "spool")
	if err := os.Mkdir(sp, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sp, 0o770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	return state, Dir{Path: sp}
}

// A spool directory replaced by a link: Put must not write through it.
func TestPutRefusesLinkedSpool(t *testing.T) {
	for _, which := range []string{"etc", "missing"} {
		t.Run(which, func(t *testing.T) {
			tg := safefstest.New(t)
			target := map[string]string{"etc": tg.Dir, "missing": tg.Missing}[which]
			state, d := sharedSpool(t)
			if err := os.Remove(d.Path); err != nil {
				t.Fatal(err)
			}
			safefstest.Plant(t, target, d.Path)
			if name, err := d.Put("epilog", rec{JobID: "1"}); err == nil {
				t.Errorf("Put through %s -> %s = %s, nil; want an error", d.Path, target, name)
			}
			// A spool below a linked directory (spool_dir = state/link/spool).
			link := filepath.Join(state, "link")
			safefstest.Plant(t, target, link)
			if name, err := (Dir{Path: filepath.Join(link, "spool")}).Put("epilog", rec{JobID: "1"}); err == nil {
				t.Errorf("Put below %s -> %s = %s, nil; want an error", link, target, name)
			}
			tg.Untouched(t)
		})
	}
}

// A quarantine directory replaced by a link: the record stays in the
// spool, nothing is re-moded or written where the link points.
func TestQuarantineRefusesLinkedBad(t *testing.T) {
	for _, which := range []string{"etc", "missing"} {
		t.Run(which, func(t *testing.T) {
			tg := safefstest.New(t)
			target := map[string]string{"etc": tg.Dir, "missing": tg.Missing}[which]
			_, d := sharedSpool(t)
			name, err := d.Put("epilog", rec{JobID: "1"})
			if err != nil {
				t.Fatal(err)
			}
			safefstest.Plant(t, target, filepath.Join(d.Path, BadDir))
			if err := d.Quarantine(name, "invalid JSON"); err == nil {
				t.Errorf("Quarantine with %s -> %s: nil, want an error", BadDir, target)
			}
			if _, err := os.Lstat(filepath.Join(d.Path, name)); err != nil {
				t.Errorf("the record left the spool: %v", err)
			}
			tg.Untouched(t)
		})
	}
}

// A reason file (or a quarantined record's name) planted as a link: the
// reason lands in bad/ as a file of its own, the target keeps its
// content, mode and time.
func TestQuarantineReplacesLinkedReason(t *testing.T) {
	for _, which := range []string{"file", "etc", "missing"} {
		for _, planted := range []string{".reason", ""} {
			t.Run(which+"/"+planted, func(t *testing.T) {
				tg := safefstest.New(t)
				target := map[string]string{"file": tg.File, "etc": tg.Dir, "missing": tg.Missing}[which]
				_, d := sharedSpool(t)
				name, err := d.Put("epilog", rec{JobID: "1"})
				if err != nil {
					t.Fatal(err)
				}
				bad := filepath.Join(d.Path, BadDir)
				if err := os.Mkdir(bad, 0o770); err != nil {
					t.Fatal(err)
				}
				safefstest.Plant(t, target, filepath.Join(bad, name+planted))
				if err := d.Quarantine(name, "/lib/evil.so"); err != nil {
					t.Fatalf("Quarantine: %v", err)
				}
				reason, err := os.Lstat(filepath.Join(bad, name+".reason"))
				if err != nil || !reason.Mode().IsRegular() || reason.Mode().Perm() != 0o660 {
					t.Errorf("reason file: %v, %v; want a regular file of mode 0660", reason, err)
				}
				kept, err := os.Lstat(filepath.Join(bad, name))
				if err != nil || !kept.Mode().IsRegular() {
					t.Errorf("quarantined record: %v, %v; want a regular file", kept, err)
				}
				tg.Untouched(t)
			})
		}
	}
}

// Reading records as root: a record that is a hard link (another name of
// a file elsewhere: the kernel allows it where fs.protected_hardlinks is
// off, or for the planter's own files), larger than any record, or not a
// regular file is an error to quarantine, never data.
func TestListRefusesOddRecords(t *testing.T) {
	tg := safefstest.New(t)
	_, d := sharedSpool(t)
	linked := "00000000000000000001-1-0000000000000001.epilog.json"
	if err := os.Link(tg.File, filepath.Join(d.Path, linked)); err != nil {
		t.Skipf("cannot hard-link across these directories: %v", err)
	}
	huge := "00000000000000000002-1-0000000000000002.epilog.json"
	f, err := os.Create(filepath.Join(d.Path, huge))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxRecordSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	fifo := "00000000000000000003-1-0000000000000003.epilog.json"
	if err := syscall.Mkfifo(filepath.Join(d.Path, fifo), 0o660); err != nil {
		t.Fatal(err)
	}
	good, err := d.Put("epilog", rec{JobID: "2"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var es []Entry
	go func() {
		defer close(done)
		es, err = d.List()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("List hangs on a FIFO named like a record")
	}
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Entry{}
	for _, e := range es {
		got[e.Name] = e
	}
	for _, name := range []string{linked, huge} {
		e, ok := got[name]
		if !ok || e.Err == nil || e.Data != nil {
			t.Errorf("%s listed: %v, error %v, %d bytes; want an entry with an error and no data", name, ok, e.Err, len(e.Data))
		}
	}
	if e, ok := got[linked]; ok && strings.Contains(string(e.Data), "root's own line") {
		t.Errorf("List read the hard-linked file's content")
	}
	if e, ok := got[good]; !ok || e.Err != nil {
		t.Errorf("the good record: listed %v, error %v", ok, e.Err)
	}
	// The hard-linked record quarantined: its other name keeps everything.
	if err := d.Quarantine(linked, "not a record"); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Quarantine of the linked record: %v", err)
	}
	tg.Untouched(t)
}
