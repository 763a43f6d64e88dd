package slurmext

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrBadTRES means a TRES string such as "cpu=4,gres/gpu=2" is malformed.
var ErrBadTRES = errors.New("malformed TRES string")

// MaxTRESItems bounds how many items a TRES string may have. A cluster
// tracks a few dozen TRES at most.
const MaxTRESItems = 1024

// ParseTRES parses a TRES string as sacct prints ReqTRES/AllocTRES
// ("billing=4,cpu=4,gres/gpu:h100=2,mem=16G,node=1") into name → value.
// Names keep their case; values are kept as text ("16G"). Spaces around
// items are ignored. An empty string gives an empty map.
//
// Errors wrap ErrBadTRES: an item without '=' or with an empty name or
// value, a name given twice, or more than 1024 items.
func ParseTRES(s string) (map[string]string, error) {
	out := make(map[string]string)
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	if strings.Count(s, ",") >= MaxTRESItems {
		return nil, fmt.Errorf("TRES %s: more than %d items: %w", QuoteShort(s), MaxTRESItems, ErrBadTRES)
	}
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "" || value == "":
			return nil, fmt.Errorf("TRES %s: item %s is not name=value: %w", QuoteShort(s), QuoteShort(item), ErrBadTRES)
		case out[name] != "":
			return nil, fmt.Errorf("TRES %s: %s given twice: %w", QuoteShort(s), QuoteShort(name), ErrBadTRES)
		}
		out[name] = value
	}
	return out, nil
}

// CheckTRES reports what ParseTRES would, except names given twice, without
// building a map: sacct import checks every line.
func CheckTRES(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if strings.Count(s, ",") >= MaxTRESItems {
		return fmt.Errorf("TRES %s: more than %d items: %w", QuoteShort(s), MaxTRESItems, ErrBadTRES)
	}
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(value) == "" {
			return fmt.Errorf("TRES %s: item %s is not name=value: %w", QuoteShort(s), QuoteShort(item), ErrBadTRES)
		}
	}
	return nil
}

// Where a job's GPU counts were read from (JobRecord.GPUsFrom).
const (
	GPUsFromReqTRES   = "ReqTRES"
	GPUsFromAllocTRES = "AllocTRES"
)

// RequestedGPUs is the one rule for a job's GPUs and shards in a report
// that has TRES strings (sacct text, sacct --json): they are ReqTRES's
// (GPUsFromTRES) when the report has a ReqTRES, else AllocTRES's, and from
// says which (GPUsFromReqTRES, GPUsFromAllocTRES, or "" when both are
// empty). A request without GPUs is not overridden by the allocation:
// Slurm allocates the GPUs a job asks for, so the two agree for every job
// that started, and a job that never started has an empty AllocTRES. What a
// job was allocated is as good a record of its GPUs as what it asked for,
// and exports that keep only AllocTRES (sacct --format without ReqTRES) are
// common.
func RequestedGPUs(reqTRES, allocTRES string) (gpus int, gpuType string, shards int, from string) {
	switch {
	case strings.TrimSpace(reqTRES) != "":
		from = GPUsFromReqTRES
		gpus, gpuType, shards = GPUsFromTRES(reqTRES)
	case strings.TrimSpace(allocTRES) != "":
		from = GPUsFromAllocTRES
		gpus, gpuType, shards = GPUsFromTRES(allocTRES)
	}
	return gpus, gpuType, shards, from
}

// GPUsFromTRES counts the GPUs and shards in a TRES string; gpuType is the
// GPU type named ("h100"), the types joined by ',' in sorted order when
// several are named, or "" when none is.
//
// Slurm records a typed GRES request twice when AccountingStorageTRES lists
// both the plain and the typed name ("gres/gpu=2,gres/gpu:h100=2"), so the
// untyped count is the total whenever it is present, and the typed counts
// are summed only when it is absent. gres/gpumem and gres/gpuutil (usage,
// not devices), gres/mps (percent of a GPU) and any malformed item are
// ignored: this function never fails. A type with characters outside
// [A-Za-z0-9_.+-] is counted but not named.
func GPUsFromTRES(s string) (gpus int, gpuType string, shards int) {
	var gpu, shard gresCount
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			continue
		}
		n, ok := ParseDigits(strings.TrimSpace(value), math.MaxInt32)
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		switch {
		case name == "gres/gpu":
			gpu.untyped, gpu.hasUntyped = int(n), true
		case strings.HasPrefix(name, "gres/gpu:"):
			gpu.addTyped(strings.TrimPrefix(name, "gres/gpu:"), int(n))
		case name == "gres/shard":
			shard.untyped, shard.hasUntyped = int(n), true
		case strings.HasPrefix(name, "gres/shard:"):
			shard.addTyped(strings.TrimPrefix(name, "gres/shard:"), int(n))
		}
	}
	slices.Sort(gpu.types)
	return gpu.total(), strings.Join(slices.Compact(gpu.types), ","), shard.total()
}

// gresCount accumulates the plain and typed counts of one GRES name.
type gresCount struct {
	untyped    int
	hasUntyped bool
	typed      int
	types      []string
}

