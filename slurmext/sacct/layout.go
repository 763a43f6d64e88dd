package sacct

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpuprof/gpuprof/slurmext"
)

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
