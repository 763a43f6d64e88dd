package slurmext

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrBadSacct means sacct output cannot be read: a line with the wrong
// number of columns, a missing job id, or a field list without JobID or
// JobIDRaw.
var ErrBadSacct = errors.New("malformed sacct output")

// SacctFormat is the --format list gpuprof asks sacct for, in order; every
// name exists in Slurm 22.05 (sacct --helpformat). Run sacct as
//
//	SLURM_TIME_FORMAT=%s sacct -a -X -P --format=<SacctFormat> -S … -E …
//
// -X leaves out steps (they would be skipped anyway), -P separates fields
// with '|', and SLURM_TIME_FORMAT=%s prints times as seconds since 1970, so
// that the sacct host's time zone does not matter. sacct has no restart
// count column; the JSON output has one.
const SacctFormat = "JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS," +
	"Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,DerivedExitCode," +
	"NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster"

// SacctFields returns the names in SacctFormat, a new slice each call.
func SacctFields() []string { return strings.Split(SacctFormat, ",") }

// DefaultMaxSacctLine bounds one record of sacct text; a longer line is
// skipped with a *LineError, never held in memory whole.
const DefaultMaxSacctLine = 1 << 20

// maxJoinedLines bounds how many physical lines one record may span (a job
// name with newlines, see SacctReader).
const maxJoinedLines = 64

// SacctOptions adjusts a SacctReader.
type SacctOptions struct {
	// Cluster is the cluster of every record when the fields have no
	// Cluster column, or it is empty on a line.
	Cluster string
	// Location is the time zone of times printed without one (sacct's
	// default format is the local time of the host that ran it); nil means
	// UTC. Not needed with SLURM_TIME_FORMAT=%s.
	Location *time.Location
	// MaxLineBytes bounds one record; 0 means DefaultMaxSacctLine.
	MaxLineBytes int
}

// LineError reports a line of sacct text that was skipped. Next returns it
// and carries on with the next line on the following call, so a caller can
// count and log skipped lines and still import the rest.
type LineError struct {
	Line int // 1-based number of the (first) physical line
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("sacct line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// sacctColumn identifies a column SacctReader understands.
type sacctColumn int

const (
	colJobID sacctColumn = iota
	colJobIDRaw
	colJobName
	colUser
	colUID
	colAccount
	colPartition
	colQOS
	colSubmit
	colEligible
	colStart
	colEnd
	colTimelimit
	colState
	colExitCode
	colDerivedExitCode
	colNodeList
	colNNodes
	colNCPUS
	colReqTRES
	colAllocTRES
	colReason
	colCluster
	numSacctColumns
)

// sacctColumnOf maps a lower-cased sacct field name to its column.
func sacctColumnOf(name string) (sacctColumn, bool) {
	switch name {
	case "jobid":
		return colJobID, true
	case "jobidraw":
		return colJobIDRaw, true
	case "jobname":
		return colJobName, true
	case "user":
		return colUser, true
	case "uid":
		return colUID, true
	case "account":
		return colAccount, true
	case "partition":
		return colPartition, true
	case "qos":
		return colQOS, true
	case "submit":
		return colSubmit, true
	case "eligible":
		return colEligible, true
	case "start":
		return colStart, true
	case "end":
		return colEnd, true
	case "timelimit", "timelimitraw":
		return colTimelimit, true
	case "state":
		return colState, true
	case "exitcode":
		return colExitCode, true
	case "derivedexitcode":
		return colDerivedExitCode, true
	case "nodelist":
		return colNodeList, true
	case "nnodes", "allocnodes":
		return colNNodes, true
	case "ncpus", "alloccpus":
		return colNCPUS, true
	case "reqtres":
		return colReqTRES, true
	case "alloctres":
		return colAllocTRES, true
	case "reason":
		return colReason, true
	case "cluster":
		return colCluster, true
	}
	return 0, false
}

// SacctReader reads the records of `sacct -P` (or -p) text one at a time.
//
// The columns are those of fields, in order, as given to --format (names
// are matched without regard to case; unknown names are read past, and
// Elapsed is not needed: JobRecord.Elapsed derives it). A line equal to
// the field names is a header and is skipped, wherever it is, so output with
// and without --noheader, and several outputs concatenated, all work. A
// first line (header or not) with one '|' too many at its end selects -p
// (--parsable) output, whose lines end with a '|'.
//
// sacct does not escape the separator or line breaks inside values, and a
// job name may contain both:
//   - a line with k surplus columns is read with the JobName column taking
//     k+1 columns joined by '|' (no other field gpuprof asks for can hold a
//     '|'); without a JobName column such a line is an error.
//   - a line with too few columns that reaches at least up to the JobName
//     column is joined with the following lines (up to 64, and as long as
//     each is short as well) when that yields enough columns: the name had
//     a line break. A short last line is a truncated file: a *LineError.
//
// Step lines ("123.batch", "123.0") are skipped and counted (StepsSkipped).
// With -D, every run of a requeued job is a line of its own (State REQUEUED,
// then the final run), all with the same JobIDRaw, oldest first.
// Memory is bounded by MaxLineBytes whatever the input.
type SacctReader struct {
	br      *bufio.Reader
	opts    SacctOptions
	cols    [numSacctColumns]int // index into the fields of a line, -1 when absent
	nFields int
	names   []string // lower-cased field names, for header detection

	line     int    // physical lines read so far
	started  bool   // the first line was examined for -p output
	trailing bool   // -p output: every line ends with '|'
	buf      []byte // the record being assembled
	pushback []byte // a line read ahead and not used
	havePush bool
	split    []string
	problems notes
	steps    int
	deferred *LineError // an overlong line met while joining, reported next
	err      error      // sticky: the underlying reader failed
}

// NewSacctReader returns a reader of sacct text in r whose columns are
// fields. A field list without JobID or JobIDRaw makes every Next fail with
// an error wrapping ErrBadSacct.
func NewSacctReader(r io.Reader, fields []string, opts SacctOptions) *SacctReader {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxSacctLine
	}
	sr := &SacctReader{
		br:      bufio.NewReaderSize(r, 64<<10),
		opts:    opts,
		nFields: len(fields),
	}
	for i := range sr.cols {
		sr.cols[i] = -1
	}
	for i, f := range fields {
		// "JobName%30": a width only matters without -P.
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(f)), "%")
		sr.names = append(sr.names, name)
		if c, ok := sacctColumnOf(name); ok && sr.cols[c] < 0 {
			sr.cols[c] = i
		}
	}
	if sr.cols[colJobID] < 0 && sr.cols[colJobIDRaw] < 0 {
		sr.err = fmt.Errorf("sacct fields %s: neither JobID nor JobIDRaw: %w",
			quoteShort(strings.Join(fields, ",")), ErrBadSacct)
	}
	return sr
}

