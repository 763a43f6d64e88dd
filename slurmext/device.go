package slurmext

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DeviceMinor returns the minor number of a GRES device file such as
// /dev/nvidia3, which for NVIDIA GPUs equals the GPU's NVML minor number and so
// ties Slurm's GPU index (via gres.conf) to a GPU UUID.
//
// A character device gives unix.Minor of its device number; any other
// existing file gives the trailing decimal digits of its name
// (MinorFromName), as slurmd does for device numbers. A file that cannot be
// stat'ed gives the stat error (errors.Is(err, fs.ErrNotExist) for a missing
// file); callers that want the name-only guess call MinorFromName.
func DeviceMinor(path string) (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return -1, fmt.Errorf("device minor: %w", &os.PathError{Op: "stat", Path: path, Err: err})
	}
	if st.Mode&unix.S_IFMT == unix.S_IFCHR {
		// The conversion is needed where Rdev is narrower than uint64.
		return int(unix.Minor(uint64(st.Rdev))), nil
	}
	return MinorFromName(path)
}

// MinorFromName returns the trailing decimal digits of the path's base name
// ("/dev/nvidia3" → 3) without touching the filesystem. Errors wrap ErrNoMinor
// when there are none or they exceed MaxInt32.
func MinorFromName(path string) (int, error) {
	base := filepath.Base(path)
	i := len(base)
	for i > 0 && base[i-1] >= '0' && base[i-1] <= '9' {
		i--
	}
	if i == len(base) {
		return -1, fmt.Errorf("device %s: no trailing number in the name: %w", QuoteShort(path), ErrNoMinor)
	}
	n, ok := ParseDigits(base[i:], math.MaxInt32)
	if !ok {
		return -1, fmt.Errorf("device %s: trailing number too large: %w", QuoteShort(path), ErrNoMinor)
	}
	return int(n), nil
}
