package agent

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuprof/gpuprof/internal/procread"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// procReader reads what the agent needs from procfs and the cgroup tree.
// Both roots are parameters so tests run on fixture trees.
type procReader struct {
	procfs     string
	cgroupRoot string
}

// comm returns the process name.
func (p procReader) comm(pid int) string {
	data, err := os.ReadFile(filepath.Join(p.procfs, strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return sanitizeName(strings.TrimSpace(string(data)))
}

// sanitizeName keeps a process name printable by gpuprof's one rule for
// untrusted text (termtext.Clean): names come from users and reach
// terminals and HTML. It keeps at most 64 bytes, cut on a rune boundary.
func sanitizeName(s string) string {
	s, _ = termtext.Cut(termtext.Clean(s), 64)
	return s
}

// statFields returns the fields of /proc/PID/stat from field 3 on.
func (p procReader) statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(p.procfs, strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	// comm (field 2) may contain spaces and parentheses: split after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, fmt.Errorf("malformed stat of pid %d", pid)
	}
	return strings.Fields(string(data[i+1:])), nil // index 0 is field 3
}

// startTime returns a process's start time: field 22 of /proc/PID/stat
// (starttime, clock ticks since boot). A PID and its start time name one
// process for good: the kernel gives a PID to a new process only after the
// old one is gone, and the new one starts later.
func (p procReader) startTime(pid int) (uint64, error) {
	return startTimeAt(p.statPath(pid))
}

// statPath is the path of /proc/PID/stat.
func (p procReader) statPath(pid int) string {
	return filepath.Join(p.procfs, strconv.Itoa(pid), "stat")
}

// startTimeAt is startTime of the stat file at path (statPath): the
// sampling tick keeps each process's path, so that the look costs no
// allocation but the system call's.
func startTimeAt(path string) (uint64, error) {
	// Field 22 ends within 512 bytes: pid, comm (at most 64 bytes) and 19
	// numbers of at most 20 digits before it.
	var buf [512]byte
	data, err := procread.Head(path, buf[:])
	if err != nil {
		return 0, err
	}
	return parseStartTime(data)
}

// parseStartTime reads field 22 of a stat line. comm (field 2) may hold
// spaces and parentheses: the fields are counted from the last ')'.
func parseStartTime(data []byte) (uint64, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("malformed stat: no (comm)")
	}
	rest := data[i+1:]
	// Field 3 (state) is the first after comm: field 22 is the 20th.
	for n := 3; ; n++ {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return 0, fmt.Errorf("malformed stat: %d fields", n-1)
		}
		if n == 22 {
			v, err := strconv.ParseUint(string(rest[:end]), 10, 64)
			if err != nil || v == 0 {
				return 0, fmt.Errorf("malformed stat: starttime %q", rest[:end])
			}
			return v, nil
		}
		rest = rest[end:]
	}
}

// blkioTicks returns the process's aggregated block-IO delay in clock ticks
// (field 42, delayacct_blkio_ticks; meaningful only with delay accounting)
// and its start time (field 22), read together: the ticks are the
// process's that started then.
func (p procReader) blkioTicks(pid int) (ticks, start uint64, err error) {
	f, err := p.statFields(pid)
	if err != nil || len(f) < 40 {
		return 0, 0, fmt.Errorf("blkio ticks of pid %d: %v", pid, err)
	}
	if start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return 0, 0, err
	}
	ticks, err = strconv.ParseUint(f[39], 10, 64)
	return ticks, start, err
}

// delayAcct reports whether per-task delay accounting is on.
func (p procReader) delayAcct() bool {
	data, err := os.ReadFile(filepath.Join(p.procfs, "sys/kernel/task_delayacct"))
	return err == nil && strings.TrimSpace(string(data)) == "1"
}

// jobIOPressure reads the IO pressure of a job's cgroup v2 directory,
// where Slurm puts it (slurmext.JobCgroupDirs): named by its id, or
// (26.05) by its SLUID when known.
func (p procReader) jobIOPressure(jobID, sluid string) (float64, bool) {
	dirs, n := slurmext.JobCgroupDirs(jobID, sluid)
	for _, dir := range dirs[:n] {
		if v, ok := readPSITotal(filepath.Join(p.cgroupRoot, dir, "io.pressure")); ok {
			return v, true
		}
	}
	return 0, false
}

// nodeIOPressure returns the node's "some" IO stall total in seconds.
func (p procReader) nodeIOPressure() (float64, bool) {
	return readPSITotal(filepath.Join(p.procfs, "pressure/io"))
}

// readPSITotal parses a PSI file and returns the "some" total in seconds.
func readPSITotal(path string) (float64, bool) {
	var buf [512]byte // two lines of well under 100 bytes each
	data, err := procread.Head(path, buf[:])
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, kv := range fields[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				us, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return 0, false
				}
				return float64(us) / 1e6, true
			}
		}
	}
	return 0, false
}

// cpuIOWait returns the iowait and total jiffies of the node from /proc/stat.
func (p procReader) cpuIOWait() (iowait, total uint64, ok bool) {
	var buf [512]byte // the first line, "cpu" and ten counters, is all it needs
	data, err := procread.Head(filepath.Join(p.procfs, "stat"), buf[:])
	if err != nil {
		return 0, 0, false
	}
	first, _, complete := strings.Cut(string(data), "\n")
	if !complete && len(data) == len(buf) {
		return 0, 0, false // a first line longer than any kernel writes
	}
	fields := strings.Fields(first)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range fields[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i == 7 || i == 8 { // guest, guest_nice are already in user, nice
			continue
		}
		total += v
		if i == 4 {
			iowait = v
		}
	}
	return iowait, total, true
}

// uid returns the real uid of a process (/proc/PID/status).
func (p procReader) uid(pid int) (int, error) {
	data, err := os.ReadFile(filepath.Join(p.procfs, strconv.Itoa(pid), "status"))
	if err != nil {
		return -1, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return -1, fmt.Errorf("no Uid in status of pid %d", pid)
}
