package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func TestBackupDuringWrites(t *testing.T) {
	// A backup taken while another writer keeps adding jobs opens, checks,
	// and holds exactly the jobs of one moment: each equal to the source's.
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, Options{})
	for i := range 50 {
		if err := db.PutJob(ctx, richJob(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Minute), 300, true)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	written := 50
	wg.Go(func() {
		for i := 50; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.PutJob(ctx, richJob(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Minute), 300, i%2 == 0)); err != nil {
				t.Error(err)
				return
			}
			written = i + 1
		}
	})
	time.Sleep(50 * time.Millisecond)
	dst := filepath.Join(dir, "backup.db")
	info, err := db.Backup(ctx, dst)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if info.Jobs < 50 || info.Jobs > written || info.Version != SchemaVersion {
		t.Errorf("backup holds %d jobs (schema %d); want 50..%d of schema %d", info.Jobs, info.Version, written, SchemaVersion)
	}
	if info.Jobs == written {
		t.Logf("the writer wrote nothing after the snapshot (%d jobs)", written)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if src, _ := os.Stat(db.Path()); fi.Mode().Perm() != src.Mode().Perm()&0o640 {
		t.Errorf("backup mode %v, want the source's %v at most 0640", fi.Mode().Perm(), src.Mode().Perm())
	}
	b, err := Open(ctx, dst, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open backup: %v", err)
	}
	defer b.Close()
	got, err := b.ListJobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != info.Jobs {
		t.Errorf("backup lists %d jobs, CheckFile counted %d", len(got), info.Jobs)
	}
	for _, j := range got {
		bj, err := b.GetJob(ctx, j.Key)
		if err != nil {
			t.Fatal(err)
		}
		sj, err := db.GetJob(ctx, j.Key)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(bj, sj) {
			t.Errorf("job %s differs between backup and source", j.JobID)
		}
	}
	// Never over an existing file.
	if _, err := db.Backup(ctx, dst); !errors.Is(err, ErrBackupExists) {
		t.Errorf("second Backup to the same name: %v, want ErrBackupExists", err)
	}
	// Nor through a planted link.
	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Backup(ctx, link); !errors.Is(err, ErrBackupExists) {
		t.Errorf("Backup to a link: %v, want ErrBackupExists", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was written: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*partial*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestCheckFileRefusesDamage(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	for i := range 20 {
		if err := db.PutJob(ctx, richJob(fmt.Sprint(i), t0, 300, true)); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "b.db")
	if _, err := db.Backup(ctx, dst); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	// Scribble over a page in the middle.
	for i := len(data) / 2; i < len(data)/2+4096 && i < len(data); i++ {
		data[i] = 0x5a
	}
	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckFile(ctx, bad); err == nil {
		t.Error("CheckFile of a damaged copy: nil error")
	}
	foreign := filepath.Join(t.TempDir(), "f.db")
	raw := rawDB(t, foreign)
	if _, err := raw.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckFile(ctx, foreign); !errors.Is(err, ErrForeign) {
		t.Errorf("CheckFile of another program's database: %v, want ErrForeign", err)
	}
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "gpuprof.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := db.PutJob(ctx, richJob(fmt.Sprint(i), t0, 300, true)); err != nil {
			t.Fatal(err)
		}
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	want, err := db.GetJob(ctx, profile.Key{Cluster: "lab", JobID: "3", Node: "gpu01"})
	if err != nil {
		t.Fatal(err)
	}
	// Later writes, lost by the restore (kept aside).
	for i := 10; i < 15; i++ {
		if err := db.PutJob(ctx, richJob(fmt.Sprint(i), t0, 300, true)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	// Another process holding the database: refused, nothing changed.
	holder := exec.Command("sh", "-c", `exec 3<"$1"; echo ready; exec sleep 30`, "sh", path)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, err := Restore(ctx, "/proc", backup, path); !errors.Is(err, ErrInUse) {
		t.Errorf("Restore under another process: %v, want ErrInUse", err)
	}
	holder.Process.Kill()
	holder.Wait()
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused restore changed the database")
	}

	kept, err := Restore(ctx, "/proc", backup, path)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("open restored: %v", err)
	}
	defer db.Close()
	js, err := db.ListJobs(ctx, Filter{})
	if err != nil || len(js) != 10 {
		t.Errorf("restored database lists %d jobs, %v; want the backup's 10", len(js), err)
	}
	got, err := db.GetJob(ctx, want.Key)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("restored job 3 = %+v, %v; want the backed-up one", got, err)
	}
	// The restored database takes writes.
	if err := db.PutJob(ctx, richJob("99", t0, 10, true)); err != nil {
		t.Errorf("write after restore: %v", err)
	}
	// The replaced one is kept, whole with its WAL.
	if _, err := CheckFile(ctx, kept); err != nil {
		t.Errorf("kept database %s: %v", kept, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 && fi.Mode().Perm() != 0o660 {
		t.Errorf("restored mode %v, want the replaced file's", fi.Mode().Perm())
	}
}
