package commentqueue

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// TestQueueOneDrainer: a job is queued once however often jobcomp
// adds it; names that are not a job are refused or left alone; one
// drainer works the queue (a second returns at once) and sees a job added
// while it drains, then leaves the queue empty.
func TestQueueOneDrainer(t *testing.T) {
	q := Queue{Dir: filepath.Join(t.TempDir(), "admincomment")}
	for range 3 {
		if err := q.Add("tc", "41"); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range [][2]string{{"../x", "1"}, {"tc", "1/../../etc"}, {"tc", ""}, {"TC", "1"}} {
		if err := q.Add(bad[0], bad[1]); err == nil {
			t.Errorf("Add(%q, %q) accepted", bad[0], bad[1])
		}
	}
	// A link and a directory planted in the queue are not jobs.
	os.Symlink("/etc/passwd", filepath.Join(q.Dir, "tc.99"))
	os.Mkdir(filepath.Join(q.Dir, "tc.98"), 0o700)
	jobs, err := q.List()
	if err != nil || len(jobs) != 1 || jobs[0].JobID != "41" || jobs[0].Cluster != "tc" {
		t.Fatalf("List = %+v, %v; want the one job 41", jobs, err)
	}

	var passes atomic.Int32
	var second struct {
		ran      bool
		draining bool
	}
	ran, err := q.Drain(context.Background(), 10*time.Millisecond, func(ctx context.Context, jobs []Job) []Job {
		n := passes.Add(1)
		if n == 1 {
			// Meanwhile jobcomp queues another job and sees a drainer.
			second.draining = q.Draining()
			second.ran, _ = q.Drain(ctx, time.Millisecond, func(context.Context, []Job) []Job {
				t.Error("a second drainer ran")
				return nil
			})
			if err := q.Add("tc", "42"); err != nil {
				t.Error(err)
			}
			return nil // not closed yet
		}
		return jobs // all done
	})
	if err != nil || !ran {
		t.Fatalf("Drain: ran %v, err %v", ran, err)
	}
	if !second.draining || second.ran {
		t.Errorf("while draining: Draining %v, a second Drain ran %v; want true, false", second.draining, second.ran)
	}
	if jobs, _ := q.List(); len(jobs) != 0 {
		t.Errorf("queue left with %+v", jobs)
	}
	if passes.Load() < 2 {
		t.Errorf("%d passes", passes.Load())
	}
	if q.Draining() {
		t.Error("Draining after the drainer returned")
	}
	if _, err := os.Lstat(filepath.Join(q.Dir, "tc.99")); err != nil {
		t.Errorf("the planted link was touched: %v", err)
	}
}
