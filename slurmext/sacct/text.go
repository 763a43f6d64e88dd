package sacct

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/gpuprof/gpuprof/slurmext"
	"io"
	"math"
	"strings"
	"time"
)

// ErrMalformed means sacct output cannot be read: a line with the wrong
// number of columns, a missing job id, or a field list without JobID or
// JobIDRaw.
var ErrMalformed = errors.New("malformed sacct output")

// ErrLayout means sacct text does not fit the columns it is read with
// (see LayoutError): the whole input is refused, not read line by line. It
// wraps ErrMalformed.
var ErrLayout = fmt.Errorf("sacct text does not fit its columns: %w", ErrMalformed)

// Format is the --format list gpuprof asks sacct for, in order; every
// name exists in Slurm 22.05 (sacct --helpformat, and SEEN on 22.05.8). Run
// sacct as
//
//	SLURM_TIME_FORMAT=%s sacct -a -P --format=<Format> -S … -E …
//
// -P separates fields with '|', the header line names the columns (the
// reader maps them by name), and SLURM_TIME_FORMAT=%s prints times as
// seconds since 1970, so that the sacct host's time zone does not matter.
// Step lines are asked for (no -X) because TRESUsageInMax/TRESUsageInAve,
// where Slurm's GPU accounting fills them, are step values: the job line has
// them empty (SEEN on 22.05.8). TotalCPU and MaxRSS are step values too
// (see slurmext.HostUsage); ReqMem is the job's memory request. sacct has no restart
// count column; the JSON output has one.
const Format = "JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS," +
	"Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,DerivedExitCode," +
	"NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster,TRESUsageInMax,TRESUsageInAve," +
	"TotalCPU,MaxRSS,ReqMem"

// Fields returns the names in Format, a new slice each call.
func Fields() []string { return strings.Split(Format, ",") }

// earlierSacctFormats are the SacctFormats of earlier gpuprofs, newest
// first: before the CPU and host-memory columns (TotalCPU, MaxRSS, ReqMem),
// and before the GPU usage columns. Header-less text read with gpuprof's own
// columns may have any of these layouts; their column counts differ, so the
// probe tells them apart.
var earlierSacctFormats = []string{
	"JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS," +
		"Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,DerivedExitCode," +
		"NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster,TRESUsageInMax,TRESUsageInAve",
	"JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS," +
		"Submit,Eligible,Start,End,Elapsed,Timelimit,State,ExitCode,DerivedExitCode," +
		"NodeList,NNodes,NCPUS,ReqTRES,AllocTRES,Reason,Cluster",
}

// ParseColumns reads a column list as --format takes it ("JobIDRaw,
// State,JobName%30"): names separated by commas, each a sacct field name
// with an optional %width. The list must name JobID or JobIDRaw. Errors wrap
// ErrMalformed.
func ParseColumns(list string) ([]string, error) {
	var fields []string
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if !fieldNameShaped(f) {
			return nil, fmt.Errorf("column list %s: %s is not a sacct field name: %w", slurmext.QuoteShort(list), slurmext.QuoteShort(f), ErrMalformed)
		}
		fields = append(fields, f)
	}
	if _, err := newSacctLayout(fields, false); err != nil {
		return nil, err
	}
	return fields, nil
}

// DefaultMaxLine bounds one record of sacct text; a longer line is
// skipped with a *LineError, never held in memory whole.
const DefaultMaxLine = 1 << 20

// maxJoinedLines bounds how many physical lines one record may span (a job
// name with newlines, see Reader).
const maxJoinedLines = 64

// The probe (see Reader) looks at up to probeLines non-blank lines or
// probeBytes bytes, whichever comes first, of each part of the input.
const (
	probeLines = 100
	probeBytes = 1 << 20
)

// Options adjusts a Reader.
type Options struct {
	// Cluster is the cluster of every record when the fields have no
	// Cluster column, or it is empty on a line.
	Cluster string
	// Location is the time zone of times printed without one (sacct's
	// default format is the local time of the host that ran it); nil means
	// UTC. Not needed with SLURM_TIME_FORMAT=%s.
	Location *time.Location
	// MaxLineBytes bounds one record; 0 means DefaultMaxLine.
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

// LayoutError says that sacct text does not fit the columns it is read with:
// fewer than half of the first records of a part of the input (the whole
// input, or what follows a header line) have exactly the columns expected
// and values of the right kind (a job id, a state, a time, a limit) where
// the columns say they are. It wraps ErrLayout.
type LayoutError struct {
	Line    int    // first line of the part that does not fit
	Columns string // the columns it was read with, '|'-separated
	// Source says where the columns came from: "header line N", "the
	// columns given", or "gpuprof's own columns".
	Source string
	Reason string // what did not fit
	First  string // the part's first non-blank line, quoted and shortened
}

func (e *LayoutError) Error() string {
	declare := ""
	if e.NoHeader() {
		// Text without a header is read in an assumed order: say first
		// that the order (or the set) is what is wrong, and the way out.
		declare = "its columns are in another order or another set than those it is read with: " +
			"declare them in their order, as the sacct --format that wrote it named them (gpuprof import sacct --columns LIST), or keep sacct's header line; "
	}
	return fmt.Sprintf("sacct text from line %d does not fit the columns it is read with (%s): %s%s; expected %d columns %s; line %d is %s",
		e.Line, e.Source, declare, e.Reason, strings.Count(e.Columns, "|")+1, quoteUpTo(e.Columns, 300), e.Line, e.First)
}

// NoHeader reports whether the text that did not fit had no header line, so
// its columns were assumed rather than read.
func (e *LayoutError) NoHeader() bool { return strings.HasPrefix(e.Source, "no header line") }

func (e *LayoutError) Unwrap() error { return ErrLayout }

// quoteUpTo is slurmext.QuoteShort with another bound: a layout error quotes a whole
// column list and the start of a line.
func quoteUpTo(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%+q", s)
	}
	return fmt.Sprintf("%+q... (%d bytes)", s[:n], len(s))
}

// sacctColumn identifies a column Reader understands.
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
	colElapsed
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
	colTRESUsageInMax
	colTRESUsageInAve
	colTotalCPU
	colMaxRSS
	colReqMem
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
	case "elapsed":
		return colElapsed, true
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
	case "tresusageinmax":
		return colTRESUsageInMax, true
	case "tresusageinave":
		return colTRESUsageInAve, true
	case "totalcpu":
		return colTotalCPU, true
	case "maxrss":
		return colMaxRSS, true
	case "reqmem":
		return colReqMem, true
	}
	return 0, false
}

