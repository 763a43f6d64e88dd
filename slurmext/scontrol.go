package slurmext

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// The live cluster as a source: slurmctld's own answer to `scontrol show
// config`, `scontrol show nodes -o` and `scontrol show partitions -o`,
// read into the same ClusterConf the files give. Only the nodes' Gres and
// features, the partitions and the scheduler settings are taken; nothing
// of the files is mixed in (a model is of one source).

// ScontrolSource names the live source in a ClusterConf's SlurmConf and
// Files.
const ScontrolSource = "scontrol"

// ScontrolText is what scontrol printed: Config is `scontrol show config`,
// Nodes `scontrol show nodes` (one-line -o, or the multi-line default),
// Partitions `scontrol show partitions` (likewise).
type ScontrolText struct {
	Config, Nodes, Partitions []byte
}

// maxScontrolBytes bounds each of scontrol's answers, as MaxConfBytes
// bounds the files.
const maxScontrolBytes = MaxConfBytes

// NewClusterConfScontrol builds the model from scontrol's answers. Node
// records give NodeName, Gres and AvailableFeatures; partition records
// Nodes, MaxTime, DefaultTime, PriorityTier, PriorityJobFactor, QoS,
// AllowQos, Default and State; show config's first section the settings
// (ClusterName, the Priority* and Scheduler* keys). "(null)", "N/A" and
// "NONE" are "not set". An answer that cannot be read is an error, never a
// partial model.
func NewClusterConfScontrol(s ScontrolText) (*ClusterConf, error) {
	for _, b := range [][]byte{s.Config, s.Nodes, s.Partitions} {
		if len(b) > maxScontrolBytes {
			return nil, fmt.Errorf("scontrol: more than %d bytes: %w", maxScontrolBytes, ErrTooLarge)
		}
	}
	settings, err := scontrolConfigLines(s.Config)
	if err != nil {
		return nil, err
	}
	nodes, err := scontrolRecords("scontrol show nodes", s.Nodes, "NodeName")
	if err != nil {
		return nil, err
	}
	parts, err := scontrolRecords("scontrol show partitions", s.Partitions, "PartitionName")
	if err != nil {
		return nil, err
	}
	lines := settings
	for _, r := range nodes {
		l := ConfLine{File: r.File, Line: r.Line, Pairs: []ConfPair{r.Pairs[0]}}
		if g, ok := r.Get("Gres"); ok && !scontrolUnset(g) {
			l.Pairs = append(l.Pairs, ConfPair{"Gres", g})
		}
		if f, ok := r.Get("AvailableFeatures"); ok && !scontrolUnset(f) {
			l.Pairs = append(l.Pairs, ConfPair{"Features", f})
		}
		lines = append(lines, l)
	}
	for _, r := range parts {
		l := ConfLine{File: r.File, Line: r.Line, Pairs: []ConfPair{r.Pairs[0]}}
		for _, k := range []string{"Nodes", "MaxTime", "DefaultTime", "PriorityTier", "PriorityJobFactor", "QoS", "AllowQos", "Default", "State"} {
			if v, ok := r.Get(k); ok && !scontrolUnset(v) {
				l.Pairs = append(l.Pairs, ConfPair{k, v})
			}
		}
		lines = append(lines, l)
	}
	c, err := NewClusterConf(&ConfText{Lines: lines})
	if err != nil {
		return nil, err
	}
	c.SlurmConf, c.Files = ScontrolSource, []string{ScontrolSource}
	return c, nil
}

// scontrolUnset reports the values scontrol prints for "not set".
func scontrolUnset(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "", "(NULL)", "N/A", "NONE":
		return true
	}
	return false
}

// ScontrolClusterName is the ClusterName in `scontrol show config`'s
// answer (lowercased, as Slurm records it), "" when it gives none.
func ScontrolClusterName(config []byte) string {
	lines, err := scontrolConfigLines(config)
	if err != nil {
		return ""
	}
	for _, l := range lines {
		if strings.EqualFold(l.Pairs[0].Key, "ClusterName") {
			if n := strings.ToLower(l.Pairs[0].Value); ValidClusterName(n) {
				return n
			}
		}
	}
	return ""
}

// scontrolConfigLines reads show config's first section ("Key = Value"
// lines, after "Configuration data as of …", up to the first blank line:
// the sections after it are cgroup.conf's, the MPI plugins' and others').
func scontrolConfigLines(b []byte) ([]ConfLine, error) {
	var out []ConfLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), maxScontrolBytes)
	n, started := 0, false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			if started {
				break
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			continue // "Configuration data as of …", "Slurmctld(primary) at … is UP"
		}
		started = true
		v = strings.TrimSpace(v)
		if scontrolUnset(v) {
			continue
		}
		out = append(out, ConfLine{File: "scontrol show config", Line: n, Pairs: []ConfPair{{k, v}}})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("scontrol show config: %w", err)
	}
	return out, nil
}

// scontrolRecords splits scontrol's records (first key first): one line
// each with -o, or several lines each indented after the first. A value
// may have blanks (OS=Linux 6.1.0 #1 SMP …, Reason=…): a word without
// "Key=" belongs to the value before it.
func scontrolRecords(what string, b []byte, first string) ([]ConfLine, error) {
	var out []ConfLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), maxScontrolBytes)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		for _, w := range strings.Fields(text) {
			k, v, ok := strings.Cut(w, "=")
			if !ok || !scontrolKey(k) {
				if len(out) == 0 {
					return nil, fmt.Errorf("%s: line %d: %q before the first %s=: %w", what, n, QuoteShort(w), first, ErrBadConf)
				}
				last := &out[len(out)-1]
				p := &last.Pairs[len(last.Pairs)-1]
				p.Value += " " + w
				continue
			}
			if strings.EqualFold(k, first) {
				if v == "" {
					return nil, fmt.Errorf("%s: line %d: %s= without a name: %w", what, n, first, ErrBadConf)
				}
				out = append(out, ConfLine{File: what, Line: n})
			} else if len(out) == 0 {
				return nil, fmt.Errorf("%s: line %d: %s before the first %s=: %w", what, n, QuoteShort(k), first, ErrBadConf)
			}
			last := &out[len(out)-1]
			last.Pairs = append(last.Pairs, ConfPair{k, v})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// scontrolKey reports a word scontrol prints as a key: letters, digits and
// '_' (CfgTRES, MCS_label), beginning with a letter.
func scontrolKey(k string) bool {
	if k == "" || !(k[0] >= 'A' && k[0] <= 'Z' || k[0] >= 'a' && k[0] <= 'z') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
