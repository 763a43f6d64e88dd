package gpu

import "testing"

func TestArchitectureOf(t *testing.T) {
	tests := []struct {
		model   string
		want    Architecture
		wantGPM bool
	}{
		{"NVIDIA H100 80GB HBM3", ArchHopper, true},
		{"NVIDIA H200", ArchHopper, true},
		{"NVIDIA H20", ArchHopper, true},
		{"NVIDIA GH200 480GB", ArchHopper, true},
		{"NVIDIA B200", ArchBlackwell, true},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", ArchBlackwell, true},
		{"NVIDIA A100-SXM4-80GB", ArchAmpere, false},
		{"NVIDIA A100-SXM4-40GB MIG 3g.20gb", ArchAmpere, false},
		{"NVIDIA A10", ArchAmpere, false},
		{"NVIDIA RTX A6000", ArchAmpere, false},
		{"NVIDIA L4", ArchAda, false},
		{"NVIDIA L40S", ArchAda, false},
		{"NVIDIA RTX 6000 Ada Generation", ArchAda, false},
		{"Tesla V100-SXM2-32GB", ArchVolta, false},
		{"Tesla T4", ArchTuring, false},
		{"Tesla K80", ArchKepler, false},
		{"Some Future GPU", ArchUnknown, false},
		{"", ArchUnknown, false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got := ArchitectureOf(tt.model)
			if got != tt.want {
				t.Errorf("ArchitectureOf(%q) = %v, want %v", tt.model, got, tt.want)
			}
			gpm, known := got.GPMSupported()
			if gpm != tt.wantGPM || known != (tt.want != ArchUnknown) {
				t.Errorf("%v.GPMSupported() = %v, %v; want %v, %v", got, gpm, known, tt.wantGPM, tt.want != ArchUnknown)
			}
		})
	}
}

func TestArchitectureString(t *testing.T) {
	for a, want := range map[Architecture]string{ArchHopper: "Hopper", ArchAmpere: "Ampere", ArchUnknown: "unknown", Architecture(99): "unknown"} {
		if got := a.String(); got != want {
			t.Errorf("Architecture(%d).String() = %q, want %q", int(a), got, want)
		}
	}
}