// fieldNameShaped reports whether s looks like a sacct field name as
// --format takes it and a header prints it: a letter, then letters, digits
// or '_', then optionally '%' and a width.
func fieldNameShaped(s string) bool {
	name, width, hasWidth := strings.Cut(s, "%")
	if name == "" || len(name) > 64 || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	if hasWidth {
		if _, ok := slurmext.ParseDigits(width, 1<<16); !ok {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sacctLayout is a list of columns: from the field list given, or from a
// header line.
type sacctLayout struct {
	cols    [numSacctColumns]int // index into the fields of a line, -1 when absent
	nFields int
	names   string // the column names, '|'-separated, for messages
	source  string // where they came from, for LayoutError
	// trailing is -p (--parsable) output, whose lines end with a '|';
	// trailingKnown says whether a header (or a probe) decided it.
	trailing      bool
	trailingKnown bool
}

// newSacctLayout maps field names to columns; names are matched without
// regard to case, "%width" suffixes are dropped and unknown names are read
// past. A list without JobID or JobIDRaw is an error wrapping ErrMalformed.
func newSacctLayout(fields []string, fromHeader bool) (sacctLayout, error) {
	l := sacctLayout{nFields: len(fields)}
	for i := range l.cols {
		l.cols[i] = -1
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		name, _, _ := strings.Cut(strings.TrimSpace(f), "%")
		names[i] = name
		if c, ok := sacctColumnOf(strings.ToLower(name)); ok && l.cols[c] < 0 {
			l.cols[c] = i
		}
	}
	l.names = strings.Join(names, "|")
	if l.cols[colJobID] < 0 && l.cols[colJobIDRaw] < 0 {
		what := "sacct fields"
		if fromHeader {
			what = "sacct header"
		}
		return l, fmt.Errorf("%s %s: neither JobID nor JobIDRaw: %w", what, quoteUpTo(strings.Join(fields, ","), 400), ErrMalformed)
	}
	return l, nil
}

// hasUsage reports whether the layout has a column of step usage, so that
// step lines carry readings to fold into their job.
func (l *sacctLayout) hasUsage() bool {
	return l.cols[colTRESUsageInMax] >= 0 || l.cols[colTRESUsageInAve] >= 0 ||
		l.cols[colTotalCPU] >= 0 || l.cols[colMaxRSS] >= 0
}

// Reader reads the records of `sacct -P` (or -p) text one at a time.
//
// Columns are mapped by name from sacct's header line, in any order and any
// subset that names JobID or JobIDRaw (names match without regard to case,
// "JobName%30" widths are dropped, unknown columns are read past; Elapsed
// is only checked: slurmext.JobRecord.Elapsed derives it). A line is a header when
// every '|'-separated column is shaped like a field name and one of them is
// a column the reader knows; one that names neither JobID nor JobIDRaw
// stops the reader with a *LayoutError. A header further down starts a new
// part with its own columns, so several sacct outputs concatenated, each
// with its own --format, are read as one. Text before any header (all of
// it, with --noheader) is read with the field list given to
// NewReader; nil means gpuprof's own (Format, or the one before
// it, whichever fits). A part whose header ends in a '|' is -p
// (--parsable) output, whose lines end in one; without a header, the probe
// finds out which of -P and -p fits.
//
// Before it returns anything of a part, the reader probes it: it reads
// ahead up to 100 lines (at most 1 MiB) and checks that the
// records there have exactly the columns expected, a job id where the job
// id is, and a state, times, limits, exit codes and counts of the right
// kind where those columns are (at least half of them, and at least one,
// must). When they do not, Next returns a
// *LayoutError (wrapping ErrLayout) for that part and for every later
// call: text in another layout is refused, not read into wrong fields. In a
// part that fits, a line that does not is skipped with a *LineError, and a
// malformed value is noted (Problems) and left unknown. Empty input, or a
// header alone, holds no jobs.
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
// Step lines ("123.batch", "123.0") are not records; StepsSkipped counts
// them. When the columns include TRESUsageInMax or TRESUsageInAve, step
// lines carry Slurm's GPU readings (gres/gpumem, gres/gpuutil), which are
// folded into the job line before them (the same JobIDRaw, else the same
// JobID): SlurmGPUMem is the most memory of any step, and SlurmGPUUtil the
// highest mean utilisation of any step. The highest, not a mean over steps:
// the work of a job runs in one step (the batch script or an srun step)
// while the extern step, and the batch step of an srun job, idle at 0%,
// which a mean would mix in. A reading that is malformed in any step
// leaves the job's unknown. With such columns a job is returned once the
// line after its steps has been read, so a *LineError of a later line may
// come before it.
//
// With -D, every run of a requeued job is a line of its own (State REQUEUED,
// then the final run), all with the same JobIDRaw, oldest first.
// Memory is bounded by MaxLineBytes whatever the input.
type Reader struct {
	br   *bufio.Reader
	opts Options

	layout sacctLayout // the columns lines are read with now
	// candidates are the layouts the first part may have when it has no
	// header: the fields given, or gpuprof's current and earlier ones.
	candidates []sacctLayout
	firstPart  bool
	needProbe  bool
	probing    bool // a probe's dry run: read the window only
	// What the last line scanned was like, for the probe.
	misfit     string // why it does not fit its columns; "" when it does
	misfitCols int    // its column count, when that was why
	probeFirst string // the first non-blank line of a probe window
	probeNo    int

	queue   []queuedLine // lines read and not yet consumed (the probe window)
	qhead   int
	srcLine int   // lines read from br
	srcErr  error // br failed
	srcEOF  bool

	line     int // number of the last line consumed
	split    []string
	cur      slurmext.Notes // notes of the record being built
	problems slurmext.Notes // notes of the record Next returned last
	steps    int
	err      error // sticky: the input cannot be read on

	// With usage columns, the job read last is held until its steps have
	// passed.
	pending      slurmext.JobRecord
	havePending  bool
	pendingNotes slurmext.Notes
	memBad       bool // a reading of the pending job was malformed
	utilBad      bool

	// CPU and host-memory accounting (slurmext.HostUsage): of the line built last
	// (with what was malformed in it), of the job held, and of the record
	// Next returned last.
	lu           lineUsage
	pendingUsage slurmext.HostUsage
	stepID       string // the JobID of the step line read last ("7.batch")
	cpuSteps     int    // steps of the held job that reported a TotalCPU
	cpuBad       bool   // a TotalCPU of the held job or its steps was malformed
	rssBad       bool   // a memory peak of the held job or its steps was malformed
	// pendingSteps counts the held job's step lines; pendingCPUCol and
	// pendingRSSCol say its layout has TotalCPU and a memory peak
	// (MaxRSS, TRESUsageInMax): slurmext.HostUsage.TotalCPURead, MemPeakRead.
	pendingSteps                 int
	pendingCPUCol, pendingRSSCol bool
	usage                        slurmext.HostUsage
}

// lineUsage is the slurmext.HostUsage of one sacct line and which of its values were
// malformed.
type lineUsage struct {
	slurmext.HostUsage
	cpuBad, rssBad bool
}

// queuedLine is a physical line read ahead: its number, its text without the
// line break, or slurmext.ErrTooLarge.
type queuedLine struct {
	no   int
	text []byte
	err  error
}

// NewReader returns a reader of sacct text in r. fields are the
// columns of text before any header line (see Reader); nil means
// gpuprof's own. A field list without JobID or JobIDRaw makes every Next
// fail with an error wrapping ErrMalformed.
func NewReader(r io.Reader, fields []string, opts Options) *Reader {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLine
	}
	sr := &Reader{
		br:        bufio.NewReaderSize(r, 64<<10),
		opts:      opts,
		firstPart: true,
		needProbe: true,
	}
	if fields == nil {
		for i, format := range append([]string{Format}, earlierSacctFormats...) {
			l, err := newSacctLayout(strings.Split(format, ","), false)
			if err != nil {
				panic(err) // a constant above is wrong
			}
			l.source = "no header line: gpuprof's own columns"
			if i > 0 {
				l.source = "no header line: gpuprof's own columns, current or earlier"
			}
			sr.candidates = append(sr.candidates, l)
		}
	} else {
		l, err := newSacctLayout(fields, false)
		if err != nil {
			sr.err = err
		}
		l.source = "no header line: the columns given"
		sr.candidates = append(sr.candidates, l)
	}
	sr.layout = sr.candidates[0]
	return sr
}

// Problems returns notes on malformed values of the record the last Next
// returned ("State: …"); those fields keep their unknown value. The slice is
// valid until the next call of Next.
func (r *Reader) Problems() []string { return r.problems }

// Usage returns the CPU and host-memory accounting of the record the last
// Next returned (see slurmext.HostUsage); the zero slurmext.HostUsage, every value unknown,
// after an error.
func (r *Reader) Usage() slurmext.HostUsage { return r.usage }

// StepsSkipped returns how many step lines Next has read past so far.
func (r *Reader) StepsSkipped() int { return r.steps }

// Next returns the next job record. It returns io.EOF at the end, a
// *LineError for a line it skipped (call Next again to go on), a
// *LayoutError when a part of the input does not fit its columns, and any
// other error when the input cannot be read further; after a *LayoutError or
// such an error, every later call returns it again.
func (r *Reader) Next() (slurmext.JobRecord, error) {
	var rec slurmext.JobRecord
	for {
		if r.err == nil && r.needProbe {
			r.needProbe = false
			if err := r.probe(); err != nil {
				r.err = err
			}
		}
		if r.err != nil {
			if r.havePending {
				return r.takePending(), nil
			}
			r.problems, r.usage = r.problems[:0], slurmext.HostUsage{}
			return slurmext.JobRecord{}, r.err
		}
		kind, err := r.scan(&rec)
		switch kind {
		case scanEOF:
			if r.havePending {
				return r.takePending(), nil
			}
			r.problems, r.usage = r.problems[:0], slurmext.HostUsage{}
			return slurmext.JobRecord{}, io.EOF
		case scanFatal:
			r.err = err
		case scanHeader:
			// A new part: the steps of the job held cannot follow.
			if r.havePending {
				return r.takePending(), nil
			}
		case scanSkip:
			r.problems, r.usage = r.problems[:0], slurmext.HostUsage{}
			return slurmext.JobRecord{}, err
		case scanStep:
			r.steps++
			if r.havePending && r.stepOfPending(&rec) {
				r.fold(&rec)
			}
		case scanJob:
			if !r.layout.hasUsage() {
				r.problems = append(r.problems[:0], r.cur...)
				r.finish(&rec, r.lu.jobUsage())
				return rec, nil
			}
			if !r.havePending {
				r.hold(&rec)
				continue
			}
			out := r.takePending()
			r.hold(&rec)
			return out, nil
		}
	}
}

// hold keeps a job until its step lines have been read.
func (r *Reader) hold(rec *slurmext.JobRecord) {
	r.pending, r.havePending = *rec, true
	r.pendingNotes = append(r.pendingNotes[:0], r.cur...)
	r.memBad, r.utilBad = r.usageBad(rec)
	// A job line's TotalCPU is not the job's: with steps it is their sum,
	// and without them (sacct -X) it is 00:00:00 whatever the job used
	// (SEEN on 22.05.8). The job's is the sum of its steps', below.
	r.pendingUsage = r.lu.jobUsage()
	r.pendingUsage.TotalCPU, r.pendingUsage.TotalCPUValid = 0, false
	r.cpuSteps, r.cpuBad, r.rssBad = 0, r.lu.cpuBad, r.lu.rssBad
	r.pendingSteps = 0
	r.pendingCPUCol = r.layout.cols[colTotalCPU] >= 0
	r.pendingRSSCol = r.layout.cols[colMaxRSS] >= 0 || r.layout.cols[colTRESUsageInMax] >= 0
}

// usageBad reports which of the job line's own readings were malformed
// (build notes them and leaves them invalid).
func (r *Reader) usageBad(rec *slurmext.JobRecord) (mem, util bool) {
	for _, n := range r.cur {
		if strings.HasPrefix(n, "TRESUsageInMax:") {
			mem = true
		}
		if strings.HasPrefix(n, "TRESUsageInAve:") {
			util = true
		}
	}
	return mem, util
}

// takePending returns the job held, with its notes, and makes a malformed
// step reading the job's unknown.
func (r *Reader) takePending() slurmext.JobRecord {
	r.havePending = false
	rec := r.pending
	if r.memBad {
		rec.SlurmGPUMem, rec.SlurmGPUMemValid = 0, false
	}
	if r.utilBad {
		rec.SlurmGPUUtil, rec.SlurmGPUUtilValid = 0, false
	}
	r.problems = append(r.problems[:0], r.pendingNotes...)
	u := r.pendingUsage
	if r.cpuBad || r.cpuSteps == 0 {
		u.TotalCPU, u.TotalCPUValid = 0, false
	}
	if r.rssBad {
		u.MemPeak, u.MemPeakValid = 0, false
	}
	// What the import read: the job's steps (its line's TotalCPU is not
	// the job's) in a layout with the column, each well-formed; the peak
	// also from the job line's own value.
	u.TotalCPURead = r.pendingCPUCol && r.pendingSteps > 0 && !r.cpuBad
	u.MemPeakRead = r.pendingRSSCol && (r.pendingSteps > 0 || u.MemPeakValid) && !r.rssBad
	r.finish(&rec, u)
	return rec
}

// finish makes u the slurmext.HostUsage of the record Next returns now.
func (r *Reader) finish(rec *slurmext.JobRecord, u slurmext.HostUsage) {
	rec.Usage, r.usage = u, u
}

// stepOfPending reports whether a step line (JobID: the raw job id before
// the '.', DisplayID: the JobID before the '.') belongs to the job held.
func (r *Reader) stepOfPending(step *slurmext.JobRecord) bool {
	if step.JobID != "" {
		return step.JobID == r.pending.JobID
	}
	return step.DisplayID == r.pending.DisplayID
}

// fold takes the readings of a step into the job held: the highest of each.
func (r *Reader) fold(step *slurmext.JobRecord) {
	p := &r.pending
	r.pendingSteps++
	if step.SlurmGPUMemValid && (!p.SlurmGPUMemValid || step.SlurmGPUMem > p.SlurmGPUMem) {
		p.SlurmGPUMem, p.SlurmGPUMemValid = step.SlurmGPUMem, true
	}
	if step.SlurmGPUUtilValid && (!p.SlurmGPUUtilValid || step.SlurmGPUUtil > p.SlurmGPUUtil) {
		p.SlurmGPUUtil, p.SlurmGPUUtilValid = step.SlurmGPUUtil, true
	}
	// CPU time adds up over the steps; the memory peak is the highest of any
	// step (MaxRSS is already the largest task's).
	pu, su := &r.pendingUsage, &r.lu
	if su.TotalCPUValid {
		if pu.TotalCPU > math.MaxInt64-su.TotalCPU {
			r.cpuBad = true
		}
		pu.TotalCPU += su.TotalCPU
		pu.TotalCPUValid = true
		r.cpuSteps++
	}
	if su.MemPeakValid && (!pu.MemPeakValid || su.MemPeak > pu.MemPeak) {
		pu.MemPeak, pu.MemPeakValid = su.MemPeak, true
	}
	r.cpuBad = r.cpuBad || su.cpuBad
	r.rssBad = r.rssBad || su.rssBad
	for _, n := range r.cur {
		if len(r.pendingNotes) < maxStepNotes {
			r.pendingNotes = append(r.pendingNotes, "step "+slurmext.QuoteShort(r.stepID)+": "+n)
		}
		if strings.HasPrefix(n, "TRESUsageInMax:") {
			r.memBad = true
		}
		if strings.HasPrefix(n, "TRESUsageInAve:") {
			r.utilBad = true
		}
	}
}

// maxStepNotes bounds the notes a job collects from its steps.
const maxStepNotes = 32

// scanKind is what scan met.
type scanKind int

const (
	scanJob    scanKind = iota
	scanStep            // a step line; the record holds its ids and readings
	scanHeader          // a header line; the layout is now its columns
	scanSkip            // a line that does not fit: a *LineError
	scanEOF
	scanFatal
)

// scan reads the next record (or header) into rec.
func (r *Reader) scan(rec *slurmext.JobRecord) (scanKind, error) {
	r.misfit, r.misfitCols = "", 0
	for {
		line, err := r.readLine()
		no := r.line
		switch {
		case errors.Is(err, io.EOF):
			return scanEOF, io.EOF
		case errors.Is(err, slurmext.ErrTooLarge):
			r.misfit = "longer than the line limit"
			return scanSkip, &LineError{Line: no, Err: err}
		case err != nil:
			return scanFatal, fmt.Errorf("read sacct output: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.probing && r.probeFirst == "" {
			r.probeFirst, r.probeNo = quoteUpTo(string(line), 80), no
		}
		if lay, isHeader, why := r.header(line, no); isHeader || why != "" {
			if r.probing {
				// The window ends where the next part begins.
				r.unread()
				return scanEOF, io.EOF
			}
			if why != "" {
				return scanFatal, &LayoutError{Line: no, Columns: string(line), Source: "header line " + fmt.Sprint(no),
					Reason: why, First: quoteUpTo(string(line), 80)}
			}
			r.layout, r.needProbe = lay, true
			return scanHeader, nil
		}
		fields, lerr := r.record(line)
		if lerr != nil {
			return scanSkip, &LineError{Line: no, Err: lerr}
		}
		isStep, berr := r.build(fields, rec)
		switch {
		case errors.Is(berr, slurmext.ErrTimeOrder):
			r.misfit = "time order"
			return scanSkip, &LineError{Line: no, Err: berr}
		case berr != nil:
			r.misfit = "job id"
			return scanSkip, &LineError{Line: no, Err: berr}
		case isStep:
			return scanStep, nil
		}
		return scanJob, nil
	}
}

// header tells a header line from a data line. isHeader comes with the
// header's layout; why is set for a line that is a header by its shape but
// names neither JobID nor JobIDRaw.
func (r *Reader) header(line []byte, no int) (lay sacctLayout, isHeader bool, why string) {
	// Cheap test first: a data line starts with a job id, a digit (or, for
	// a SLUID, an 's': those take the full test).
	if t := bytes.TrimLeft(line, " "); len(t) == 0 || !isLetter(t[0]) {
		return lay, false, ""
	}
	s := string(line)
	trailing := strings.HasSuffix(s, "|")
	s = strings.TrimSuffix(s, "|")
	cols := strings.Split(s, "|")
	known, hasID := 0, false
	for i, c := range cols {
		c = strings.TrimSpace(c)
		if !fieldNameShaped(c) {
			return lay, false, ""
		}
		cols[i] = c
		name, _, _ := strings.Cut(c, "%")
		if col, ok := sacctColumnOf(strings.ToLower(name)); ok {
			known++
			hasID = hasID || col == colJobID || col == colJobIDRaw
		}
	}
	if known == 0 {
		return lay, false, ""
	}
	if !hasID {
		if r.dataLine(s) {
			return lay, false, ""
		}
		return lay, false, "the header line names neither JobID nor JobIDRaw, so its lines cannot be told apart"
	}
	lay, _ = newSacctLayout(cols, true) // it names a job id column
	lay.trailing, lay.trailingKnown = trailing, true
	lay.source = "header line " + fmt.Sprint(no)
	return lay, true, ""
}

// dataLine reports whether a line shaped like a header is a data line of
// the current layout after all: the right number of columns, and a job id
// in the job id column (a SLUID is shaped like a name).
func (r *Reader) dataLine(s string) bool {
	if r.layout.trailing {
		s = strings.TrimSuffix(s, "|")
	}
	cols := strings.Split(s, "|")
	if len(cols) != r.layout.nFields {
		return false
	}
	for _, c := range []sacctColumn{colJobIDRaw, colJobID} {
		if i := r.layout.cols[c]; i >= 0 {
			p, err := slurmext.ParseJobID(cols[i])
			return err == nil && plausibleJobID(p.Base)
		}
	}
	return false
}

// probe checks that the part of the input about to be read fits the
// columns it will be read with (see Reader), trying each candidate
// layout of a header-less first part in turn; it returns a *LayoutError
// when none fits. It reads ahead but consumes nothing.
func (r *Reader) probe() error {
	r.fillWindow()
	cands := []sacctLayout{r.layout}
	if r.firstPart {
		cands = r.candidates
		r.firstPart = false
	}
	// The refusal speaks of the candidate that came closest: the most
	// records with its number of columns (the first, on a tie).
	var first probeStats
	var firstLay sacctLayout
	tried := false
	for _, c := range cands {
		// Without a header, -P and -p (a '|' at the end of each line) are
		// told apart by which fits: a first line alone cannot tell a
		// trailing '|' from an empty last column.
		for _, trailing := range []bool{false, true} {
			if c.trailingKnown && trailing != c.trailing {
				continue
			}
			r.layout = c
			r.layout.trailing, r.layout.trailingKnown = trailing, true
			st := r.dryRun()
			if st.fits() {
				return nil
			}
			if !tried || st.records-st.wrongCount > first.records-first.wrongCount {
				first, firstLay, tried = st, c, true
			}
		}
	}
	r.layout = cands[0]
	if r.srcErr != nil {
		// The window was cut short: say why, not that it did not fit.
		return fmt.Errorf("read sacct output: %w", r.srcErr)
	}
	return &LayoutError{Line: first.firstNo, Columns: firstLay.names, Source: firstLay.source,
		Reason: first.reason(firstLay.nFields), First: first.first}
}

// fillWindow reads ahead up to probeLines non-blank lines (probeBytes
// bytes), stopping after a header line: the probe window of a part.
func (r *Reader) fillWindow() {
	if r.qhead == len(r.queue) {
		r.queue, r.qhead = r.queue[:0], 0
	}
	lines, size := 0, 0
	for _, q := range r.queue[r.qhead:] {
		if len(bytes.TrimSpace(q.text)) > 0 || q.err != nil {
			lines++
			size += len(q.text)
		}
	}
	for lines < probeLines && size < probeBytes {
		if r.fill() != nil {
			return
		}
		q := &r.queue[len(r.queue)-1]
		if len(bytes.TrimSpace(q.text)) == 0 && q.err == nil {
			continue
		}
		lines++
		size += len(q.text)
		if q.err == nil {
			if _, isHeader, why := r.header(q.text, q.no); isHeader || why != "" {
				return // the next part; it has a window of its own
			}
		}
	}
}

// probeStats counts what a probe's dry run met.
type probeStats struct {
	records, fit int
	wrongCount   int
	cols         int // the column count of the last line with the wrong count
	badID        int
	badValue     int
	value        string // the first value of the wrong kind
	badOrder     int    // times in an impossible order (slurmext.ErrTimeOrder)
	tooLong      int
	first        string
	firstNo      int
}

// fits: a part fits when at least half of its first records (and at least
// one) fit cleanly; an empty part fits. A record that needed joining or
// merging (a name with a line break or '|') does not count as fitting, so
// lines of another layout glued together cannot pass for a name with a line
// break.
func (s *probeStats) fits() bool { return s.records == 0 || (s.fit > 0 && 2*s.fit >= s.records) }

func (s *probeStats) reason(want int) string {
	parts := []string{fmt.Sprintf("%d of the first %d records fit", s.fit, s.records)}
	if s.wrongCount > 0 {
		parts = append(parts, fmt.Sprintf("%d have another number of columns (e.g. %d, not %d)", s.wrongCount, s.cols, want))
	}
	if s.badID > 0 {
		parts = append(parts, fmt.Sprintf("%d have no job id where the job id column is", s.badID))
	}
	if s.badValue > 0 {
		parts = append(parts, fmt.Sprintf("%d have values of another kind (first: %s)", s.badValue, s.value))
	}
	if s.badOrder > 0 {
		parts = append(parts, fmt.Sprintf("%d hold Start before Submit or End before Start, which no job can: the columns are in another order than they are read with", s.badOrder))
	}
	if s.tooLong > 0 {
		parts = append(parts, fmt.Sprintf("%d are longer than the line limit", s.tooLong))
	}
	return strings.Join(parts, ", ")
}

// dryRun reads the probe window as Next would and counts the records that
// fit; the reader is left as it was.
func (r *Reader) dryRun() probeStats {
	qhead, line, steps := r.qhead, r.line, r.steps
	r.probing, r.probeFirst, r.probeNo = true, "", 0
	var st probeStats
	var rec slurmext.JobRecord
	for {
		kind, _ := r.scan(&rec)
		if kind != scanJob && kind != scanStep && kind != scanSkip {
			break
		}
		st.records++
		switch {
		case r.misfit == "":
			st.fit++
		case r.misfitCols > 0:
			st.wrongCount++
			st.cols = r.misfitCols
		case r.misfit == "job id":
			st.badID++
		case r.misfit == "time order":
			st.badOrder++
		case r.misfit == "longer than the line limit":
			st.tooLong++
		default:
			st.badValue++
			if st.value == "" {
				st.value = r.misfit
			}
		}
	}
	st.first, st.firstNo = r.probeFirst, r.probeNo
	if st.first == "" {
		st.first, st.firstNo = `""`, line+1
	}
	r.qhead, r.line, r.steps, r.probing = qhead, line, steps, false
	r.cur = r.cur[:0]
	return st
}

// fill reads one physical line from br onto the queue.
func (r *Reader) fill() error {
	switch {
	case r.srcErr != nil:
		return r.srcErr
	case r.srcEOF:
		return io.EOF
	}
	n := len(r.queue)
	if n < cap(r.queue) {
		r.queue = r.queue[:n+1] // reuse the slot's buffer
	} else {
		r.queue = append(r.queue, queuedLine{})
	}
	q := &r.queue[n]
	text, err := r.readSource(q.text[:0])
	switch {
	case errors.Is(err, io.EOF):
		r.queue, r.srcEOF = r.queue[:n], true
		return err
	case errors.Is(err, slurmext.ErrTooLarge):
		q.text, q.err = q.text[:0], err
	case err != nil:
		r.queue, r.srcErr = r.queue[:n], err
		return err
	default:
		// A byte order mark heads a file that a Windows tool saved, and
		// each such file in a concatenation: it is never part of a line
		// (a line starts with a job id or a column name).
		q.text, q.err = bytes.TrimPrefix(text, []byte(utf8BOM)), nil
	}
	r.srcLine++
	q.no = r.srcLine
	return nil
}

// utf8BOM is the UTF-8 byte order mark, U+FEFF.
const utf8BOM = "\xef\xbb\xbf"

// readLine returns the next physical line, from the queue or else from br.
// The text is valid until the next call. A line longer than MaxLineBytes
// is reported as an error wrapping slurmext.ErrTooLarge; at the end of input (or of
// the probe window, in a dry run) it returns io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	if r.qhead == len(r.queue) {
		if r.probing {
			return nil, io.EOF
		}
		r.queue, r.qhead = r.queue[:0], 0
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
	q := &r.queue[r.qhead]
	r.qhead++
	r.line = q.no
	if q.err != nil {
		return nil, q.err
	}
	return q.text, nil
}

// unread gives back the line readLine returned last.
func (r *Reader) unread() {
	r.qhead--
	r.line = r.queue[r.qhead].no - 1
}

// readSource reads one physical line from br into buf, without its line
// break. A line longer than MaxLineBytes is consumed and reported as an
// error wrapping slurmext.ErrTooLarge. At the end of input it returns io.EOF.
func (r *Reader) readSource(buf []byte) ([]byte, error) {
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > r.opts.MaxLineBytes+1 { // +1: the '\n'
				tooLong = true
				buf = buf[:0]
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 && !tooLong {
				return buf, io.EOF
			}
		case err != nil:
			return buf, err
		}
		if tooLong {
			return buf, fmt.Errorf("line longer than %d bytes: %w", r.opts.MaxLineBytes, slurmext.ErrTooLarge)
		}
		line := bytes.TrimSuffix(buf, []byte{'\n'})
		return bytes.TrimSuffix(line, []byte{'\r'}), nil
	}
}

// record splits line (joining the lines that follow when a job name held a
// line break) into exactly nFields values. A record that needed joining or
// merging counts as a misfit in a probe: another layout can look like that,
// while real names with '|' or line breaks are rare.
func (r *Reader) record(line []byte) ([]string, error) {
	l := &r.layout
	n := r.countCols(line)
	nameCol := l.cols[colJobName]
	if n < l.nFields && nameCol >= 0 && n > nameCol {
		r.misfit, r.misfitCols = "columns", n
		// Keep a copy of what we have: readLine reuses its buffers.
		joined := append([]byte(nil), line...)
		for range maxJoinedLines {
			next, err := r.readLine()
			if err != nil {
				if errors.Is(err, slurmext.ErrTooLarge) {
					r.unread() // reported on its own
				}
				break
			}
			m := r.countCols(next)
			if m >= l.nFields || len(joined)+1+len(next) > r.opts.MaxLineBytes {
				r.unread()
				break
			}
			joined = append(append(joined, '\n'), next...)
			if n += m - 1; n >= l.nFields {
				break
			}
		}
		line = joined
	}
	s := string(line)
	if l.trailing {
		s = strings.TrimSuffix(s, "|")
	}
	r.split = r.split[:0]
	for f := range strings.SplitSeq(s, "|") {
		r.split = append(r.split, f)
	}
	switch {
	case len(r.split) == l.nFields:
		return r.split, nil
	case len(r.split) < l.nFields:
		r.misfit, r.misfitCols = "columns", len(r.split)
		return nil, fmt.Errorf("%d of %d columns (truncated line?): %w", len(r.split), l.nFields, ErrMalformed)
	case nameCol < 0:
		r.misfit, r.misfitCols = "columns", len(r.split)
		return nil, fmt.Errorf("%d columns, want %d: %w", len(r.split), l.nFields, ErrMalformed)
	}
	// The job name held '|': it takes the surplus columns.
	if r.misfit == "" {
		r.misfit, r.misfitCols = "columns", len(r.split)
	}
	surplus := len(r.split) - l.nFields
	name := strings.Join(r.split[nameCol:nameCol+surplus+1], "|")
	r.split = append(r.split[:nameCol+1], r.split[nameCol+surplus+1:]...)
	r.split[nameCol] = name
	return r.split, nil
}

// countCols counts the '|'-separated columns of a line as record will.
func (r *Reader) countCols(line []byte) int {
	n := bytes.Count(line, []byte{'|'}) + 1
	if r.layout.trailing && bytes.HasSuffix(line, []byte{'|'}) {
		n--
	}
	return n
}

// build turns the values of one line into rec; isStep reports a step line,
// for which rec holds only its job's ids (JobID: the raw id before the '.',
// DisplayID: the JobID before the '.') and readings. It notes in r.misfit
// the first value of the wrong kind in a column whose kind is known (a
// state, a time, a limit, an exit code, a count, a node list, a TRES
// string): what a probe counts against the layout.
//
// It stays one function: it runs once per line and reads the columns in a
// fixed order, which is the order of the line's notes, with the misfit
// marks (r.shape) around the columns whose kind is known; each column is a
// line or two, and the parsing of each kind is already its own (n.text,
// r.time, r.tres, r.gpuUsage).
func (r *Reader) build(f []string, rec *slurmext.JobRecord) (isStep bool, err error) {
	cols := &r.layout.cols
	get := func(c sacctColumn) string {
		if i := cols[c]; i >= 0 {
			return f[i]
		}
		return ""
	}
	r.cur = r.cur[:0]
	n := &r.cur
	raw := strings.TrimSpace(get(colJobIDRaw))
	disp := strings.TrimSpace(get(colJobID))
	idText := disp
	if idText == "" {
		idText = raw
	}
	parts, err := slurmext.ParseJobID(idText)
	if err != nil {
		return false, err
	}
	if !plausibleJobID(parts.Base) {
		r.misfit = "job id"
	}
	r.lu = lineUsage{}
	if parts.IsStep() || strings.Contains(raw, ".") {
		*rec = slurmext.JobRecord{}
		if r.layout.hasUsage() {
			rec.JobID, _, _ = strings.Cut(raw, ".")
			rec.DisplayID = parts.Job
			r.stepID = idText
			r.gpuUsage(n, rec, get(colTRESUsageInMax), get(colTRESUsageInAve))
			r.hostUsage(n, get)
		}
		return true, nil
	}
	switch {
	case raw != "" && !slurmext.ValidJobID(raw):
		return false, fmt.Errorf("JobIDRaw %s is not a job id: %w", slurmext.QuoteShort(raw), slurmext.ErrBadJobID)
	case raw == "" && (parts.ArrayTaskID >= 0 || parts.HetOffset >= 0):
		// The raw id of an array task or het component is its own job id,
		// which only JobIDRaw gives.
		return false, fmt.Errorf("JobID %s needs the JobIDRaw column: %w", slurmext.QuoteShort(disp), ErrMalformed)
	case raw == "":
		raw = parts.Base
	}
	// Without a JobID column the display id is unknown: JobIDRaw alone
	// does not say whether a job is an array task or a het component.
	display := parts.Job
	if cols[colJobID] < 0 {
		display = ""
	}
	*rec = slurmext.JobRecord{
		JobID: raw, DisplayID: display, ArrayTaskID: parts.ArrayTaskID,
		ArrayTaskSpec: parts.ArrayTaskSpec, HetOffset: parts.HetOffset,
		UID: -1, CancelledBy: -1, Source: "sacct",
	}
	if parts.ArrayTaskID >= 0 || parts.ArrayTaskSpec != "" {
		rec.ArrayJobID = parts.Base
	}
	if parts.HetOffset >= 0 {
		rec.HetJobID = parts.Base
	}

	rec.Cluster = n.Text("Cluster", get(colCluster), slurmext.MaxFieldBytes)
	if rec.Cluster == "" {
		rec.Cluster = r.opts.Cluster
	}
	rec.Name = n.Text("JobName", get(colJobName), slurmext.MaxFieldBytes)
	rec.User = n.Text("User", get(colUser), slurmext.MaxFieldBytes)
	mark := len(*n)
	rec.UID = n.ID("UID", get(colUID))
	r.shape(mark)
	rec.Account = n.Text("Account", get(colAccount), slurmext.MaxFieldBytes)
	rec.Partition = n.Text("Partition", get(colPartition), slurmext.MaxFieldBytes)
	rec.QOS = n.Text("QOS", get(colQOS), slurmext.MaxFieldBytes)
	rec.Reason = n.Text("Reason", get(colReason), slurmext.MaxFieldBytes)
	mark = len(*n)
	rec.Submit = r.time(n, "Submit", get(colSubmit))
	rec.Eligible = r.time(n, "Eligible", get(colEligible))
	rec.Start = r.time(n, "Start", get(colStart))
	rec.End = r.time(n, "End", get(colEnd))
	if err := slurmext.CheckTimeOrder(rec); err != nil {
		return false, err
	}
	if slurmext.EligibleBeforeSubmit(rec) {
		n.Add("Eligible", "%s is before Submit %s by more than %s: left unknown",
			rec.Eligible.UTC().Format(time.RFC3339), rec.Submit.UTC().Format(time.RFC3339), slurmext.TimeOrderSkew)
		rec.Eligible = time.Time{}
	}
	if v := get(colState); v != "" {
		st, by, err := slurmext.ParseState(v)
		if err != nil {
			n.Add("State", "%v", err)
		}
		rec.State, rec.CancelledBy = st, by
	}
	d, unlimited, err := slurmext.ParseDuration(get(colTimelimit))
	if err != nil {
		n.Add("Timelimit", "%v", err)
	}
	rec.TimeLimit, rec.Unlimited = d, unlimited
	if cols[colElapsed] >= 0 && r.probing {
		// Not kept (End-Start is), but a layout check: a duration goes
		// here. Only while probing: it costs an allocation per line.
		if _, _, err := slurmext.ParseDuration(get(colElapsed)); err != nil {
			n.Add("Elapsed", "%v", err)
		}
	}
	exit := get(colExitCode)
	rec.ExitStatus, rec.ExitSignal = n.ExitCode("ExitCode", exit)
	if _, _, err := slurmext.ParseExitCode2(exit); err != nil || exit == "" {
		rec.ExitUnknown = true // not reported, or malformed: not 0:0
	}
	rec.DerivedStatus, rec.DerivedSignal = n.ExitCode("DerivedExitCode", get(colDerivedExitCode))
	rec.NodeCount = n.Count("NNodes", get(colNNodes))
	rec.CPUs = n.Count("NCPUS", get(colNCPUS))
	r.shape(mark)
	if nl := get(colNodeList); nl != "None assigned" {
		rec.NodeList = n.Text("NodeList", nl, slurmext.MaxFieldBytes)
		if rec.NodeList != "" {
			if err := slurmext.CheckHostlist(rec.NodeList); err != nil {
				mark = len(*n)
				n.Add("NodeList", "%v", err)
				r.shape(mark)
			}
		}
	}
	rec.ReqTRES = r.tres(n, "ReqTRES", get(colReqTRES))
	rec.AllocTRES = r.tres(n, "AllocTRES", get(colAllocTRES))
	rec.ReqGPUs, rec.ReqGPUType, rec.ReqShards, rec.GPUsFrom = slurmext.RequestedGPUs(rec.ReqTRES, rec.AllocTRES)
	r.gpuUsage(n, rec, get(colTRESUsageInMax), get(colTRESUsageInAve))
	r.hostUsage(n, get)
	r.reqMem(n, rec, get(colReqMem))
	return false, nil
}

// plausibleJobID is the probe's view of a job id: a number, or shaped like a
// SLUID ('s' and 13 more letters or digits). slurmext.ParseJobID accepts any id of
// the characters Slurm uses; a probe wants a word like "gpu" in the job id
// column to count against the layout.
func plausibleJobID(base string) bool {
	if _, ok := slurmext.ParseDigits(base, 1<<32); ok {
		return true
	}
	return len(base) == 14 && (base[0] == 's' || base[0] == 'S')
}

// shape records as the line's misfit the first note added since mark.
func (r *Reader) shape(mark int) {
	if r.misfit == "" && len(r.cur) > mark {
		r.misfit = slurmext.QuoteShort(r.cur[mark])
	}
}

// gpuUsage reads Slurm's GPU readings from the usage columns into rec; a
// malformed usage string or reading is noted (under the column's name, which
// fold and hold look for) and leaves the reading unknown.
func (r *Reader) gpuUsage(n *slurmext.Notes, rec *slurmext.JobRecord, maxText, aveText string) {
	if maxText != "" {
		mark := len(*n)
		if err := slurmext.CheckTRES(maxText); err != nil {
			n.Add("TRESUsageInMax", "%v", err)
		} else if b, found, err := slurmext.GPUMemFromUsage(maxText); err != nil {
			n.Add("TRESUsageInMax", "%v", err)
		} else if found {
			rec.SlurmGPUMem, rec.SlurmGPUMemValid = b, true
		}
		r.shape(mark)
	}
	if aveText != "" {
		mark := len(*n)
		if err := slurmext.CheckTRES(aveText); err != nil {
			n.Add("TRESUsageInAve", "%v", err)
		} else if u, found, err := slurmext.GPUUtilFromUsage(aveText); err != nil {
			n.Add("TRESUsageInAve", "%v", err)
		} else if found {
			rec.SlurmGPUUtil, rec.SlurmGPUUtilValid = u, true
		}
		r.shape(mark)
	}
}

// time parses a time column, noting a malformed value.
func (r *Reader) time(n *slurmext.Notes, name, v string) time.Time {
	t, err := slurmext.ParseSlurmTime(v, r.opts.Location)
	if err != nil {
		n.Add(name, "%v", err)
	}
	return t
}

// tres sanitises a TRES column and notes one that does not parse; the text
// is kept either way, since GPUsFromTRES reads what it can.
func (r *Reader) tres(n *slurmext.Notes, name, v string) string {
	v = n.Text(name, v, slurmext.MaxFieldBytes)
	if err := slurmext.CheckTRES(v); err != nil {
		mark := len(*n)
		n.Add(name, "%v", err)
		r.shape(mark)
	}
	return v
}

// ErrBadUsage means a CPU time or memory size of sacct's accounting
// (TotalCPU, MaxRSS, ReqMem) is malformed.
var ErrBadUsage = errors.New("malformed sacct accounting value")

// ParseCPUTime parses a CPU time as sacct prints TotalCPU, UserCPU and
// SystemCPU (Slurm's _elapsed_time): "D-HH:MM:SS" from a day on,
// "HH:MM:SS" from an hour on, "MM:SS.mmm" below an hour, and "00:MM:SS"
// when the fraction is 0. A fraction is accepted in every form. Unlike a
// time limit it is never a bare number of minutes or UNLIMITED. Errors wrap
// ErrBadUsage.
func ParseCPUTime(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, ":") {
		if d, ok := slurmext.ParseClock(t); ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("CPU time %s: want [D-][HH:]MM:SS[.mmm]: %w", slurmext.QuoteShort(s), ErrBadUsage)
}

// ParseReqMem parses sacct's ReqMem, the memory a job requested, into bytes
// in total. Slurm 21.08 and later print the total with a binary unit letter
// ("16000M", "1G"; convert_num_unit: powers of 1024; --noconvert keeps the
// "M", SEEN on 22.05.8); earlier versions append 'n' (per node) or 'c' (per
// CPU), which are multiplied by nodes or cpus. known is false for a
// request that names no size: empty, "0" (--mem=0, all of a node's memory)
// or a per-node or per-CPU request whose count is unknown (0). A number
// without a unit letter is an error: Slurm does not print one, and
// megabytes and bytes cannot be told apart. Errors wrap ErrBadUsage.
func ParseReqMem(s string, cpus, nodes int) (bytes uint64, known bool, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, false, nil
	}
	per := 1
	switch t[len(t)-1] {
	case 'n':
		per, t = nodes, t[:len(t)-1]
	case 'c':
		per, t = cpus, t[:len(t)-1]
	}
	v, ok := slurmext.ParseSize(t)
	if ok && v != 0 && t[len(t)-1] >= '0' && t[len(t)-1] <= '9' {
		ok = false // no unit letter
	}
	if !ok {
		return 0, false, fmt.Errorf("ReqMem %s: want a size such as 16000M, 4G or 4000Mc: %w", slurmext.QuoteShort(s), ErrBadUsage)
	}
	if v == 0 || per <= 0 {
		return 0, false, nil
	}
	if v > slurmext.MaxUsageBytes/uint64(per) {
		return 0, false, fmt.Errorf("ReqMem %s × %d: too large: %w", slurmext.QuoteShort(s), per, ErrBadUsage)
	}
	return v * uint64(per), true, nil
}

