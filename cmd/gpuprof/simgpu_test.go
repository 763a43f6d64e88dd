package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu/sim"
)

// TestBurnActivityFlags: `simgpu burn --util 16 --sm 0.02 --tensor 0`
// registers a program busy by the duty cycle and idle by its SMs, as the
// node then reports it; a percentage outside 0..100 is a usage error.
func TestBurnActivityFlags(t *testing.T) {
	dir := t.TempDir()
	simDir := filepath.Join(dir, "sim")
	cfg := filepath.Join(dir, "gpuprof.toml")
	if err := os.WriteFile(cfg, []byte("[sim]\ndir = \""+simDir+"\"\ngpus = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, args ...string) (string, error) {
		root := newRootCommand()
		var out strings.Builder
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"--config", cfg, "simgpu"}, args...))
		err := root.ExecuteContext(ctx)
		return out.String(), err
	}
	if out, err := run(context.Background(), "init"); err != nil {
		t.Fatalf("simgpu init: %v\n%s", err, out)
	}
	for _, bad := range [][]string{{"--sm", "100.5"}, {"--tensor", "-1"}, {"--dram", "x"}} {
		_, err := run(context.Background(), append([]string{"burn", "--for", "1s"}, bad...)...)
		if exitCode(err) != 2 {
			t.Errorf("burn %v: exit %d (%v), want 2 (usage)", bad, exitCode(err), err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Setenv("CUDA_VISIBLE_DEVICES", "1")
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, "burn", "--util", "16", "--sm", "0.02", "--tensor", "0", "--mem", "1GiB")
		done <- err
	}()
	n, err := sim.Open(simDir)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	devs, _ := n.Devices(ctx)
	uuid := devs[1].UUID
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := n.SampleDevice(ctx, uuid)
		if err != nil {
			t.Fatal(err)
		}
		a := ds.Activity
		if ds.Util.Value == 16 && a.Valid {
			if a.Value.SM.Value != 0.02 || a.Value.Tensor.Value != 0 || a.Value.DRAM.Value != 8 {
				t.Errorf("activity %+v, want SM 0.02, tensor 0, DRAM 8 (half the duty cycle by default)", a.Value)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the burn never showed: %+v", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("burn: %v", err)
	}
}
