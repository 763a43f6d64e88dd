package store

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
	"github.com/gpuprof/gpuprof/profile"
)

// plantedSeries is the series of one GPU of a busy 1 s job of n readings:
// utilisation wandering between phases, memory climbing in steps, and
// GPM's SM and tensor activity as a driver reports them (floats with every
// mantissa bit in use) — what the agent stores today. Without gpm, the
// series of a GPU that has no GPM (before Hopper): no activity readings.
func plantedSeries(n, maxPoints int, seed uint64, gpm bool) profile.Series {
	r := rand.New(rand.NewPCG(seed, 7))
	start := time.Unix(1_780_000_000, 0)
	s := profile.NewSeries(start, time.Second, maxPoints)
	util, mem := 60.0, uint64(20<<30)
	for i := range n {
		t := start.Add(time.Duration(i) * time.Second)
		if i%300 == 0 {
			util = 20 + 75*r.Float64()
		}
		u := max(0, min(100, util+8*r.NormFloat64()))
		if i%120 == 0 {
			mem += uint64(r.IntN(512)) << 20
		}
		s.Add(t, gpu.Some(uint32(u)), gpu.Some(mem))
		sm := u * (0.6 + 0.1*r.Float64())
		if !gpm {
			continue
		}
		s.AddActivity(t, gpu.Some(sm), gpu.Some(sm*0.3*r.Float64()))
	}
	return s
}

func TestChunkRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		pts  []profile.Point
	}{
		{"empty", nil},
		{"one", []profile.Point{{T: 1_780_000_000, N: 1, UtilSum: 37, UtilMax: 37, MemMax: 20 << 30}}},
		{"planted 1 s", plantedSeries(32, 1024, 1, true).Points},
		{"planted coarsened", plantedSeries(20_000, 64, 2, true).Points[:32]},
		{"extremes", []profile.Point{
			{T: math.MaxInt64, N: math.MaxUint32, UtilSum: math.MaxUint32, UtilMax: 255, MemMax: math.MaxUint64,
				SMN: math.MaxUint32, SMSum: math.MaxFloat64, TensorN: 1, TensorSum: math.SmallestNonzeroFloat64},
			{T: math.MinInt64, MemMax: 1, SMSum: math.Copysign(0, -1), TensorSum: -1e300},
			{T: -5, N: 3, UtilSum: 1, UtilMax: 1, SMSum: 0.1, TensorSum: 100},
			{T: 0},
		}},
		{"clock step back", []profile.Point{{T: 100}, {T: 90}, {T: 95}, {T: 95}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encodeChunk(tt.pts)
			if b[0] != chunkBinary {
				t.Fatalf("first byte %#x, want the version byte %#x", b[0], chunkBinary)
			}
			got, err := decodeChunk(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.pts) {
				t.Fatalf("%d points back, want %d", len(got), len(tt.pts))
			}
			for i := range got {
				if !samePoint(got[i], tt.pts[i]) {
					t.Errorf("point %d: got %+v, want %+v", i, got[i], tt.pts[i])
				}
			}
		})
	}
}

// samePoint compares every field, floats by their bits (-0 is not 0).
func samePoint(a, b profile.Point) bool {
	fa, fb := a, b
	fa.SMSum, fa.TensorSum, fb.SMSum, fb.TensorSum = 0, 0, 0, 0
	return fa == fb && math.Float64bits(a.SMSum) == math.Float64bits(b.SMSum) &&
		math.Float64bits(a.TensorSum) == math.Float64bits(b.TensorSum)
}

