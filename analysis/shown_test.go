package analysis

import "testing"

func TestShown(t *testing.T) {
	busy := func(u float64) GPU {
		return GPU{UtilMean: u, UtilMeanValid: true, VRAMPeak: 1 << 30, VRAMPeakValid: true}
	}
	tests := []struct {
		name string
		job  Job
		want Shown
	}{
		{"shard job: its GPU counts one, its shards are said", Job{ReqShards: 1, GPUs: []GPU{{UtilMean: 14, UtilMeanValid: true, Shared: true}}},
			Shown{GPUs: 1, Shards: 1, Used: 1, UsedKnown: true, Util: 14, UtilKnown: true}},
		{"shard job without a profile", Job{ReqShards: 1}, Shown{GPUs: 1, Shards: 1}},
		{"2 GPUs: the mean over both, not the busiest", Job{ReqGPUs: 2, GPUs: []GPU{busy(77), busy(19)}},
			Shown{GPUs: 2, Used: 2, UsedKnown: true, Util: 48, UtilKnown: true}},
		{"2 GPUs, one quiet", Job{ReqGPUs: 2, GPUs: []GPU{busy(60), busy(0)}},
			Shown{GPUs: 2, Used: 1, UsedKnown: true, Util: 30, UtilKnown: true}},
		{"idle allocation", Job{ReqGPUs: 2, GPUs: []GPU{busy(60), {IdleAllocation: true, UtilMean: 0, UtilMeanValid: true}}},
			Shown{GPUs: 2, Used: 1, UsedKnown: true, Util: 30, UtilKnown: true}},
		{"more GPUs recorded than requested", Job{ReqGPUs: 1, GPUs: []GPU{busy(50), busy(50)}},
			Shown{GPUs: 2, Used: 2, UsedKnown: true, Util: 50, UtilKnown: true}},
		{"memory readings only: used unknown", Job{ReqGPUs: 1, GPUs: []GPU{{VRAMPeak: 1 << 30, VRAMPeakValid: true}}}, Shown{GPUs: 1}},
		{"sacct history", Job{ReqGPUs: 4}, Shown{GPUs: 4}},
		{"CPU job", Job{}, Shown{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Measure(tt.job, DefaultConfig())
			if got := m.Shown(); got != tt.want {
				t.Errorf("Shown() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
