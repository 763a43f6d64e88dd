package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpuprof/gpuprof/internal/procread"
)

// maxProcFileSize bounds what the agent reads from a file that any user may
// write: a larger file is treated as malformed.
const maxProcFileSize = 64 << 10

// Process is one simulated CUDA process.
type Process struct {
	PID   int
	Name  string // comm
	Usage []Usage
}

// Usage is a process's use of one GPU.
type Usage struct {
	UUID string `json:"uuid"`
	Mem  uint64 `json:"mem_bytes"`
	// Util is the duty cycle the process causes: the share of time a
	// kernel of it runs, percent (NVML's "GPU utilisation").
	Util uint32 `json:"util_percent"`
	// SM, Tensor and DRAM are the activity the process causes, percent of
	// the GPU (what GPM measures). Unstated (nil), SM is Util (kernels
	// that fill every SM while they run), Tensor 0 and DRAM Util/2.
	SM     *float64 `json:"sm_percent,omitempty"`
	Tensor *float64 `json:"tensor_percent,omitempty"`
	DRAM   *float64 `json:"dram_percent,omitempty"`
}

// activity is what u causes on its GPU: SM, tensor and DRAM activity,
// percent, with the defaults of unstated values.
func (u Usage) activity() (sm, tensor, dram float64) {
	sm, dram = float64(u.Util), float64(u.Util)/2
	if u.SM != nil {
		sm = *u.SM
	}
	if u.Tensor != nil {
		tensor = *u.Tensor
	}
	if u.DRAM != nil {
		dram = *u.DRAM
	}
	return sm, tensor, dram
}

// procFile is procs/PID.json.
type procFile struct {
	PID int `json:"pid"`
	// StartTime is field 22 of /proc/PID/stat (clock ticks since boot). It
	// tells a live process from a later one that reused its PID; 0 skips
	// that check.
	StartTime uint64  `json:"start_time"`
	Name      string  `json:"name"`
	GPUs      []Usage `json:"gpus"`
}

func procPath(dir string, pid int) string {
	return filepath.Join(dir, procsDirName, strconv.Itoa(pid)+".json")
}

// pidOfProcFile returns the PID a procs/ entry is named after, or false for
// anything else (temporary files, stray files).
func pidOfProcFile(name string) (int, bool) {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok || base == "" || strings.TrimLeft(base, "0123456789") != "" {
		return 0, false
	}
	pid, err := strconv.Atoi(base)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

// writeProcFile replaces procs/PID.json atomically, so the agent never reads
// half a registration.
func writeProcFile(dir string, p procFile) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode process file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Join(dir, procsDirName), ".tmp-"+strconv.Itoa(p.PID)+"-*")
	if err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("register process: %w", err)
	}
	// Readable by all, like /proc: the agent may run as another user.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("register process: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	if err := os.Rename(tmp.Name(), procPath(dir, p.PID)); err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	return nil
}

// readProcFile reads and checks one process file; any error means the file
// is to be skipped.
func readProcFile(path string, pid int) (procFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return procFile{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProcFileSize+1))
	if err != nil {
		return procFile{}, err
	}
	if len(data) > maxProcFileSize {
		return procFile{}, fmt.Errorf("%s: larger than %d bytes", path, maxProcFileSize)
	}
	var p procFile
	if err := json.Unmarshal(data, &p); err != nil {
		return procFile{}, fmt.Errorf("%s: %w", path, err)
	}
	if p.PID != pid {
		return procFile{}, fmt.Errorf("%s: names pid %d", path, p.PID)
	}
	return p, nil
}

// procStat is what the simulation needs from /proc/PID/stat.
type procStat struct {
	comm      string
	state     byte
	startTime uint64
}

var errBadStat = errors.New("malformed stat")

func readStat(procfs string, pid int) (procStat, error) {
	var buf [1024]byte // a stat line is far shorter (comm is at most 64 bytes)
	data, err := procread.Head(filepath.Join(procfs, strconv.Itoa(pid), "stat"), buf[:])
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(data))
}

// parseStat reads fields 2, 3 and 22 of a stat line. comm may itself hold
// spaces and parentheses, so the fields after it are counted from the last
// ')'.
func parseStat(s string) (procStat, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("%w: no (comm)", errBadStat)
	}
	rest := strings.Fields(s[end+1:])
	// rest[0] is field 3 (state), so field 22 (starttime) is rest[19].
	if len(rest) < 20 || len(rest[0]) != 1 {
		return procStat{}, fmt.Errorf("%w: %d fields after comm", errBadStat, len(rest))
	}
	start, err := strconv.ParseUint(rest[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("%w: starttime %q", errBadStat, rest[19])
	}
	return procStat{comm: s[open+1 : end], state: rest[0][0], startTime: start}, nil
}

// procAlive judges a process by its /proc/PID/stat (st, or the error that
// reading it gave) against the start time its file registered.
//
// A missing /proc entry, a zombie (the driver frees a process's memory when
// it exits, before its parent reaps it) or a different start time (the PID
// was reused) mean it is gone; start 0 skips that check. Any other error
// leaves the question open and the process counted: dropping a live
// process's memory would be the worse mistake, and the answer changes as
// soon as /proc can be read.
func procAlive(st procStat, err error, start uint64) bool {
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH)
	}
	if st.state == 'Z' || st.state == 'X' {
		return false
	}
	return start == 0 || st.startTime == start
}
