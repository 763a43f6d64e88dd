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

// maxTRESItems bounds how many items a TRES string may have. A cluster
// tracks a few dozen TRES at most.
const maxTRESItems = 1024

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
	if strings.Count(s, ",") >= maxTRESItems {
		return nil, fmt.Errorf("TRES %s: more than %d items: %w", quoteShort(s), maxTRESItems, ErrBadTRES)
	}
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "" || value == "":
			return nil, fmt.Errorf("TRES %s: item %s is not name=value: %w", quoteShort(s), quoteShort(item), ErrBadTRES)
		case out[name] != "":
			return nil, fmt.Errorf("TRES %s: %s given twice: %w", quoteShort(s), quoteShort(name), ErrBadTRES)
		}
		out[name] = value
	}
	return out, nil
}

// checkTRES reports what ParseTRES would, except names given twice, without
// building a map: sacct import checks every line.
func checkTRES(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if strings.Count(s, ",") >= maxTRESItems {
		return fmt.Errorf("TRES %s: more than %d items: %w", quoteShort(s), maxTRESItems, ErrBadTRES)
	}
	for item := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(value) == "" {
			return fmt.Errorf("TRES %s: item %s is not name=value: %w", quoteShort(s), quoteShort(item), ErrBadTRES)
		}
	}
	return nil
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
		n, ok := parseDigits(strings.TrimSpace(value), math.MaxInt32)
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
	if validGresType(typ) && n > 0 && len(g.types) < maxTRESItems {
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
