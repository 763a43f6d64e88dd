package slurmext

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrBadSlurmConf means a NodeName line of slurm.conf cannot be read.
var ErrBadSlurmConf = errors.New("malformed slurm.conf")

// maxConfNodes bounds how many nodes ReadNodeGres expands.
const maxConfNodes = 100_000

// NodeGres is what slurm.conf's NodeName lines say about one node's GPUs.
type NodeGres struct {
	Name string
	// GPUs is the number of gres/gpu, GPUType their type when one type was
	// given ("h100"; "h100,a100" for several types).
	GPUs    int
	GPUType string
	// GPUsByType counts the GPUs of each type in Gres= order ("" for GPUs
	// given without a type): gpu:h100:4,gpu:a100:2 is {h100 4} {a100 2}.
	GPUsByType []TypeCount
	// Shards and MPS are the node's gres/shard and gres/mps counts (all of
	// its GPUs together, as Slurm configures them).
	Shards int
	MPS    int
}

// ReadNodeGres returns the nodes slurm.conf declares with their Gres=, in
// file order. NodeName=DEFAULT lines set the Gres= of the lines after them,
// as in Slurm; a node named twice keeps its last line. Hostlists
// ("gpu[01-04]") are expanded. Gres= entries are Slurm's
// name[:type][:count][(S:sockets)] (count defaults to 1, a K/M/G suffix
// multiplies by 1024s, "no_consume" is read past); names other than gpu,
// shard and mps are ignored. The text may not Include files
// (LoadClusterConf reads a file and follows them). Errors wrap
// ErrBadSlurmConf and name the line.
func ReadNodeGres(r io.Reader) ([]NodeGres, error) {
	t, err := readConfStream(r, "slurm.conf")
	if err != nil {
		return nil, confErr(err)
	}
	decls, err := nodeDecls(t.Lines)
	if err != nil {
		return nil, err
	}
	return nodeGresOf(decls)
}

// parseNodeGres reads one Gres= value.
func parseNodeGres(v string) (NodeGres, error) {
	var g NodeGres
	var types []string
	if v == "" || strings.EqualFold(v, "(null)") {
		return g, nil
	}
	for entry := range strings.SplitSeq(v, ",") {
		entry = strings.TrimSpace(entry)
		if i := strings.IndexByte(entry, '('); i >= 0 { // (S:0-1): sockets
			entry = entry[:i]
		}
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		name := strings.ToLower(parts[0])
		var typ string
		count := int64(1)
		for _, p := range parts[1:] {
			if strings.EqualFold(p, "no_consume") {
				continue
			}
			if n, ok := parseGresCount(p); ok {
				count = n
				continue
			}
			if typ != "" {
				return g, fmt.Errorf("entry %s: two types", QuoteShort(entry))
			}
			typ = p
		}
		if count > 1<<40 {
			return g, fmt.Errorf("entry %s: count out of range", QuoteShort(entry))
		}
		switch name {
		case "gpu":
			g.GPUs += int(count)
			g.addTyped(typ, int(count))
			if typ != "" && !contains(types, typ) {
				types = append(types, typ)
			}
		case "shard":
			g.Shards += int(count)
		case "mps":
			g.MPS += int(count)
		}
	}
	g.GPUType = strings.Join(types, ",")
	return g, nil
}

// parseGresCount reads "8", "2K" (2048), "1M".
func parseGresCount(s string) (int64, bool) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TypeCount is a number of GPUs of one GRES type.
type TypeCount struct {
	Type  string
	Count int
}

func (g *NodeGres) addTyped(typ string, n int) {
	if n == 0 {
		return
	}
	for i := range g.GPUsByType {
		if g.GPUsByType[i].Type == typ {
			g.GPUsByType[i].Count += n
			return
		}
	}
	g.GPUsByType = append(g.GPUsByType, TypeCount{Type: typ, Count: n})
}