// Problems returns notes on malformed values of the record the last Next
// returned ("State: …"); those fields keep their unknown value. The slice is
// valid until the next call of Next.
func (r *SacctReader) Problems() []string { return r.problems }

// StepsSkipped returns how many step lines Next has skipped so far.
func (r *SacctReader) StepsSkipped() int { return r.steps }

// Next returns the next job record. It returns io.EOF at the end, a
// *LineError for a line it skipped (call Next again to go on), and any other
// error when the input cannot be read further (every later call returns it
// again).
func (r *SacctReader) Next() (JobRecord, error) {
	r.problems = r.problems[:0]
	for {
		if r.err != nil {
			return JobRecord{}, r.err
		}
		if d := r.deferred; d != nil {
			r.deferred = nil
			return JobRecord{}, d
		}
		first := r.line + 1
		line, err := r.readLine()
		switch {
		case errors.Is(err, io.EOF):
			return JobRecord{}, io.EOF
		case errors.Is(err, ErrTooLarge):
			return JobRecord{}, &LineError{Line: first, Err: err}
		case err != nil:
			r.err = fmt.Errorf("read sacct output: %w", err)
			return JobRecord{}, r.err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.isHeader(line) {
			// Also further down: several sacct runs may be concatenated.
			continue
		}
		fields, lerr := r.record(line)
		if lerr != nil {
			return JobRecord{}, &LineError{Line: first, Err: lerr}
		}
		rec, isStep, rerr := r.build(fields)
		switch {
		case rerr != nil:
			return JobRecord{}, &LineError{Line: first, Err: rerr}
		case isStep:
			r.steps++
			continue
		}
		return rec, nil
	}
}

// readLine returns the next physical line without its line break, copied
// into r.buf. A line longer than MaxLineBytes is consumed and reported as an
// error wrapping ErrTooLarge. At the end of input it returns io.EOF.
func (r *SacctReader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	if r.havePush {
		r.havePush = false
		r.line++
		r.buf = append(r.buf, r.pushback...)
		return r.buf, nil
	}
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(r.buf)+len(chunk) > r.opts.MaxLineBytes+1 { // +1: the '\n'
				tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.buf) == 0 && !tooLong {
				return nil, io.EOF
			}
		case err != nil:
			return nil, err
		}
		r.line++
		if tooLong {
			return nil, fmt.Errorf("line longer than %d bytes: %w", r.opts.MaxLineBytes, ErrTooLarge)
		}
		line := bytes.TrimSuffix(r.buf, []byte{'\n'})
		return bytes.TrimSuffix(line, []byte{'\r'}), nil
	}
}

