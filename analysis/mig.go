package analysis

import "strings"

// MIGProfile is one GPU instance profile of a MIG-capable card, as listed
// in NVIDIA's MIG user guide ("Supported MIG Profiles").
type MIGProfile struct {
	Name string // e.g. "1g.10gb"
	// Slices are the compute slices (of 7) the instance takes.
	Slices int
	// MemoryGB is the instance's memory in the profile's own unit (GB as
	// NVIDIA names it).
	MemoryGB float64
	// MaxInstances is how many instances of this profile alone fit on one
	// GPU.
	MaxInstances int
}

// MIGModel is the MIG profile table of one card.
type MIGModel struct {
	Match    string // lower-case substring of the NVML model name
	MemoryGB float64
	Profiles []MIGProfile // smallest first
}

// migTables are the profiles of the MIG-capable cards this package knows
// (A100 40GB, A100 80GB, H100 80GB, H200 141GB). Only homogeneous layouts
// (one profile, up to its MaxInstances) are recommended: every one of them
// is a valid placement on the card, where mixed layouts depend on slice
// positions.
var migTables = [...]MIGModel{
	{Match: "a100-sxm4-40gb", MemoryGB: 40, Profiles: a100x40},
	{Match: "a100-pcie-40gb", MemoryGB: 40, Profiles: a100x40},
	{Match: "a100 40gb", MemoryGB: 40, Profiles: a100x40},
	{Match: "a100", MemoryGB: 80, Profiles: []MIGProfile{
		{"1g.10gb", 1, 10, 7}, {"1g.20gb", 1, 20, 4}, {"2g.20gb", 2, 20, 3},
		{"3g.40gb", 3, 40, 2}, {"4g.40gb", 4, 40, 1}, {"7g.80gb", 7, 80, 1},
	}},
	{Match: "h100", MemoryGB: 80, Profiles: []MIGProfile{
		{"1g.10gb", 1, 10, 7}, {"1g.20gb", 1, 20, 4}, {"2g.20gb", 2, 20, 3},
		{"3g.40gb", 3, 40, 2}, {"4g.40gb", 4, 40, 1}, {"7g.80gb", 7, 80, 1},
	}},
	{Match: "h200", MemoryGB: 141, Profiles: []MIGProfile{
		{"1g.18gb", 1, 18, 7}, {"1g.35gb", 1, 35, 4}, {"2g.35gb", 2, 35, 3},
		{"3g.71gb", 3, 71, 2}, {"4g.71gb", 4, 71, 1}, {"7g.141gb", 7, 141, 1},
	}},
}

var a100x40 = []MIGProfile{
	{"1g.5gb", 1, 5, 7}, {"1g.10gb", 1, 10, 4}, {"2g.10gb", 2, 10, 3},
	{"3g.20gb", 3, 20, 2}, {"4g.20gb", 4, 20, 1}, {"7g.40gb", 7, 40, 1},
}

// MIGTable returns the MIG profile table of a card by its model name and
// memory size in bytes (which tells the A100 40GB from the 80GB when the
// name does not), and false for cards without MIG.
func MIGTable(model string, memory uint64) (MIGModel, bool) {
	m := strings.ToLower(model)
	for _, t := range migTables {
		if !strings.Contains(m, t.Match) {
			continue
		}
		if t.Match == "a100" && memory > 0 && memory < 60<<30 {
			return MIGModel{Match: "a100", MemoryGB: 40, Profiles: a100x40}, true
		}
		return t, true
	}
	return MIGModel{}, false
}

// MIGLayout is a homogeneous MIG layout: Count instances of Profile per GPU.
type MIGLayout struct {
	Profile MIGProfile
	Count   int
}

// PackMIG chooses the layout that fits the most jobs needing needBytes
// each: the profile with the most instances per GPU among those whose
// memory holds the need (ties: the smaller memory). needBytes is compared with the
// profile's memory in GB as NVIDIA names it, counted as GiB less 5 % so
// that a 10gb instance (9.75 GiB usable on an H100) is not over-promised.
// It returns false when no profile but the whole card fits, where MIG
// gains nothing.
func PackMIG(t MIGModel, needBytes uint64) (MIGLayout, bool) {
	var best MIGLayout
	found := false
	for _, p := range t.Profiles {
		usable := p.MemoryGB * 0.95 * (1 << 30)
		if float64(needBytes) > usable || p.MaxInstances < 2 {
			continue
		}
		if !found || p.MaxInstances > best.Count ||
			(p.MaxInstances == best.Count && p.MemoryGB < best.Profile.MemoryGB) {
			best, found = MIGLayout{Profile: p, Count: p.MaxInstances}, true
		}
	}
	return best, found
}
