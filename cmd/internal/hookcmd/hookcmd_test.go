package hookcmd

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/config"
)

// TestOpenInventory: for the "nvml" backend a hook names GPUs from the
// driver's /proc files under proc.procfs (gpuprof-hook has no NVML), and a
// node without the driver is an error the hook logs, not a crash.
func TestOpenInventory(t *testing.T) {
	procfs := t.TempDir()
	dir := filepath.Join(procfs, "driver", "nvidia", "gpus", "0000:3b:00.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	info := "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-1f0e8a52-7d3c-4b1e-9a2f-0c5d6e7f8a91\n" +
		"Bus Location: \t 0000:3b:00.0\nDevice Minor: \t 1\nGPU Excluded:\t No\n"
	if err := os.WriteFile(filepath.Join(dir, "information"), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Agent.GPU = "nvml"
	cfg.Proc.Procfs = procfs
	log := slog.New(slog.DiscardHandler)
	inv, err := OpenInventory(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("OpenInventory: %v", err)
	}
	devs, err := inv.Devices(context.Background())
	if err != nil || len(devs) != 1 || devs[0].UUID != "GPU-1f0e8a52-7d3c-4b1e-9a2f-0c5d6e7f8a91" || devs[0].Minor != 1 {
		t.Errorf("Devices = %+v, %v; want the one GPU of the /proc tree", devs, err)
	}
	cfg.Proc.Procfs = t.TempDir()
	if _, err := OpenInventory(context.Background(), cfg, log); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenInventory without the driver: %v, want fs.ErrNotExist", err)
	}
}