// isHeader reports whether line is the header sacct prints (the field
// names). On the first line it also notes whether the output is -p, whose
// lines end with a '|'; without a header, the first data line decides that.
func (r *SacctReader) isHeader(line []byte) bool {
	first := !r.started
	r.started = true
	if first && r.countCols(line) == r.nFields+1 && bytes.HasSuffix(line, []byte{'|'}) {
		r.trailing = true
	}
	// Cheap test first: a data line starts with a job id, not a field name.
	name0 := r.names[0]
	if len(line) < len(name0) || !strings.EqualFold(string(line[:len(name0)]), name0) {
		return false
	}
	cols := strings.Split(string(line), "|")
	if r.trailing && len(cols) == r.nFields+1 && cols[r.nFields] == "" {
		cols = cols[:r.nFields]
	}
	if len(cols) != r.nFields {
		return false
	}
	for i, c := range cols {
		if !strings.EqualFold(strings.TrimSpace(c), r.names[i]) {
			return false
		}
	}
	return true
}

// record splits line (joining the lines that follow when a job name held a
// line break) into exactly nFields values.
func (r *SacctReader) record(line []byte) ([]string, error) {
	n := r.countCols(line)
	nameCol := r.cols[colJobName]
	if n < r.nFields && nameCol >= 0 && n > nameCol {
		// Keep a copy of what we have: readLine reuses r.buf.
		joined := append([]byte(nil), line...)
		for range maxJoinedLines {
			next, err := r.readAhead()
			if err != nil {
				break
			}
			m := r.countCols(next)
			if m >= r.nFields || len(joined)+1+len(next) > r.opts.MaxLineBytes {
				r.unread(next)
				break
			}
			joined = append(append(joined, '\n'), next...)
			if n += m - 1; n >= r.nFields {
				break
			}
		}
		line = joined
	}
	s := string(line)
	if r.trailing {
		s = strings.TrimSuffix(s, "|")
	}
	r.split = r.split[:0]
	for f := range strings.SplitSeq(s, "|") {
		r.split = append(r.split, f)
	}
	switch {
	case len(r.split) == r.nFields:
		return r.split, nil
	case len(r.split) < r.nFields:
		return nil, fmt.Errorf("%d of %d columns (truncated line?): %w", len(r.split), r.nFields, ErrBadSacct)
	case nameCol < 0:
		return nil, fmt.Errorf("%d columns, want %d: %w", len(r.split), r.nFields, ErrBadSacct)
	}
	// The job name held '|': it takes the surplus columns.
	surplus := len(r.split) - r.nFields
	name := strings.Join(r.split[nameCol:nameCol+surplus+1], "|")
	r.split = append(r.split[:nameCol+1], r.split[nameCol+surplus+1:]...)
	r.split[nameCol] = name
	return r.split, nil
}

// countCols counts the '|'-separated columns of a line as record will.
func (r *SacctReader) countCols(line []byte) int {
	n := bytes.Count(line, []byte{'|'}) + 1
	if r.trailing && bytes.HasSuffix(line, []byte{'|'}) {
		n--
	}
	return n
}

// readAhead reads the next physical line for a join; EOF and overlong lines
// end the join (an overlong line is left for Next to report).
func (r *SacctReader) readAhead() ([]byte, error) {
	line, err := r.readLine()
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			// Already consumed, so it cannot be pushed back: report it
			// after the record being joined.
			r.deferred = &LineError{Line: r.line, Err: err}
		} else if !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("read sacct output: %w", err)
		}
		return nil, err
	}
	return append([]byte(nil), line...), nil
}

// unread returns a line read ahead so that the next readLine gives it again.
func (r *SacctReader) unread(line []byte) {
	r.pushback = append(r.pushback[:0], line...)
	r.havePush = true
	r.line--
}

