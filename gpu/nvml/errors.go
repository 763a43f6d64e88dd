package nvml

import (
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuprof/gpuprof/gpu"
)

// returnError wraps a failed nvml.Return with what was being done. The
// Return stays in the chain (errors.Is(err, nvml.ERROR_NO_PERMISSION)), and
// the codes that mean "this GPU or driver cannot" also wrap
// gpu.ErrUnsupported.
func returnError(what string, ret nvml.Return) error {
	switch ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return fmt.Errorf("%s: %w: %w", what, gpu.ErrUnsupported, ret)
	}
	return fmt.Errorf("%s: %w", what, ret)
}

// unavailable reports whether ret says the reading does not exist on this
// GPU, as opposed to a fault worth a warning.
func unavailable(ret nvml.Return) bool {
	switch ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NO_DATA:
		return true
	}
	return false
}

// NVML fills fields it cannot measure with NVML_VALUE_NOT_AVAILABLE, which
// is -1 in an unsigned field. These keep that sentinel out of readings.

func opt32(v uint32) gpu.Opt[uint32] {
	if v == math.MaxUint32 {
		return gpu.Opt[uint32]{}
	}
	return gpu.Some(v)
}

func opt64(v uint64) gpu.Opt[uint64] {
	if v == math.MaxUint64 {
		return gpu.Opt[uint64]{}
	}
	return gpu.Some(v)
}
