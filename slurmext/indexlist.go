package slurmext

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxIndexList bounds how many indices an index list may name, counting every
// element of every range before duplicates are removed. GPU lists are short;
// the bound keeps "0-2000000000" from allocating gigabytes.
const MaxIndexList = 4096

// ParseIndexList parses a Slurm index list such as SLURM_JOB_GPUS: comma
// separated decimal indices and inclusive ranges ("0,2-3" → [0 2 3]). Spaces
// around items and around the dash are ignored. The result is sorted with
// duplicates removed. An empty or all-space string gives nil, nil.
//
// Errors wrap ErrBadIndexList (empty item, non-digit, negative number, value
// above MaxInt32, reverse range "3-1") or ErrTooLarge (more than MaxIndexList
// elements).
func ParseIndexList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	total := 0
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("index list %s: empty item: %w", QuoteShort(s), ErrBadIndexList)
		}
		loStr, hiStr, isRange := strings.Cut(item, "-")
		lo, ok := ParseDigits(strings.TrimSpace(loStr), math.MaxInt32)
		if !ok {
			return nil, fmt.Errorf("index list %s: %s is not a non-negative number: %w",
				QuoteShort(s), QuoteShort(item), ErrBadIndexList)
		}
		hi := lo
		if isRange {
			hi, ok = ParseDigits(strings.TrimSpace(hiStr), math.MaxInt32)
			if !ok {
				return nil, fmt.Errorf("index list %s: %s is not a range of non-negative numbers: %w",
					QuoteShort(s), QuoteShort(item), ErrBadIndexList)
			}
			if hi < lo {
				return nil, fmt.Errorf("index list %s: reverse range %s: %w",
					QuoteShort(s), QuoteShort(item), ErrBadIndexList)
			}
		}
		// Check the size before allocating: hi-lo+1 fits in uint64 because
		// both are at most MaxInt32.
		if n := hi - lo + 1; n > uint64(MaxIndexList-total) {
			return nil, fmt.Errorf("index list %s: more than %d indices: %w",
				QuoteShort(s), MaxIndexList, ErrTooLarge)
		}
		for v := lo; v <= hi; v++ {
			out = append(out, int(v))
		}
		total += int(hi - lo + 1)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// FormatIndexList renders indices as a comma list ("0,2,3"), the inverse of
// ParseIndexList for sorted unique input.
func FormatIndexList(idx []int) string {
	var b strings.Builder
	for i, v := range idx {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}
