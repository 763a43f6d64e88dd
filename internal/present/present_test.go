package present

import (
	"testing"

	"github.com/gpuprof/gpuprof/gpu"
)

func TestActivity(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {-1, "0"}, {0.004, "0"}, {0.02, "0.02"}, {0.015, "0.01"}, {0.05, "0.05"}, {0.094, "0.09"},
		{0.1, "0.1"}, {0.25, "0.2"}, {1, "1"}, {4.55, "4.5"}, {9.9, "9.9"}, {9.96, "10"}, {13.7, "14"},
		{92.4, "92"}, {100, "100"},
	}
	for _, tt := range tests {
		if got := Activity(tt.in); got != tt.want {
			t.Errorf("Activity(%g) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestXID(t *testing.T) {
	tests := []struct {
		code  uint64
		count int
		want  string
	}{
		{79, 1, "79 GPU has fallen off the bus (hardware)"},
		{31, 3, "31 GPU memory page fault: an illegal address (application) ×3"},
		{999, 2, "999 (unclassified) ×2"},
	}
	for _, tt := range tests {
		if got := XID(tt.code, tt.count); got != tt.want {
			t.Errorf("XID(%d, %d) = %q, want %q", tt.code, tt.count, got, tt.want)
		}
	}
	for c, want := range map[gpu.XIDClass]string{gpu.XIDApplication: "application", gpu.XIDHardware: "hardware"} {
		if got := XIDClass(c); got != want {
			t.Errorf("XIDClass(%q) = %q, want %q", c, got, want)
		}
	}
}

func TestGPUs(t *testing.T) {
	tests := []struct {
		held, used int
		known      bool
		want       string
	}{
		{2, 1, true, "2/1"}, {1, 1, true, "1/1"}, {2, 0, false, "2/-"}, {0, 0, false, "0/-"}, {4, 0, true, "4/0"},
	}
	for _, tt := range tests {
		if got := GPUs(tt.held, tt.used, tt.known); got != tt.want {
			t.Errorf("GPUs(%d, %d, %v) = %q, want %q", tt.held, tt.used, tt.known, got, tt.want)
		}
	}
}

func TestUtil(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {-1, "0"}, {0.4, "0"}, {47.5, "48"}, {48, "48"}, {77.2, "77"}, {100, "100"},
	}
	for _, tt := range tests {
		if got := Util(tt.in); got != tt.want {
			t.Errorf("Util(%g) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestGPUsPerRun(t *testing.T) {
	one, half := 1.0, 0.5
	tests := []struct {
		held       float64
		used       *float64
		usage, all int
		want       string
	}{
		{2, &one, 3, 3, "2.0/1.0"}, {1, &half, 2, 4, "1.0/0.5*"}, {2, nil, 0, 5, "2.0/–"},
	}
	for _, tt := range tests {
		if got := GPUsPerRun(tt.held, tt.used, tt.usage, tt.all); got != tt.want {
			t.Errorf("GPUsPerRun(%g, %v, %d, %d) = %q, want %q", tt.held, tt.used, tt.usage, tt.all, got, tt.want)
		}
	}
}

func TestCO2e(t *testing.T) {
	for _, tt := range []struct {
		kg   float64
		want string
	}{
		{0, "0 g CO2e"}, {0.0449, "45 g CO2e"}, {1, "1.0 kg CO2e"}, {123.44, "123.4 kg CO2e"}, {1234, "1.2 t CO2e"},
	} {
		if got := CO2e(tt.kg); got != tt.want {
			t.Errorf("CO2e(%v) = %q, want %q", tt.kg, got, tt.want)
		}
	}
}

func TestTemperature(t *testing.T) {
	testForm(t, "Temperature", Temperature, []formCase[uint32]{
		{"cool", 0, "0 °C"}, {"hot", 71, "71 °C"}, {"hundreds", 104, "104 °C"},
	})
}