func (g *gresCount) addTyped(typ string, n int) {
	if n > math.MaxInt32-g.typed {
		n = math.MaxInt32 - g.typed // saturate: a count this large is nonsense anyway
	}
	g.typed += n
	if validGresType(typ) && n > 0 && len(g.types) < MaxTRESItems {
		g.types = append(g.types, typ)
	}
}

// validGresType accepts what gres.conf allows for Type= in practice
// ("h100", "a100_3g.20gb", "nvidia_h100_80gb_hbm3"), at most maxQuoted
// bytes, so that a type can be stored and shown without escaping.
func validGresType(t string) bool {
	if t == "" || len(t) > maxQuoted {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

func (g *gresCount) total() int {
	if g.hasUntyped {
		return g.untyped
	}
	return g.typed
}

// The GPU readings of Slurm's acct_gather_gpu (gpu/nvml, gpu/rsmi; Slurm ≥
// 23.02) are TRES items of a step's usage strings: TRESUsageInMax holds
// gres/gpumem, the most GPU memory a task held, and TRESUsageInAve holds
// gres/gpuutil, a task's mean GPU utilisation in percent.
const (
	usageGPUMem  = "gres/gpumem"
	usageGPUUtil = "gres/gpuutil"
)

// MaxGPUUtil bounds a believable gres/gpuutil reading. A reading of a task
// on several GPUs may exceed 100, so 100 is not the bound; a hundred GPUs'
// worth is past anything real.
const MaxGPUUtil = 100 * 100

// UsageItem returns the value of the item called name in a TRES usage string
// ("cpu=00:56:24,gres/gpumem=40777023488,gres/gpuutil=100,mem=10621726720"),
// without allocating: it runs once per step line.
func UsageItem(s, name string) (string, bool) {
	for len(s) > 0 {
		item, rest, _ := strings.Cut(s, ",")
		s = rest
		k, v, ok := strings.Cut(item, "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// GPUMemFromUsage reads gres/gpumem from a TRESUsageInMax string: bytes,
// either plain ("40777023488", as sacct --noconvert and the JSON give it) or
// with sacct's binary unit suffix ("2562M", "1.50G"). found is false when
// the string has no gres/gpumem item. A value that is not a size, or one of
// Slurm's markers for "no value" (NO_VAL64, INFINITE64), is an error
// wrapping ErrBadTRES: the reading is then unknown, never a number.
func GPUMemFromUsage(s string) (bytes uint64, found bool, err error) {
	v, found := UsageItem(s, usageGPUMem)
	if !found {
		return 0, false, nil
	}
	b, ok := ParseSize(v)
	if !ok {
		return 0, true, fmt.Errorf("%s=%s is not a memory size: %w", usageGPUMem, QuoteShort(v), ErrBadTRES)
	}
	return b, true, nil
}

// GPUUtilFromUsage reads gres/gpuutil (percent) from a TRESUsageInAve
// string; found and err as for GPUMemFromUsage. Slurm records it as a
// whole number; a fraction is accepted.
func GPUUtilFromUsage(s string) (pct float64, found bool, err error) {
	v, found := UsageItem(s, usageGPUUtil)
	if !found {
		return 0, false, nil
	}
	u, ok := parseDecimal(v)
	if !ok || u > MaxGPUUtil {
		return 0, true, fmt.Errorf("%s=%s is not a utilisation in percent: %w", usageGPUUtil, QuoteShort(v), ErrBadTRES)
	}
	return u, true, nil
}

// MaxUsageBytes is the largest believable memory reading (1 EiB); Slurm's
// NO_VAL64 and INFINITE64 markers lie above it.
const MaxUsageBytes = 1 << 60

// ParseSize reads a size as sacct prints one: a decimal number of
// bytes, or a number (possibly with a fraction) followed by one of Slurm's
// binary unit letters K, M, G, T, P (convert_num_unit: powers of 1024).
func ParseSize(s string) (uint64, bool) {
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M', 'm':
			mult = 1 << 20
		case 'G', 'g':
			mult = 1 << 30
		case 'T', 't':
			mult = 1 << 40
		case 'P', 'p':
			mult = 1 << 50
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	if mult == 1 {
		n, ok := ParseDigits(s, MaxUsageBytes)
		return n, ok
	}
	v, ok := parseDecimal(s)
	if !ok || v*mult > MaxUsageBytes {
		return 0, false
	}
	return uint64(math.Round(v * mult)), true
}

// parseDecimal reads a non-negative decimal with an optional fraction
// ("57", "1.50"): ASCII digits and at most one '.', nothing else.
func parseDecimal(s string) (float64, bool) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || (hasFrac && frac == "") || len(whole) > 18 || len(frac) > 18 {
		return 0, false
	}
	w, ok := ParseDigits(whole, math.MaxUint64)
	if !ok {
		return 0, false
	}
	v := float64(w)
	if hasFrac {
		f, ok := ParseDigits(frac, math.MaxUint64)
		if !ok {
			return 0, false
		}
		v += float64(f) / math.Pow10(len(frac))
	}
	return v, true
}
