package slurmext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Bounds on gres.conf parsing.
const (
	// MaxGresDevices is the most GPU devices ReadGresConf returns for a node.
	MaxGresDevices = 4096
	// maxGresLine bounds one logical line (after joining continuations).
	maxGresLine = 1 << 20
)

// GresDevice is one GPU of this node as gres.conf lists it.
type GresDevice struct {
	// Index is the position in this node's gpu list: Slurm's GPU index, the
	// number SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES carry in the hooks.
	Index int
	Name  string // the GRES name as written, "gpu"
	Type  string // Type=, e.g. "h100"; "" when untyped
	File  string // the device file, e.g. "/dev/nvidia3"
}

// GresConf is what gres.conf says about one node.
type GresConf struct {
	// Devices are the Name=gpu devices with File= (or MultipleFiles=) that
	// apply to the node, in file order, Index 0..n-1.
	Devices []GresDevice
	// AutoDetect is the last AutoDetect= value that applies to the node
	// ("nvml", "off", ...), "" when none. With AutoDetect on, slurmd merges
	// the GPUs it detects and may reorder them (by type, links, PCI order),
	// so Devices' Index is then not guaranteed to be Slurm's index: callers
	// should prefer UUIDs from the hook environment when AutoDetect is on.
	AutoDetect string
}

// ParseGresConf returns the GPU devices gres.conf assigns to node, with
// Slurm's GPU index. See ReadGresConf.
func ParseGresConf(r io.Reader, node string) ([]GresDevice, error) {
	conf, err := ReadGresConf(r, node)
	if err != nil {
		return nil, err
	}
	return conf.Devices, nil
}

// ReadGresConf parses gres.conf for one node.
//
// The format is Slurm's: lines of Key=Value pairs separated by white space
// (keys case-insensitive, values optionally "double quoted", spaces allowed
// around '='), '#' comments ('\#' is a literal '#'), blank lines, and a
// trailing backslash joining the next line. A line applies to node when it has
// no NodeName= or its NodeName= hostlist names node.
//
// The Name=gpu lines that apply and carry File= give one device per file,
// File= expanded as a hostlist ("/dev/nvidia[0-3]", "/dev/nvidia0,/dev/nvidia2");
// a MultipleFiles= line gives one device (its first file), as in Slurm.
// Index counts devices 0..n-1 in file order, which is how slurmd numbers them
// when AutoDetect is off. Count= without File=, other GRES names, and unknown
// keys are ignored.
//
// Errors wrap ErrBadGresConf with the line number: a line that is not
// Key=Value pairs (including Include, which is not followed), an unterminated
// quote, a malformed NodeName/File hostlist, File= together with
// MultipleFiles=, a device file listed twice (slurmd refuses that too). More
// than MaxGresDevices devices gives ErrTooLarge.
func ReadGresConf(r io.Reader, node string) (GresConf, error) {
	var conf GresConf
	seen := make(map[string]bool)
	err := scanGresLines(r, func(lineNo int, line string) error {
		pairs, err := splitGresPairs(line)
		if err != nil {
			return fmt.Errorf("gres.conf line %d: %w", lineNo, err)
		}
		if len(pairs) == 0 {
			return nil
		}
		var nodeName, name, typ, file, multi, autoDetect string
		var hasNode, hasFile, hasMulti, hasAuto bool
		for _, p := range pairs {
			switch strings.ToLower(p.key) {
			case "nodename":
				nodeName, hasNode = p.value, true
			case "name":
				name = p.value
			case "type":
				typ = p.value
			case "file":
				file, hasFile = p.value, true
			case "multiplefiles":
				multi, hasMulti = p.value, true
			case "autodetect":
				autoDetect, hasAuto = p.value, true
			}
		}
		if hasNode {
			ok, err := HostlistContains(nodeName, node)
			if err != nil {
				return fmt.Errorf("gres.conf line %d: NodeName: %w: %w", lineNo, err, ErrBadGresConf)
			}
			if !ok {
				return nil
			}
		}
		if hasAuto {
			conf.AutoDetect = autoDetect
		}
		if !strings.EqualFold(name, "gpu") || (!hasFile && !hasMulti) {
			return nil
		}
		if hasFile && hasMulti {
			return fmt.Errorf("gres.conf line %d: File= and MultipleFiles= together: %w", lineNo, ErrBadGresConf)
		}
		spec, key := file, "File"
		if hasMulti {
			spec, key = multi, "MultipleFiles"
		}
		room := MaxGresDevices - len(conf.Devices)
		files, err := expandHostlist(spec, room)
		if errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("gres.conf line %d: more than %d GPU devices: %w", lineNo, MaxGresDevices, ErrTooLarge)
		}
		if err != nil {
			return fmt.Errorf("gres.conf line %d: %s: %w: %w", lineNo, key, err, ErrBadGresConf)
		}
		if hasMulti && len(files) > 0 {
			files = files[:1]
		}
		for _, f := range files {
			if seen[f] {
				return fmt.Errorf("gres.conf line %d: device file %s listed twice: %w", lineNo, quoteShort(f), ErrBadGresConf)
			}
			seen[f] = true
			conf.Devices = append(conf.Devices, GresDevice{Index: len(conf.Devices), Name: name, Type: typ, File: f})
		}
		return nil
	})
	if err != nil {
		return GresConf{}, err
	}
	return conf, nil
}

