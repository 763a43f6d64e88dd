package sacct

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
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

// earlierSacctFormats are the Formats of earlier gpuprofs, newest
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