// parseRSS parses a resident memory size as sacct prints MaxRSS and the mem
// item of TRESUsageInMax: bytes with a binary unit letter ("6292K",
// "1.50G") or, with --noconvert, plain bytes. known is false for "0": a
// running process has resident memory, so 0 is a step jobacct_gather never
// sampled, not a measurement.
func parseRSS(s string) (bytes uint64, known bool, err error) {
	t := strings.TrimSpace(s)
	v, ok := slurmext.ParseSize(t)
	if !ok {
		return 0, false, fmt.Errorf("memory size %s: want bytes or a size such as 6292K: %w", slurmext.QuoteShort(s), ErrBadUsage)
	}
	return v, v > 0, nil
}

// hostUsage reads the CPU time and memory peak of a line into r.lu,
// noting a malformed value with its line; the probe counts it against the
// layout.
func (r *Reader) hostUsage(n *slurmext.Notes, get func(sacctColumn) string) {
	lu := &r.lu
	if v := get(colTotalCPU); strings.TrimSpace(v) != "" {
		mark := len(*n)
		if d, err := ParseCPUTime(v); err != nil {
			n.Add("TotalCPU", "line %d: %v", r.line, err)
			lu.cpuBad = true
		} else {
			lu.TotalCPU, lu.TotalCPUValid = d, true
		}
		r.shape(mark)
	}
	column, v := "MaxRSS", get(colMaxRSS)
	if strings.TrimSpace(v) == "" && r.layout.cols[colMaxRSS] < 0 {
		// Without a MaxRSS column, TRESUsageInMax holds the same peak.
		// gpuUsage has noted a malformed string already.
		tres := get(colTRESUsageInMax)
		if slurmext.CheckTRES(tres) != nil {
			lu.rssBad = true
			return
		}
		column, v = "TRESUsageInMax", ""
		if m, ok := slurmext.UsageItem(tres, "mem"); ok {
			v = m
		}
	}
	if strings.TrimSpace(v) == "" {
		return
	}
	mark := len(*n)
	if b, known, err := parseRSS(v); err != nil {
		n.Add(column, "line %d: %v", r.line, err)
		lu.rssBad = true
	} else if known {
		lu.MemPeak, lu.MemPeakValid = b, true
	}
	r.shape(mark)
}

// reqMem reads a job line's ReqMem into r.lu. ReqTRES, which holds the
// same request, stays as it is (see MemFromTRES).
func (r *Reader) reqMem(n *slurmext.Notes, rec *slurmext.JobRecord, v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	mark := len(*n)
	b, known, err := ParseReqMem(v, rec.CPUs, rec.NodeCount)
	if err != nil {
		n.Add("ReqMem", "line %d: %v", r.line, err)
	}
	r.lu.ReqMem, r.lu.ReqMemValid = b, known
	r.shape(mark)
}

// jobUsage is the slurmext.HostUsage a job line gives its job by itself.
func (lu *lineUsage) jobUsage() slurmext.HostUsage {
	u := lu.HostUsage
	if lu.cpuBad {
		u.TotalCPU, u.TotalCPUValid = 0, false
	}
	if lu.rssBad {
		u.MemPeak, u.MemPeakValid = 0, false
	}
	return u
}