// scanGresLines calls fn with each logical line: comment removed,
// continuations joined, numbered by the physical line it starts on.
func scanGresLines(r io.Reader, fn func(lineNo int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxGresLine)
	var logical strings.Builder
	lineNo, start := 0, 0
	for sc.Scan() {
		lineNo++
		if logical.Len() == 0 {
			start = lineNo
		}
		line, cont := stripContinuation(stripGresComment(strings.TrimSuffix(sc.Text(), "\r")))
		if logical.Len()+len(line) > maxGresLine {
			return fmt.Errorf("gres.conf line %d: logical line longer than %d bytes: %w", start, maxGresLine, ErrBadGresConf)
		}
		logical.WriteString(line)
		if cont {
			continue
		}
		if err := fn(start, logical.String()); err != nil {
			return err
		}
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("gres.conf after line %d: %w: %w", lineNo, err, ErrBadGresConf)
	}
	if logical.Len() > 0 {
		return fn(start, logical.String())
	}
	return nil
}

// stripGresComment cuts a line at the first '#' not escaped as '\#'.
func stripGresComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] != '\\') {
			return line[:i]
		}
	}
	return line
}

// stripContinuation reports a line that ends, before trailing white space, in
// an odd number of backslashes, and removes that last backslash and the white
// space after it. Slurm joins such a line directly to the next.
func stripContinuation(line string) (string, bool) {
	trimmed := strings.TrimRight(line, " \t\v\f")
	bs := len(trimmed) - len(strings.TrimRight(trimmed, `\`))
	if bs%2 == 1 {
		return trimmed[:len(trimmed)-1], true
	}
	return line, false
}

type gresPair struct{ key, value string }

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isGresSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f'
}

// splitGresPairs splits a logical line into Key=Value pairs.
func splitGresPairs(line string) ([]gresPair, error) {
	var pairs []gresPair
	i := 0
	skip := func() {
		for i < len(line) && isGresSpace(line[i]) {
			i++
		}
	}
	for {
		skip()
		if i == len(line) {
			return pairs, nil
		}
		start := i
		for i < len(line) && isKeyChar(line[i]) {
			i++
		}
		key := line[start:i]
		skip()
		if key == "" || i == len(line) || line[i] != '=' {
			rest := line[start:]
			if f := strings.Fields(rest); len(f) > 0 && strings.EqualFold(f[0], "include") {
				return nil, fmt.Errorf("Include is not supported: %w", ErrBadGresConf)
			}
			return nil, fmt.Errorf("expected Key=Value at %s: %w", quoteShort(rest), ErrBadGresConf)
		}
		i++ // '='
		skip()
		var value string
		if i < len(line) && line[i] == '"' {
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %s: %w", quoteShort(line[start:]), ErrBadGresConf)
			}
			value = line[i+1 : i+1+end]
			i += end + 2
		} else {
			vs := i
			for i < len(line) && !isGresSpace(line[i]) {
				i++
			}
			value = line[vs:i]
		}
		pairs = append(pairs, gresPair{key: key, value: strings.ReplaceAll(value, `\#`, "#")})
	}
}
