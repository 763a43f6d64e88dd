package gpu

import (
	"math"
	"testing"
	"time"
)

func TestSanitize(t *testing.T) {
	const total = 80 << 30
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	// good is a sample every check lets through; each case spoils it.
	good := DeviceSample{
		UUID:       "GPU-1",
		Time:       at,
		MemoryUsed: Some[uint64](40 << 30),
		Util:       Some[uint32](55),
		MemUtil:    Some[uint32](20),
		PowerMW:    Some[uint32](350_000),
		TempC:      Some[uint32](61),
		Activity: Some(Activity{Interval: time.Second, SM: Some(0.02), Tensor: Some(0.0), DRAM: Some(15.7),
			SMOccupancy: Some(13.7), FP16: Some(100.0)}),
	}
	tests := []struct {
		name        string
		spoil       func(s *DeviceSample)
		memoryTotal uint64
		fix         func(s *DeviceSample) // what Sanitize should do to the spoiled sample
		wantDropped int
	}{
		{name: "plausible", memoryTotal: total},
		{
			name: "boundaries are plausible",
			spoil: func(s *DeviceSample) {
				s.Util, s.MemUtil, s.TempC, s.PowerMW, s.MemoryUsed = Some[uint32](100), Some[uint32](100), Some[uint32](150), Some[uint32](5_000_000), Some[uint64](total)
			},
			memoryTotal: total,
		},
		{
			name:        "utilisation above 100",
			spoil:       func(s *DeviceSample) { s.Util = Some[uint32](101) },
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.Util = Opt[uint32]{} },
			wantDropped: 1,
		},
		{
			name:        "memory utilisation sentinel",
			spoil:       func(s *DeviceSample) { s.MemUtil = Some[uint32](math.MaxUint32) },
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.MemUtil = Opt[uint32]{} },
			wantDropped: 1,
		},
		{
			name:        "memory above the card",
			spoil:       func(s *DeviceSample) { s.MemoryUsed = Some[uint64](total + 1) },
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.MemoryUsed = Opt[uint64]{} },
			wantDropped: 1,
		},
		{
			name:        "memory unchecked when the card size is unknown",
			spoil:       func(s *DeviceSample) { s.MemoryUsed = Some[uint64](math.MaxUint64) },
			memoryTotal: 0,
		},
		{
			name:        "temperature beyond physics",
			spoil:       func(s *DeviceSample) { s.TempC = Some[uint32](151) },
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.TempC = Opt[uint32]{} },
			wantDropped: 1,
		},
		{
			name:        "power beyond any board",
			spoil:       func(s *DeviceSample) { s.PowerMW = Some[uint32](5_000_001) },
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.PowerMW = Opt[uint32]{} },
			wantDropped: 1,
		},
		{
			name: "everything absurd",
			spoil: func(s *DeviceSample) {
				s.Util, s.MemUtil, s.TempC, s.PowerMW = Some[uint32](math.MaxUint32), Some[uint32](200), Some[uint32](1000), Some[uint32](math.MaxUint32)
				s.MemoryUsed = Some[uint64](math.MaxUint64)
			},
			memoryTotal: total,
			fix: func(s *DeviceSample) {
				s.Util, s.MemUtil, s.TempC, s.PowerMW, s.MemoryUsed = Opt[uint32]{}, Opt[uint32]{}, Opt[uint32]{}, Opt[uint32]{}, Opt[uint64]{}
			},
			wantDropped: 5,
		},
		{
			name: "activity outside 0-100 % or NaN",
			spoil: func(s *DeviceSample) {
				s.Activity.Value.SM, s.Activity.Value.DRAM, s.Activity.Value.Tensor = Some(100.5), Some(-0.1), Some(math.NaN())
			},
			memoryTotal: total,
			fix: func(s *DeviceSample) {
				s.Activity.Value.SM, s.Activity.Value.DRAM, s.Activity.Value.Tensor = Opt[float64]{}, Opt[float64]{}, Opt[float64]{}
			},
			wantDropped: 3,
		},
		{
			name: "activity with no value left is no activity",
			spoil: func(s *DeviceSample) {
				s.Activity = Some(Activity{Interval: time.Second, SM: Some(1e9)})
			},
			memoryTotal: total,
			fix:         func(s *DeviceSample) { s.Activity = Opt[Activity]{} },
			wantDropped: 1,
		},
		{
			name: "invalid readings are not counted",
			spoil: func(s *DeviceSample) {
				s.Util = Opt[uint32]{Value: 999}
				s.MemoryUsed = Opt[uint64]{Value: math.MaxUint64}
			},
			memoryTotal: total,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := good
			if tt.spoil != nil {
				tt.spoil(&in)
			}
			want := in
			if tt.fix != nil {
				tt.fix(&want)
			}
			got, dropped := Sanitize(in, tt.memoryTotal)
			if got != want {
				t.Errorf("sample:\n got %+v\nwant %+v", got, want)
			}
			if dropped != tt.wantDropped {
				t.Errorf("dropped = %d, want %d", dropped, tt.wantDropped)
			}
		})
	}
}

func TestSanitizeProcess(t *testing.T) {
	const total = 24 << 30
	good := ProcessSample{PID: 42, UUID: "GPU-1", MemoryUsed: Some[uint64](2 << 30), SMUtil: Some[uint32](30)}
	tests := []struct {
		name        string
		in          ProcessSample
		memoryTotal uint64
		want        ProcessSample
		wantDropped int
	}{
		{name: "plausible", in: good, memoryTotal: total, want: good},
		{
			name:        "boundaries are plausible",
			in:          ProcessSample{PID: 42, MemoryUsed: Some[uint64](total), SMUtil: Some[uint32](100)},
			memoryTotal: total,
			want:        ProcessSample{PID: 42, MemoryUsed: Some[uint64](total), SMUtil: Some[uint32](100)},
		},
		{
			name:        "SM utilisation above 100",
			in:          ProcessSample{PID: 42, MemoryUsed: Some[uint64](1), SMUtil: Some[uint32](101)},
			memoryTotal: total,
			want:        ProcessSample{PID: 42, MemoryUsed: Some[uint64](1)},
			wantDropped: 1,
		},
		{
			name:        "memory sentinel",
			in:          ProcessSample{PID: 42, MemoryUsed: Some[uint64](math.MaxUint64), SMUtil: Some[uint32](math.MaxUint32)},
			memoryTotal: total,
			want:        ProcessSample{PID: 42},
			wantDropped: 2,
		},
		{
			name:        "memory unchecked when the card size is unknown",
			in:          ProcessSample{PID: 42, MemoryUsed: Some[uint64](total * 2)},
			memoryTotal: 0,
			want:        ProcessSample{PID: 42, MemoryUsed: Some[uint64](total * 2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped := SanitizeProcess(tt.in, tt.memoryTotal)
			if got != tt.want {
				t.Errorf("sample:\n got %+v\nwant %+v", got, tt.want)
			}
			if dropped != tt.wantDropped {
				t.Errorf("dropped = %d, want %d", dropped, tt.wantDropped)
			}
		})
	}
}