// A chunk as every gpuprof before the binary form wrote it (JSON text in
// gpu_series.points) reads back as before, beside binary chunks of the
// same series: no migration rewrites the old rows.
func TestOldJSONChunksStillRead(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("1", t0, 100, true) // 100 points: chunks 0–3
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	busy := j.GPUs[0]
	for c := 0; c < 4; c += 2 { // chunks 0 and 2 back to the old form
		old, err := json.Marshal(busy.Series.Points[c*seriesChunk : (c+1)*seriesChunk])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.w.Exec(`UPDATE gpu_series SET points = ? WHERE uuid = ? AND chunk = ?`, string(old), busy.UUID, c); err != nil {
			t.Fatal(err)
		}
	}
	rows := chunkRows(t, db, j.Key)[busy.UUID]
	if rows[0][0] != '[' || rows[1][0] != chunkBinary {
		t.Fatalf("chunk 0 starts %q, chunk 1 %q: want one old JSON and one binary", rows[0][:1], rows[1][:1])
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if want := Normalize(j); !reflect.DeepEqual(got, want) {
		t.Errorf("mixed chunks read back differently: %d points, want %d", len(got.GPUs[0].Series.Points), len(want.GPUs[0].Series.Points))
	}
}

// A damaged chunk is an error, never points made up.
func TestChunkRefusesDamage(t *testing.T) {
	good := encodeChunk(plantedSeries(32, 1024, 3, true).Points)
	for _, tt := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"cut short", good[:len(good)-1]},
		{"trailing byte", append(append([]byte(nil), good...), 0)},
		{"count beyond bytes", []byte{chunkBinary, 200, 0}},
		{"unknown field", []byte{chunkBinary, 1, 0x80, 0x04}},
		{"not JSON", []byte("[{")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if pts, err := decodeChunk(tt.b); err == nil {
				t.Errorf("decoded %d points, want an error", len(pts))
			}
		})
	}
}

// FuzzChunk: any bytes decode without panic; whatever decodes encodes and
// decodes to the same points; and points made from any bytes round-trip.
func FuzzChunk(f *testing.F) {
	f.Add(encodeChunk(plantedSeries(32, 1024, 4, true).Points))
	f.Add([]byte(`[{"t":1,"n":1,"u_sum":5,"u_max":5,"mem_max":7,"sm_n":1,"sm_sum":0.5}]`))
	f.Add([]byte{chunkBinary, 1, 0x08, 3, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		pts, err := decodeChunk(b)
		if err == nil {
			again, err := decodeChunk(encodeChunk(pts))
			if err != nil || len(again) != len(pts) {
				t.Fatalf("re-encoded chunk: %v, %d points of %d", err, len(again), len(pts))
			}
			for i := range pts {
				if !samePoint(again[i], pts[i]) {
					t.Fatalf("point %d: %+v, then %+v", i, pts[i], again[i])
				}
			}
		}
		made := pointsFrom(b)
		back, err := decodeChunk(encodeChunk(made))
		if err != nil || len(back) != len(made) {
			t.Fatalf("made points: %v, %d of %d", err, len(back), len(made))
		}
		for i := range made {
			if !samePoint(back[i], made[i]) {
				t.Fatalf("made point %d: %+v, back %+v", i, made[i], back[i])
			}
		}
	})
}

// pointsFrom reads b as raw points, 52 bytes each.
func pointsFrom(b []byte) []profile.Point {
	var out []profile.Point
	le := func(n int) uint64 {
		var v uint64
		for i := range n {
			v |= uint64(b[i]) << (8 * i)
		}
		b = b[n:]
		return v
	}
	for len(b) >= 50 {
		out = append(out, profile.Point{T: int64(le(8)), N: uint32(le(4)), UtilSum: uint32(le(4)), UtilMax: uint8(le(1)),
			MemMax: le(8), SMN: uint32(le(4)), SMSum: math.Float64frombits(le(8)), TensorN: uint32(le(1)),
			TensorSum: math.Float64frombits(le(8))})
	}
	return out
}

// BenchmarkChunkBytes reports the bytes a point takes in gpu_series, as
// JSON (before) and in the binary form (after), over the same planted
// series: a 1 s series of 1,024 points, and a day-long job's coarsened
// one, each without and with GPM's activity.
func BenchmarkChunkBytes(b *testing.B) {
	for _, c := range []struct {
		name string
		s    profile.Series
	}{
		{"1s", plantedSeries(1024, 1024, 5, false)},
		{"day", plantedSeries(86_400, 1024, 6, false)},
		{"1s-gpm", plantedSeries(1024, 1024, 5, true)},
		{"day-gpm", plantedSeries(86_400, 1024, 6, true)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var js, bin int
			for b.Loop() {
				js, bin = 0, 0
				pts := c.s.Points
				for i := 0; i < len(pts); i += seriesChunk {
					part := pts[i:min(i+seriesChunk, len(pts))]
					j, err := json.Marshal(part)
					if err != nil {
						b.Fatal(err)
					}
					js += len(j)
					bin += len(encodeChunk(part))
				}
			}
			n := float64(len(c.s.Points))
			b.ReportMetric(float64(js)/n, "json-B/point")
			b.ReportMetric(float64(bin)/n, "binary-B/point")
		})
	}
}
