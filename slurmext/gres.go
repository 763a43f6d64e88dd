package slurmext

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Bounds on gres.conf parsing.
const (
	// MaxGresDevices is the most GPU devices ReadGresConf returns for a node.
	MaxGresDevices = 4096
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
	// Declared are the Name=gpu lines that apply to the node, with or
	// without File=, in file order (AutoDetect's Type/Count lines too).
	Declared []GresDecl
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

// ReadGresConf parses one gres.conf text for one node (LoadGresFile reads
// a file and follows its Include lines).
//
// The syntax is Slurm's, read by the one reader of it (confparse.go). A
// line applies to node when it has no NodeName= or its NodeName= hostlist
// names node.
//
// The Name=gpu lines that apply and carry File= give one device per file,
// File= expanded as a hostlist ("/dev/nvidia[0-3]", "/dev/nvidia0,/dev/nvidia2");
// a MultipleFiles= line gives one device (its first file), as in Slurm.
// Index counts devices 0..n-1 in file order, which is how slurmd numbers them
// when AutoDetect is off. Every Name=gpu line that applies, with or without
// File=, is in Declared with its Type and Count; other GRES names and
// unknown keys are ignored.
//
// Errors wrap ErrBadGresConf with the line number: a line that is not
// Key=Value pairs (an Include, which a text without a file cannot resolve), an unterminated
// quote, a malformed NodeName/File hostlist, File= together with
// MultipleFiles=, a device file listed twice (slurmd refuses that too). More
// than MaxGresDevices devices gives ErrTooLarge.
func ReadGresConf(r io.Reader, node string) (GresConf, error) {
	t, err := readConfStream(r, "gres.conf")
	if err != nil {
		return GresConf{}, gresErr(err)
	}
	return gresFor(t.Lines, node)
}

// GresFile is a gres.conf read with its Include lines followed: Path, and
// the files read.
type GresFile struct {
	Path  string
	Files []string
	lines []ConfLine
}

// LoadGresFile reads the gres.conf at path (nil open: ReadConfFile),
// following its Include lines.
func LoadGresFile(path string, open ConfOpener) (*GresFile, error) {
	t, err := ReadConfText(path, open)
	if err != nil {
		return nil, gresErr(err)
	}
	return &GresFile{Path: path, Files: t.Files, lines: t.Lines}, nil
}

// For returns what the file says about node (see ReadGresConf).
func (g *GresFile) For(node string) (GresConf, error) {
	if g == nil {
		return GresConf{}, nil
	}
	return gresFor(g.lines, node)
}

// gresErr wraps a syntax error of gres.conf in ErrBadGresConf too.
func gresErr(err error) error {
	if err != nil && errors.Is(err, ErrBadConf) && !errors.Is(err, ErrBadGresConf) {
		return fmt.Errorf("%w: %w", err, ErrBadGresConf)
	}
	return err
}

// GresDecl is one Name=gpu line of gres.conf that applies to a node: its
// Type, and its count: the number of File= devices, else Count= (CountKnown
// false when the line gives neither: with AutoDetect on, the hardware
// decides, and slurm.conf's Gres= gives the count).
type GresDecl struct {
	Type       string
	Count      int
	CountKnown bool
	Files      []string
}

// gresFor reads the lines that apply to node.
func gresFor(lines []ConfLine, node string) (GresConf, error) {
	var conf GresConf
	seen := make(map[string]bool)
	for _, l := range lines {
		var nodeName, name, typ, file, multi, autoDetect, count string
		var hasNode, hasFile, hasMulti, hasAuto, hasCount bool
		for _, p := range l.Pairs {
			switch strings.ToLower(p.Key) {
			case "nodename":
				nodeName, hasNode = p.Value, true
			case "name":
				name = p.Value
			case "type":
				typ = p.Value
			case "file":
				file, hasFile = p.Value, true
			case "multiplefiles":
				multi, hasMulti = p.Value, true
			case "autodetect":
				autoDetect, hasAuto = p.Value, true
			case "count":
				count, hasCount = p.Value, true
			}
		}
		where := "gres.conf " + l.Where()
		if hasNode {
			ok, err := HostlistContains(nodeName, node)
			if err != nil {
				return GresConf{}, fmt.Errorf("%s: NodeName: %w: %w", where, err, ErrBadGresConf)
			}
			if !ok {
				continue
			}
		}
		if hasAuto {
			conf.AutoDetect = autoDetect
		}
		if !strings.EqualFold(name, "gpu") {
			continue
		}
		decl := GresDecl{Type: typ}
		if hasCount {
			n, ok := parseGresCount(count)
			if !ok || n > MaxGresDevices {
				return GresConf{}, fmt.Errorf("%s: Count=%s: want a count up to %d: %w", where, QuoteShort(count), MaxGresDevices, ErrBadGresConf)
			}
			decl.Count, decl.CountKnown = int(n), true
		}
		if !hasFile && !hasMulti {
			conf.Declared = append(conf.Declared, decl)
			continue
		}
		if hasFile && hasMulti {
			return GresConf{}, fmt.Errorf("%s: File= and MultipleFiles= together: %w", where, ErrBadGresConf)
		}
		spec, key := file, "File"
		if hasMulti {
			spec, key = multi, "MultipleFiles"
		}
		room := MaxGresDevices - len(conf.Devices)
		files, err := expandHostlist(spec, room)
		if errors.Is(err, ErrTooLarge) {
			return GresConf{}, fmt.Errorf("%s: more than %d GPU devices: %w", where, MaxGresDevices, ErrTooLarge)
		}
		if err != nil {
			return GresConf{}, fmt.Errorf("%s: %s: %w: %w", where, key, err, ErrBadGresConf)
		}
		if hasMulti && len(files) > 0 {
			files = files[:1]
		}
		for _, f := range files {
			if seen[f] {
				return GresConf{}, fmt.Errorf("%s: device file %s listed twice: %w", where, QuoteShort(f), ErrBadGresConf)
			}
			seen[f] = true
			conf.Devices = append(conf.Devices, GresDevice{Index: len(conf.Devices), Name: name, Type: typ, File: f})
		}
		if !decl.CountKnown {
			decl.Count, decl.CountKnown = len(files), true
		}
		decl.Files = files
		conf.Declared = append(conf.Declared, decl)
	}
	return conf, nil
}
