package spool

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gpuprof/gpuprof/internal/groupdir/groupdirtest"
)

type rec struct {
	JobID string `json:"job_id"`
	N     int    `json:"n"`
}

func TestPutList(t *testing.T) {
	d := Dir{Path: filepath.Join(t.TempDir(), "spool", "nested")}
	var names []string
	for i, kind := range []string{"job", "job", "finish", "job_v2", "job"} {
		name, err := d.Put(kind, rec{JobID: "42", N: i})
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		names = append(names, name)
	}
	st, err := os.Stat(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("spool dir mode = %v, want 0700", st.Mode().Perm())
	}

	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(names) {
		t.Fatalf("List returned %d entries, want %d", len(es), len(names))
	}
	for i, e := range es {
		var got rec
		if err := json.Unmarshal(e.Data, &got); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if got.N != i || e.Name != names[i] || e.Err != nil {
			t.Errorf("entry %d = %+v (n=%d), want Put number %d named %s", i, e, got.N, i, names[i])
		}
		if e.Time.IsZero() {
			t.Errorf("entry %d has no time", i)
		}
	}
	if kinds := []string{es[0].Kind, es[2].Kind, es[3].Kind}; !slices.Equal(kinds, []string{"job", "finish", "job_v2"}) {
		t.Errorf("kinds = %v", kinds)
	}
	if fi, err := os.Stat(filepath.Join(d.Path, names[0])); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record file: %v, %v; want mode 0600", fi, err)
	}
}

func TestListOrderIsByTimeNotText(t *testing.T) {
	dir := t.TempDir()
	d := Dir{Path: dir}
	// A shorter timestamp (unpadded, or an older clock) must still sort
	// first; text order would put "9..." after "1...".
	for _, name := range []string{
		"00000000000000000010-7-00000000000000ff.job.json",
		"9-7-0000000000000001.job.json",
		"00000000000000000010-7-0000000000000001.job.json",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name)
	}
	want := []string{
		"9-7-0000000000000001.job.json",
		"00000000000000000010-7-0000000000000001.job.json",
		"00000000000000000010-7-00000000000000ff.job.json",
	}
	if !slices.Equal(got, want) {
		t.Errorf("List order = %v, want %v", got, want)
	}
}

