package sim

import (
	"errors"
	"slices"
	"testing"
)

// TestLoadFlags: burn's comma lists become one value per GPU; the first
// value that cannot be read is named by its flag, and an empty activity
// list leaves the node's default (nil).
func TestLoadFlags(t *testing.T) {
	tests := []struct {
		name    string
		f       LoadFlags
		wantErr string
		want    BurnOptions
	}{
		{name: "defaults", f: LoadFlags{Mem: "0", Util: "0"}, want: BurnOptions{Mem: []uint64{0}, Util: []uint32{0}}},
		{name: "lists", f: LoadFlags{Mem: "2GiB, 1GiB", Util: "80,20", SM: "0.02", Tensor: "0", DRAM: "50,100"},
			want: BurnOptions{Mem: []uint64{2 << 30, 1 << 30}, Util: []uint32{80, 20}, SM: []float64{0.02}, Tensor: []float64{0}, DRAM: []float64{50, 100}}},
		{name: "bad mem", f: LoadFlags{Mem: "6XB", Util: "0"}, wantErr: "--mem: "},
		{name: "util over 100", f: LoadFlags{Mem: "0", Util: "101"}, wantErr: `--util: bad utilisation "101" (0..100)`},
		{name: "util fraction", f: LoadFlags{Mem: "0", Util: "1.5"}, wantErr: `--util: bad utilisation "1.5" (0..100)`},
		{name: "sm over 100", f: LoadFlags{Mem: "0", Util: "0", SM: "100.5"}, wantErr: `--sm: bad percentage "100.5" (0..100)`},
		{name: "tensor negative", f: LoadFlags{Mem: "0", Util: "0", Tensor: "-1"}, wantErr: `--tensor: bad percentage "-1" (0..100)`},
		{name: "dram not a number", f: LoadFlags{Mem: "0", Util: "0", DRAM: "x"}, wantErr: `--dram: bad percentage "x" (0..100)`},
		{name: "dram NaN", f: LoadFlags{Mem: "0", Util: "0", DRAM: "NaN"}, wantErr: `--dram: bad percentage "NaN" (0..100)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got BurnOptions
			err := tt.f.Apply(&got)
			if tt.wantErr != "" {
				var fe *FlagError
				if err == nil || !errors.As(err, &fe) || len(err.Error()) < len(tt.wantErr) || err.Error()[:len(tt.wantErr)] != tt.wantErr {
					t.Fatalf("Apply: %v, want a *FlagError starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !slices.Equal(got.Mem, tt.want.Mem) || !slices.Equal(got.Util, tt.want.Util) ||
				!slices.Equal(got.SM, tt.want.SM) || !slices.Equal(got.Tensor, tt.want.Tensor) || !slices.Equal(got.DRAM, tt.want.DRAM) {
				t.Errorf("Apply = %+v, want %+v", got, tt.want)
			}
		})
	}
}
