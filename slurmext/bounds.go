package slurmext

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/termtext"
)

// MaxMessage bounds an error message or note of this package's parsers and
// of its subpackages': a few quoted values of at most maxQuoted bytes each
// (4 bytes per escaped byte) plus the prose.
const MaxMessage = 1024

// CheckMessage returns an error when msg, an error message or note of a
// parser, could carry raw input into a log: it must be printable ASCII and
// at most MaxMessage bytes. The fuzz targets hold every parser to it.
func CheckMessage(msg string) error {
	if len(msg) > MaxMessage || !printableASCII(msg) {
		return fmt.Errorf("message unbounded or unescaped (%d bytes): %q", len(msg), msg)
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// CheckRecord returns an error naming what of r lies outside the bounds
// every parser of this package and of its subpackages guarantees: a valid
// job id, text that cannot forge a log line and is bounded, a known state,
// numbers and times in range, a known source. The fuzz targets hold every
// parser to it.
func CheckRecord(r JobRecord) error {
	if !ValidJobID(r.JobID) {
		return fmt.Errorf("record with job id %q", r.JobID)
	}
	for name, v := range map[string]string{
		"Cluster": r.Cluster, "DisplayID": r.DisplayID, "Name": r.Name, "User": r.User, "Account": r.Account,
		"Partition": r.Partition, "QOS": r.QOS, "State": string(r.State), "Reason": r.Reason, "NodeList": r.NodeList,
		"ReqTRES": r.ReqTRES, "AllocTRES": r.AllocTRES, "ReqGPUType": r.ReqGPUType, "ArrayTaskSpec": r.ArrayTaskSpec,
	} {
		if err := CheckText(name, v, MaxFieldBytes+maxArraySpecBytes); err != nil {
			return err
		}
	}
	if r.State != "" && !r.State.Known() {
		return fmt.Errorf("state %q", r.State)
	}
	if r.ArrayTaskID < -1 || r.HetOffset < -1 || r.UID < -1 || r.CancelledBy < -1 || r.NodeCount < 0 || r.CPUs < 0 ||
		r.ReqGPUs < 0 || r.ReqShards < 0 || r.Restarts < 0 || r.TimeLimit < 0 || r.Unlimited && r.TimeLimit != 0 {
		return fmt.Errorf("out-of-range field: %+v", r)
	}
	if r.ExitStatus < 0 || r.ExitStatus > 255 || r.DerivedStatus < 0 || r.DerivedStatus > 255 ||
		r.ExitSignal < 0 || r.ExitSignal > 127 || r.DerivedSignal < 0 || r.DerivedSignal > 127 {
		return fmt.Errorf("exit code out of range: %+v", r)
	}
	for _, tm := range []time.Time{r.Submit, r.Eligible, r.Start, r.End} {
		if !tm.IsZero() && (tm.Unix() < 0 || tm.Unix() > MaxUnixSeconds) {
			return fmt.Errorf("time %v out of range", tm)
		}
	}
	if r.Source != "sacct" && r.Source != "jobcomp" {
		return fmt.Errorf("source %q", r.Source)
	}
	return nil
}

// CheckText returns an error when s, the text field named field, is longer
// than maxBytes, not UTF-8, or keeps a character that could forge a log
// line (termtext.Unsafe).
func CheckText(field, s string, maxBytes int) error {
	if len(s) > maxBytes {
		return fmt.Errorf("%s is %d bytes, want at most %d", field, len(s), maxBytes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8: %q", field, s)
	}
	for _, r := range s {
		if termtext.Unsafe(r) {
			return fmt.Errorf("%s keeps control character %U: %q", field, r, s)
		}
	}
	return nil
}
