package gpu

import "strings"

// Architecture is a GPU generation.
type Architecture int

// Architectures gpuprof knows, in order of appearance. ArchUnknown is a GPU
// whose generation nobody told (a driver newer than this table, a model
// name it does not list).
const (
	ArchUnknown Architecture = iota
	ArchKepler
	ArchMaxwell
	ArchPascal
	ArchVolta
	ArchTuring
	ArchAmpere
	ArchAda
	ArchHopper
	ArchBlackwell
	ArchRubin
)

// architectures is the policy table of what each generation offers, and
// the model names that belong to it (for a backend that knows a GPU by its
// name alone: the simulated node). A model's tokens are its name's words,
// split at spaces and hyphens ("NVIDIA A100-SXM4-80GB" has "A100"), matched
// whole and case-insensitively, so that "A10" does not match "A100" nor
// "H20" "H200".
//
// GPM (GPU Performance Monitoring: SM, tensor and DRAM activity through
// NVML without DCGM) exists from Hopper on; NVML's
// nvmlGpmQueryDeviceSupport has the last word on a given GPU (a vGPU may
// lack it).
var architectures = []struct {
	arch   Architecture
	name   string
	gpm    bool
	models []string
}{
	{ArchKepler, "Kepler", false, []string{"K80", "K40", "K40m", "K20", "K20X"}},
	{ArchMaxwell, "Maxwell", false, []string{"M60", "M40", "M10", "M4"}},
	{ArchPascal, "Pascal", false, []string{"P100", "P40", "P4", "P6", "GP100"}},
	{ArchVolta, "Volta", false, []string{"V100", "V100S", "GV100"}},
	{ArchTuring, "Turing", false, []string{"T4"}},
	{ArchAmpere, "Ampere", false, []string{"A100", "A800", "A30", "A40", "A10", "A10G", "A16", "A2", "A6000", "A5000", "A4000"}},
	{ArchAda, "Ada", false, []string{"L40", "L40S", "L4", "L20", "Ada"}},
	{ArchHopper, "Hopper", true, []string{"H100", "H200", "H800", "H20", "GH200"}},
	{ArchBlackwell, "Blackwell", true, []string{"B100", "B200", "B300", "GB200", "GB300", "Blackwell"}},
	{ArchRubin, "Rubin", true, []string{"Rubin"}},
}

// String is the architecture's name, "unknown" for ArchUnknown.
func (a Architecture) String() string {
	for _, e := range architectures {
		if e.arch == a {
			return e.name
		}
	}
	return "unknown"
}

// GPMSupported reports whether the generation has GPM, and whether the
// table knows: an unknown generation is not known to lack it (a backend
// then asks the driver).
func (a Architecture) GPMSupported() (supported, known bool) {
	for _, e := range architectures {
		if e.arch == a {
			return e.gpm, true
		}
	}
	return false, false
}

// ArchitectureOf names the generation of a GPU model from its name, e.g.
// "NVIDIA H100 80GB HBM3" → ArchHopper; ArchUnknown when no token of the
// name is in the table.
func ArchitectureOf(model string) Architecture {
	tokens := strings.FieldsFunc(model, func(r rune) bool { return r == ' ' || r == '-' })
	for _, e := range architectures {
		for _, m := range e.models {
			for _, t := range tokens {
				if strings.EqualFold(t, m) {
					return e.arch
				}
			}
		}
	}
	return ArchUnknown
}
