package slurmext

import (
	"errors"
	"testing"
)

func TestGPUUsageFromTRES(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		mem       uint64
		memFound  bool
		memErr    bool
		util      float64
		utilFound bool
		utilErr   bool
	}{
		{name: "published 23.02+ output, bytes", in: "cpu=00:56:24,energy=0,fs/disk=350130624578,gres/gpumem=40777023488,gres/gpuutil=100,mem=10621726720,pages=3465,vmem=10439041024",
			mem: 40777023488, memFound: true, util: 100, utilFound: true},
		{name: "extern step at zero", in: "cpu=00:00:00,gres/gpumem=0,gres/gpuutil=0,mem=262144", memFound: true, utilFound: true},
		{name: "sacct's units", in: "gres/gpumem=2562M,gres/gpuutil=57", mem: 2562 << 20, memFound: true, util: 57, utilFound: true},
		{name: "a fraction of a unit", in: "gres/gpumem=1.50G", mem: 3 << 29, memFound: true},
		{name: "kibibytes", in: "gres/gpumem=63040K", mem: 63040 << 10, memFound: true},
		{name: "no GPU items (22.05 without gpu/nvml)", in: "cpu=00:00:00,energy=0,fs/disk=28489,mem=10724K,pages=0,vmem=219452K"},
		{name: "empty", in: ""},
		{name: "NO_VAL64 is no reading", in: "gres/gpumem=18446744073709551614,gres/gpuutil=18446744073709551615", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "not numbers", in: "gres/gpumem=lots,gres/gpuutil=high", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "negative and signs", in: "gres/gpumem=-1,gres/gpuutil=+5", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "unit without number", in: "gres/gpumem=G,gres/gpuutil=.5", memFound: true, memErr: true, utilFound: true, utilErr: true},
		{name: "a fraction of a percent", in: "gres/gpuutil=57.5", util: 57.5, utilFound: true},
		{name: "past any real GPU count", in: "gres/gpuutil=1000000", utilFound: true, utilErr: true},
		{name: "spaces around items", in: " gres/gpumem = 1M , gres/gpuutil = 3 ", mem: 1 << 20, memFound: true, util: 3, utilFound: true},
		{name: "a similar name is not the item", in: "gres/gpumemx=5,gres/gpuutilization=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, found, err := GPUMemFromUsage(tt.in)
			if mem != tt.mem || found != tt.memFound || (err != nil) != tt.memErr {
				t.Errorf("GPUMemFromUsage = %d, %v, %v; want %d, %v, error %v", mem, found, err, tt.mem, tt.memFound, tt.memErr)
			}
			if err != nil && (!errors.Is(err, ErrBadTRES) || len(err.Error()) > MaxMessage) {
				t.Errorf("error %v does not wrap ErrBadTRES or is unbounded", err)
			}
			util, found, err := GPUUtilFromUsage(tt.in)
			if util != tt.util || found != tt.utilFound || (err != nil) != tt.utilErr {
				t.Errorf("GPUUtilFromUsage = %v, %v, %v; want %v, %v, error %v", util, found, err, tt.util, tt.utilFound, tt.utilErr)
			}
		})
	}
}
