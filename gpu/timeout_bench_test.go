package gpu

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWithTimeout is one driver call through WithTimeout beside the
// same call made directly, on a sampler that answers at once: the
// wrapper's own cost, which the agent pays on every call (two per GPU and
// tick).
func BenchmarkWithTimeout(b *testing.B) {
	g := newGatedSampler()
	g.open()
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		s    Sampler
	}{
		{"direct", g},
		{"wrapped", WithTimeout(g, time.Second)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.s.SampleDevice(ctx, "GPU-1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
