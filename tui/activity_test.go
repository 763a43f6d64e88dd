package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// TestGPULinesActivityAndXIDs: a GPU's lines in the detail carry its GPM
// activity (unknown where none came, never 0), whose activity it was, and
// each XID code with whose fault it is.
func TestGPULinesActivityAndXIDs(t *testing.T) {
	start := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	g := profile.NewGPU(gpu.Device{UUID: "GPU-0000000a-1111", Name: "NVIDIA H100 80GB HBM3", MemoryTotal: 80 << 30}, 0, start, time.Second, 64)
	for i := range 20 {
		g.Observe(profile.Reading{Time: start.Add(time.Duration(i) * time.Second), Util: gpu.Some[uint32](16), Shared: true,
			Activity: gpu.Some(gpu.Activity{Interval: time.Second, SM: gpu.Some(0.02), Tensor: gpu.Some(0.0), DRAM: gpu.Some(0.01)})}, time.Second)
	}
	g.AddXID(79, start)
	g.AddXID(13, start)
	m := Model{width: 100}
	gs := analysis.SheetGPU("gpu01", &g)
	text := strings.Join(m.gpuLines("gpu01", &gs), "\n")
	for _, want := range []string{"sm ", "mean 0.02 %, p95 0.02 %", "tc ", "DRAM 0.01 %", "of the whole shared GPU", "XID errors 2 (79 hardware, 13 application)"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
	none := profile.NewGPU(gpu.Device{UUID: "GPU-0000000b-1111", Name: "NVIDIA A100-SXM4-80GB", MemoryTotal: 80 << 30}, 1, start, time.Second, 64)
	none.Observe(profile.Reading{Time: start, Util: gpu.Some[uint32](50)}, time.Second)
	gs = analysis.SheetGPU("gpu01", &none)
	text = strings.Join(m.gpuLines("gpu01", &gs), "\n")
	if !strings.Contains(text, "sm   - no GPM reading") || strings.Contains(text, "mean 0%") {
		t.Errorf("a GPU without GPM readings:\n%s\nwant its activity unknown", text)
	}
}
