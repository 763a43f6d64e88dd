package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpuprof/gpuprof/config"
)

// LoadFlags are a burn's per-GPU load as the command line spells it
// (gpuprof simgpu burn): comma lists with one value per used GPU, or one
// value for all. Empty SM, Tensor or DRAM leaves the node's default.
type LoadFlags struct {
	Mem    string // sizes such as 6GiB (config.ParseBytes)
	Util   string // duty cycles, whole percent 0..100
	SM     string // activities, percent 0..100, fractions allowed
	Tensor string
	DRAM   string
}

// FlagError is a value of LoadFlags that cannot be read, named by its
// command-line flag ("--mem: bad size ...").
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Err.Error() }

func (e *FlagError) Unwrap() error { return e.Err }

// Apply reads f into o's Mem, Util, SM, Tensor and DRAM. The first value
// that cannot be read is a *FlagError, in the order of the fields.
func (f LoadFlags) Apply(o *BurnOptions) error {
	mem, err := parseList(f.Mem, config.ParseBytes)
	if err != nil {
		return &FlagError{"--mem", err}
	}
	util, err := parseList(f.Util, parseDutyCycle)
	if err != nil {
		return &FlagError{"--util", err}
	}
	var activity [3][]float64
	for i, a := range []struct{ name, value string }{{"--sm", f.SM}, {"--tensor", f.Tensor}, {"--dram", f.DRAM}} {
		if a.value == "" {
			continue
		}
		if activity[i], err = parseList(a.value, parsePercent); err != nil {
			return &FlagError{a.name, err}
		}
	}
	o.Mem, o.Util = mem, util
	o.SM, o.Tensor, o.DRAM = activity[0], activity[1], activity[2]
	return nil
}

// parseDutyCycle reads NVML's utilisation, whole percent 0..100.
func parseDutyCycle(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v > 100 {
		return 0, fmt.Errorf("bad utilisation %q (0..100)", s)
	}
	return uint32(v), nil
}

// parsePercent reads a percentage of GPU activity, 0..100, fractions
// allowed ("0.02").
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v <= 100) {
		return 0, fmt.Errorf("bad percentage %q (0..100)", s)
	}
	return v, nil
}

// parseList reads a comma list, each element trimmed and read by parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for part := range strings.SplitSeq(s, ",") {
		v, err := parse(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
