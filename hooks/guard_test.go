package hooks

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestGuardExitsZeroAtDeadline(t *testing.T) {
	exited := make(chan int, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	began := time.Now()
	ctx, stop := Guard(context.Background(), 100*time.Millisecond, log, "7", func(code int) { exited <- code })
	defer stop()
	if dl, ok := ctx.Deadline(); !ok || dl.Sub(began) > 95*time.Millisecond {
		t.Errorf("context deadline %v after start, want 90ms (a tenth before the hard one)", dl.Sub(began))
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		if took := time.Since(began); took < 100*time.Millisecond || took > time.Second {
			t.Errorf("watchdog fired after %s, want 100ms", took)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("watchdog never fired for a stuck hook")
	}
}

func TestGuardStopDisarms(t *testing.T) {
	exited := make(chan int, 1)
	_, stop := Guard(context.Background(), 50*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)), "7", func(code int) { exited <- code })
	stop()
	select {
	case <-exited:
		t.Fatal("watchdog fired after stop")
	case <-time.After(150 * time.Millisecond):
	}
}

// TestEnvJobID: the job id a hook's guard and recovery log before the
// environment is parsed passes slurmext.ValidJobID, like every job id
// gpuprof reads.
func TestEnvJobID(t *testing.T) {
	for in, want := range map[string]string{
		"4711": "4711", "53_1": "53_1", "s5K1KKYAYG5D00": "s5K1KKYAYG5D00",
		"": "", "../1": "", "1;rm": "", "abc$(rm)": "", "1\nlevel=ERROR": "",
	} {
		if got := EnvJobID(in); got != want {
			t.Errorf("EnvJobID(%q) = %q, want %q", in, got, want)
		}
	}
}
