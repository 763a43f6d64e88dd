package hooks

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// syncBuffer is a log sink that the hook's goroutines may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestGPUInventoryPanicIsRecovered: the GPU backend panicking on the
// goroutine the hook starts for it (a bug in NVML's bindings) must not kill
// the hook — no recover on the hook's own goroutine could catch it. The
// job is recorded without UUIDs and the stack is logged with the job id.
func TestGPUInventoryPanicIsRecovered(t *testing.T) {
	tests := []struct {
		name string
		hook func(context.Context, Deps) (Outcome, error)
	}{
		{name: "prolog", hook: Prolog},
		{name: "epilog", hook: Epilog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deps(t, "90")
			var logged syncBuffer
			d.Log = slog.New(slog.NewTextHandler(&logged, nil))
			d.OpenInventory = func(context.Context) (gpu.Inventory, error) {
				panic("nvml: injected panic")
			}
			out, err := tt.hook(withDeadline(t, 2*time.Second), d)
			if err != nil || out != ViaSpool {
				t.Fatalf("%s: %v via %q, want spooled for the agent", tt.name, err, out)
			}
			j := readJob(t, d)
			if !j.Partial || len(j.GPUs) != 2 {
				t.Errorf("job: partial %v, %d GPUs; want partial with both GPUs by Slurm index", j.Partial, len(j.GPUs))
			}
			if tt.name == "epilog" && j.Status != profile.StatusFinished {
				t.Errorf("status %s, want finished", j.Status)
			}
			log := logged.String()
			for _, want := range []string{"level=ERROR", "GPU inventory panicked", "job=90", "nvml: injected panic", "panic_test.go"} {
				if !strings.Contains(log, want) {
					t.Errorf("log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}
