package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gpuprof/gpuprof/gpu"
)

// xidLine is one line of xid.log.
type xidLine struct {
	UUID string    `json:"uuid"`
	XID  uint64    `json:"xid"`
	Time time.Time `json:"time"`
}

// RecordXID appends an XID event for the GPU uuid to the node in dir, as the
// driver would raise it (`gpuprof simgpu xid`). The UUID must be one of the
// node's GPUs.
func RecordXID(dir, uuid string, xid uint64, t time.Time) error {
	devs, err := LoadNode(dir)
	if err != nil {
		return err
	}
	found := false
	for _, d := range devs {
		found = found || d.UUID == uuid
	}
	if !found {
		return fmt.Errorf("record xid: %s: %w", uuid, gpu.ErrNotFound)
	}
	data, err := json.Marshal(xidLine{UUID: uuid, XID: xid, Time: t})
	if err != nil {
		return fmt.Errorf("record xid: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, xidFileName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("record xid: %w", err)
	}
	// One write of a whole line: O_APPEND keeps concurrent writers' lines
	// apart, and a reader never acts on a line without its newline.
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("record xid: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("record xid: %w", err)
	}
	return nil
}

// readXIDs parses the complete lines of path from offset on and returns the
// offset after the last complete line. A file shorter than offset was
// truncated or replaced, so it is read from the start. Malformed lines are
// skipped.
func readXIDs(path string, offset int64) ([]gpu.XIDEvent, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("read sim xid log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, offset, fmt.Errorf("read sim xid log: %w", err)
	}
	if fi.Size() < offset {
		offset = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, offset, fi.Size()-offset))
	if err != nil {
		return nil, offset, fmt.Errorf("read sim xid log: %w", err)
	}
	// A line still being written has no newline yet; leave it for later.
	end := bytes.LastIndexByte(data, '\n') + 1
	var events []gpu.XIDEvent
	for line := range bytes.SplitSeq(data[:end], []byte{'\n'}) {
		var l xidLine
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &l) != nil || l.UUID == "" {
			continue
		}
		events = append(events, gpu.XIDEvent{UUID: l.UUID, XID: l.XID, Time: l.Time})
	}
	return events, offset + int64(end), nil
}