func TestListIgnores(t *testing.T) {
	dir := t.TempDir()
	d := Dir{Path: dir}
	name, err := d.Put("job", rec{JobID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	// What a crash in the middle of Put leaves, and other strays.
	for _, stray := range []string{
		".tmp-123456", // Put's temporary file
		"notes.txt",
		"123-1-ab.job.yaml",
		"abc-1-ab.job.json",
		"123-1.job.json",
		"123-1-ab.JOB.json",
		"123-1-ab.json",
	} {
		if err := os.WriteFile(filepath.Join(dir, stray), []byte(`{"partial":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "999-1-ab.job.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name != name {
		t.Errorf("List = %+v, want only %s", es, name)
	}
}

func TestListMissingDir(t *testing.T) {
	es, err := Dir{Path: filepath.Join(t.TempDir(), "none")}.List()
	if err != nil || len(es) != 0 {
		t.Errorf("List of a missing dir = %v, %v; want empty, nil", es, err)
	}
}

func TestPutAtomic(t *testing.T) {
	// Concurrent Puts while listing: every listed entry must be a whole
	// record, never a partial or temporary file.
	d := Dir{Path: t.TempDir()}
	big := strings.Repeat("x", 64<<10)
	const writers, each = 4, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := d.Put("job", map[string]any{"w": w, "i": i, "pad": big}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	done := make(chan struct{})
	var listErr error
	go func() {
		defer close(done)
		for range 30 {
			es, err := d.List()
			if err != nil {
				listErr = err
				return
			}
			for _, e := range es {
				if !json.Valid(e.Data) {
					listErr = errors.New("partial record listed: " + e.Name)
					return
				}
			}
		}
	}()
	wg.Wait()
	<-done
	if listErr != nil {
		t.Fatal(listErr)
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != writers*each {
		t.Errorf("%d records, want %d", len(es), writers*each)
	}
	all, err := os.ReadDir(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*each {
		t.Errorf("%d files in the spool, want %d: temporary files left behind", len(all), writers*each)
	}
}

func TestPutErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		kind    string
		v       any
		wantErr error
	}{
		{name: "file where the directory should be", path: file, kind: "job", wantErr: syscall.ENOTDIR},
		{name: "below a file", path: filepath.Join(file, "spool"), kind: "job"},
		{name: "empty kind", path: tmp, kind: "", wantErr: ErrBadKind},
		{name: "dot in kind", path: tmp, kind: "job.v2", wantErr: ErrBadKind},
		{name: "slash in kind", path: tmp, kind: "../job", wantErr: ErrBadKind},
		{name: "not JSON-encodable", path: tmp, kind: "job", v: make(chan int)},
		{name: "empty path", path: "", kind: "job"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, err := Dir{Path: tt.path}.Put(tt.kind, tt.v)
			if err == nil {
				t.Fatalf("Put = %q, nil; want an error", name)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Put: got %v, want %v", err, tt.wantErr)
			}
		})
	}
	// Nothing was left in the usable directory by the failed Puts.
	if es, err := os.ReadDir(tmp); err != nil || len(es) != 1 {
		t.Errorf("files in %s = %v, %v; want only the fixture file", tmp, es, err)
	}
}

func TestPutReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only directories; TestPutErrors covers a path that cannot be created")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if _, err := (Dir{Path: dir}).Put("job", rec{}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Put: got %v, want fs.ErrPermission", err)
	}
}

func TestRemove(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	a, err := d.Put("job", rec{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Put("job", rec{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(a); err != nil {
		t.Errorf("second Remove: got %v, want nil", err)
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name != b {
		t.Errorf("List after Remove = %+v, want only %s", es, b)
	}
	for _, bad := range []string{"../x.job.json", "bad/" + b, "notes.txt", ""} {
		if err := d.Remove(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("Remove(%q): got %v, want ErrBadName", bad, err)
		}
	}
}

func TestQuarantine(t *testing.T) {
	d := Dir{Path: t.TempDir()}
	good, err := d.Put("job", rec{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := d.Put("job", rec{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Damage it the way a bad disk would.
	if err := os.WriteFile(filepath.Join(d.Path, broken), []byte("{\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Quarantine(broken, "invalid JSON: unexpected NUL"); err != nil {
		t.Fatal(err)
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name != good {
		t.Errorf("List after Quarantine = %+v, want only %s", es, good)
	}
	kept, err := os.ReadFile(filepath.Join(d.Path, BadDir, broken))
	if err != nil || string(kept) != "{\x00\x00" {
		t.Errorf("quarantined record = %q, %v; want the original bytes", kept, err)
	}
	reason, err := os.ReadFile(filepath.Join(d.Path, BadDir, broken+".reason"))
	if err != nil || !strings.Contains(string(reason), "unexpected NUL") {
		t.Errorf("reason file = %q, %v", reason, err)
	}
	if err := d.Quarantine(broken, "again"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("quarantining a missing record: got %v, want fs.ErrNotExist", err)
	}
	if bad, err := os.ReadDir(filepath.Join(d.Path, BadDir)); err != nil || len(bad) != 2 {
		t.Errorf("quarantine holds %v, %v; want the record and its reason", bad, err)
	}
	if err := d.Quarantine("../../etc/passwd", "x"); !errors.Is(err, ErrBadName) {
		t.Errorf("Quarantine of a path: got %v, want ErrBadName", err)
	}
}

func TestListUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files without read permission")
	}
	d := Dir{Path: t.TempDir()}
	name, err := d.Put("job", rec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(d.Path, name), 0); err != nil {
		t.Fatal(err)
	}
	es, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || !errors.Is(es[0].Err, fs.ErrPermission) || es[0].Data != nil {
		t.Errorf("List = %+v, want one entry with a permission error", es)
	}
}

// In a set-group-ID spool (the packaged one, root:gpuprof 2770) a record
// and a quarantined one are group-readable and -writable whatever the
// umask: jobcomp spools as the SlurmUser, serve drains as gpuprof.
func TestSharedSpoolModes(t *testing.T) {
	dir := groupdirtest.Dir(t, "spool")
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	d := Dir{Path: dir}
	name, err := d.Put("epilog", map[string]int{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("record: %v, %v; want mode 0660", fi, err)
	}
	if err := d.Quarantine(name, "test"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, BadDir), filepath.Join(dir, BadDir, name), filepath.Join(dir, BadDir, name+".reason")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o660)
		if fi.IsDir() {
			want = 0o770
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(p), fi.Mode().Perm(), want)
		}
	}
}