// build turns the values of one line into a record; isStep reports a step
// line, which the caller skips.
func (r *SacctReader) build(f []string) (rec JobRecord, isStep bool, err error) {
	get := func(c sacctColumn) string {
		if i := r.cols[c]; i >= 0 {
			return f[i]
		}
		return ""
	}
	raw := strings.TrimSpace(get(colJobIDRaw))
	disp := strings.TrimSpace(get(colJobID))
	idText := disp
	if idText == "" {
		idText = raw
	}
	parts, err := ParseJobID(idText)
	if err != nil {
		return JobRecord{}, false, err
	}
	if parts.IsStep() || strings.Contains(raw, ".") {
		return JobRecord{}, true, nil
	}
	switch {
	case raw != "" && !ValidJobID(raw):
		return JobRecord{}, false, fmt.Errorf("JobIDRaw %s is not a job id: %w", quoteShort(raw), ErrBadJobID)
	case raw == "" && (parts.ArrayTaskID >= 0 || parts.HetOffset >= 0):
		// The raw id of an array task or het component is its own job id,
		// which only JobIDRaw gives.
		return JobRecord{}, false, fmt.Errorf("JobID %s needs the JobIDRaw column: %w", quoteShort(disp), ErrBadSacct)
	case raw == "":
		raw = parts.Base
	}
	rec = JobRecord{
		JobID: raw, DisplayID: parts.Job, ArrayTaskID: parts.ArrayTaskID,
		ArrayTaskSpec: parts.ArrayTaskSpec, HetOffset: parts.HetOffset,
		UID: -1, CancelledBy: -1, Source: "sacct",
	}
	if parts.ArrayTaskID >= 0 || parts.ArrayTaskSpec != "" {
		rec.ArrayJobID = parts.Base
	}
	if parts.HetOffset >= 0 {
		rec.HetJobID = parts.Base
	}

	n := &r.problems
	rec.Cluster = n.text("Cluster", get(colCluster), maxFieldBytes)
	if rec.Cluster == "" {
		rec.Cluster = r.opts.Cluster
	}
	rec.Name = n.text("JobName", get(colJobName), maxFieldBytes)
	rec.User = n.text("User", get(colUser), maxFieldBytes)
	rec.UID = n.id("UID", get(colUID))
	rec.Account = n.text("Account", get(colAccount), maxFieldBytes)
	rec.Partition = n.text("Partition", get(colPartition), maxFieldBytes)
	rec.QOS = n.text("QOS", get(colQOS), maxFieldBytes)
	rec.Reason = n.text("Reason", get(colReason), maxFieldBytes)
	rec.Submit = r.time(n, "Submit", get(colSubmit))
	rec.Eligible = r.time(n, "Eligible", get(colEligible))
	rec.Start = r.time(n, "Start", get(colStart))
	rec.End = r.time(n, "End", get(colEnd))
	if v := get(colState); v != "" {
		st, by, err := ParseState(v)
		if err != nil {
			n.add("State", "%v", err)
		}
		rec.State, rec.CancelledBy = st, by
	}
	d, unlimited, err := ParseDuration(get(colTimelimit))
	if err != nil {
		n.add("Timelimit", "%v", err)
	}
	rec.TimeLimit, rec.Unlimited = d, unlimited
	rec.ExitStatus, rec.ExitSignal = n.exitCode("ExitCode", get(colExitCode))
	rec.DerivedStatus, rec.DerivedSignal = n.exitCode("DerivedExitCode", get(colDerivedExitCode))
	rec.NodeCount = n.count("NNodes", get(colNNodes))
	rec.CPUs = n.count("NCPUS", get(colNCPUS))
	if nl := get(colNodeList); nl != "None assigned" {
		rec.NodeList = n.text("NodeList", nl, maxFieldBytes)
		if rec.NodeList != "" {
			if _, err := parseHostlist(rec.NodeList); err != nil {
				n.add("NodeList", "%v", err)
			}
		}
	}
	rec.ReqTRES = r.tres(n, "ReqTRES", get(colReqTRES))
	rec.AllocTRES = r.tres(n, "AllocTRES", get(colAllocTRES))
	rec.ReqGPUs, rec.ReqGPUType, rec.ReqShards = GPUsFromTRES(rec.ReqTRES)
	return rec, false, nil
}

// time parses a time column, noting a malformed value.
func (r *SacctReader) time(n *notes, name, v string) time.Time {
	t, err := ParseSlurmTime(v, r.opts.Location)
	if err != nil {
		n.add(name, "%v", err)
	}
	return t
}

// tres sanitises a TRES column and notes one that does not parse; the text
// is kept either way, since GPUsFromTRES reads what it can.
func (r *SacctReader) tres(n *notes, name, v string) string {
	v = n.text(name, v, maxFieldBytes)
	if err := checkTRES(v); err != nil {
		n.add(name, "%v", err)
	}
	return v
}
