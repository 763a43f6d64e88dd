// Package history backfills the scheduler's view of past jobs from sacct,
// so queue and partition analysis works on the day gpuprof is installed,
// before any GPU profile exists. Imports are idempotent (re-importing a
// window changes nothing) and resumable (a mark records how far the last
// import got): Window is the window of a live import (where the last one
// stopped, else 90 days back), StartSacct runs sacct for it and StartLive
// does both. ChooseCluster names the cluster of the jobs whose input names
// none (asked, else as the configuration names it, else "default").
//
// It must not sample GPUs or touch node databases.
package history

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
	"github.com/gpuprof/gpuprof/store"
)

// Source is the import mark's source name for sacct.
const Source = "sacct"

// Format of an import source.
const (
	FormatText = "text" // sacct -P
	FormatJSON = "json" // sacct --json
	FormatAuto = "auto" // either: Import tells them apart (DetectFormat)
)

// Result counts what an import did.
type Result struct {
	Read      int // records read from the source
	Inserted  int
	Updated   int
	Unchanged int
	Skipped   int     // lines or jobs that could not be parsed
	Problems  []error // the first MaxProblems of them
	// Notes are values that were malformed but did not cost the record
	// (the field was left unknown): the first MaxProblems of NoteCount.
	Notes     []string
	NoteCount int
	Last      time.Time
	Took      time.Duration
	// GPUsFrom counts the records read by where their GPUs and shards came
	// from (slurmext.RequestedGPUs).
	GPUsFrom GPUSources
	// Conflicts counts the job ids that the input holds more than once
	// with different content; ConflictIDs are the first MaxConflictIDs of
	// them, in the order of the input. The same record twice is no
	// conflict, nor are the runs of a requeued job that sacct -D and sacct
	// --json list (the earlier ones in state REQUEUED). The store's merge
	// rule decides which wins (store.Tx.PutSchedJob; docs/sacct.md).
	Conflicts   int
	ConflictIDs []string
	// Unnamed counts the records whose input named no cluster (text
	// without a Cluster column, or an empty one): they were imported as
	// Options.Cluster. Clusters counts the records by the cluster they
	// were imported as.
	Unnamed  int
	Clusters map[string]int
	// TimeOrder counts the jobs refused for times in an impossible order
	// (slurmext.ErrTimeOrder: Start before Submit, End before Start, by
	// more than slurmext.TimeOrderSkew); TimeOrderIDs are the first
	// MaxConflictIDs of them. They are among Skipped and Problems too.
	TimeOrder    int
	TimeOrderIDs []string
	// CutLines counts the last lines refused as cut short (see Import);
	// CutIDs names their jobs. They are among Skipped and Problems too.
	CutLines int
	CutIDs   []string
}

// ErrCutLine means the last line of sacct text was cut short: the file ends
// inside it, so its last field (the cluster name, in gpuprof's earlier
// layout) holds part of a value.
var ErrCutLine = errors.New("last line cut short")

// GPUSources counts jobs by where their GPU counts were read from.
type GPUSources struct {
	ReqTRES   int // the job's ReqTRES
	AllocTRES int // its AllocTRES: the input had no ReqTRES for it
	Neither   int // neither: the job counts as asking for no GPU
}

// MaxProblems bounds the problems kept in a Result (the count is exact).
const MaxProblems = 100

// MaxConflictIDs bounds the conflicting job ids kept in a Result.
const MaxConflictIDs = 5

// Options configure an import.
type Options struct {
	// Cluster is the cluster of the records whose input names none.
	Cluster string
	// Columns are the columns of sacct text that has no header line (sacct
	// --noheader), as --format named them; nil means gpuprof's own
	// (sacct.Format). A header line, where there is one, names the
	// columns of what follows it.
	Columns []string
	// Batch is the number of records per transaction; 0 means 50,000. Each
	// commit rewrites the index pages its jobs touched, so larger batches
	// write them fewer times (a 300,000-job import: 13.9 s with 5,000,
	// 12.5 s with 50,000, for about 75 MiB more memory).
	Batch int
	// Progress, when not nil, is called after each batch.
	Progress func(read int, elapsed time.Duration)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Import reads sacct output in format (FormatAuto: the one its first bytes
// show, DetectFormat) and merges every job into db (see
// store.PutSchedJobs). It stops at the first database error; parse errors
// skip the record and are counted. The import mark moves to the latest end
// time imported, in the same transaction as the records.
//
// sacct text that does not fit the columns it is read with (see
// sacct.Reader) is refused as a whole: Import returns an error
// wrapping sacct.ErrLayout and has stored nothing, mark included.
// Where a later part of concatenated text (after a header line) does not
// fit, the jobs of the parts before it are stored, the error says how many,
// and nothing of that part or after it is.
//
// Each batch of records is its own transaction, except when the database
// holds at most a quarter as many jobs as the first batch (a first import,
// typically; store.BulkLoadWorth): then the whole import is one
// store.BulkLoad, which builds sched_jobs' indexes once at the end instead
// of inserting into them row by row. Such an import stores all or nothing
// on a database error or cancellation (the error says so and the counts of
// stored jobs are 0); where the input fails (a later part refused, a read
// error) the jobs before are stored, as above.
func Import(ctx context.Context, db *store.DB, r io.Reader, format string, o Options) (Result, error) {
	st := &storer{db: db}
	defer st.abandon() // a panic: release the write lock
	res, err := importRecords(ctx, st, r, format, o)
	return st.finish(ctx, res, err)
}

// importRecords is Import, storing through st.
//
// It stays one function: flush, problem and add are closures over one
// batch and one Result that both formats feed, so the batch, the import
// mark and the counts move together in one place.
func importRecords(ctx context.Context, st *storer, r io.Reader, format string, o Options) (Result, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if format == FormatAuto {
		head, _ := br.Peek(512)
		format = DetectFormat(head)
	}
	r = br
	if o.Batch <= 0 {
		o.Batch = 50_000
	}
	began := o.now()
	var res Result
	batch := make([]slurmext.JobRecord, 0, o.Batch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var last time.Time
		for _, rec := range batch {
			if rec.End.After(last) {
				last = rec.End
			}
		}
		err := st.write(ctx, len(batch), func(tx *store.Tx) error {
			ins, upd, same, err := tx.PutSchedJobs(ctx, batch)
			if err != nil {
				return err
			}
			res.Inserted += ins
			res.Updated += upd
			res.Unchanged += same
			if last.After(res.Last) {
				mark, err := tx.GetImportMark(ctx, o.Cluster, Source)
				if err != nil {
					return err
				}
				if last.After(mark) {
					if err := tx.SetImportMark(ctx, o.Cluster, Source, last); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("store batch: %w", err)
		}
		if last.After(res.Last) {
			res.Last = last
		}
		batch = batch[:0]
		if o.Progress != nil {
			o.Progress(res.Read, o.now().Sub(began))
		}
		return nil
	}
	problem := func(err error) {
		res.Skipped++
		if len(res.Problems) < MaxProblems {
			res.Problems = append(res.Problems, err)
		}
		var toe *slurmext.TimeOrderError
		if errors.As(err, &toe) {
			res.TimeOrder++
			if len(res.TimeOrderIDs) < MaxConflictIDs {
				res.TimeOrderIDs = append(res.TimeOrderIDs, toe.JobID)
			}
		}
	}
	uids := map[string]int{}
	dups := newDuplicates()
	add := func(rec slurmext.JobRecord) error {
		if rec.Cluster == "" {
			rec.Cluster = o.Cluster
			res.Unnamed++
		}
		if res.Clusters == nil {
			res.Clusters = map[string]int{}
		}
		res.Clusters[rec.Cluster]++
		if rec.UID < 0 && rec.User != "" {
			// sacct --json names users without uids; access control needs
			// the uid, so look it up where the name is known here.
			rec.UID = lookupUID(uids, rec.User)
		}
		rec.Source = Source
		res.Read++
		switch rec.GPUsFrom {
		case slurmext.GPUsFromReqTRES:
			res.GPUsFrom.ReqTRES++
		case slurmext.GPUsFromAllocTRES:
			res.GPUsFrom.AllocTRES++
		default:
			res.GPUsFrom.Neither++
		}
		if dups.conflicts(&rec) {
			res.Conflicts++
			if len(res.ConflictIDs) < MaxConflictIDs {
				res.ConflictIDs = append(res.ConflictIDs, rec.JobID)
			}
		}
		batch = append(batch, rec)
		if len(batch) >= o.Batch {
			return flush()
		}
		return nil
	}

	switch format {
	case FormatText:
		// The records that name no cluster get o.Cluster in add, which
		// counts them.
		sr := readAhead(sacct.NewReader(r, o.Columns, sacct.Options{}))
		defer sr.Close()
		// The record read last is held until the next one comes: at the
		// end, a last line cut short is refused (cutLine).
		var held slurmext.JobRecord
		haveHeld := false
		release := func() error {
			if !haveHeld {
				return nil
			}
			haveHeld = false
			return add(held)
		}
		for {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			rec, err := sr.Next()
			switch {
			case errors.Is(err, io.EOF):
				if haveHeld {
					if cerr := cutLine(&held, res); cerr != nil {
						haveHeld = false
						problem(cerr)
						res.CutLines++
						res.CutIDs = append(res.CutIDs, held.JobID)
					}
				}
				err := errors.Join(release(), flush())
				res.Took = o.now().Sub(began)
				return res, err
			case isLineError(err):
				problem(err)
				continue
			case errors.Is(err, sacct.ErrLayout) && res.Read == 0 && !haveHeld:
				res.Took = o.now().Sub(began)
				return res, fmt.Errorf("sacct text refused, nothing imported: %w", err)
			case errors.Is(err, sacct.ErrLayout):
				// The parts before this one fit; keep them, and say so.
				ferr := errors.Join(release(), flush())
				res.Took = o.now().Sub(began)
				return res, errors.Join(ferr, fmt.Errorf("sacct text refused from there on (the %d jobs before it were imported): %w", res.Read, err))
			case err != nil:
				_ = release()
				_ = flush()
				return res, fmt.Errorf("read sacct output: %w", err)
			}
			for _, p := range sr.Problems() {
				res.NoteCount++
				if len(res.Notes) < MaxProblems {
					res.Notes = append(res.Notes, "job "+rec.JobID+": "+p)
				}
			}
			if err := release(); err != nil {
				return res, err
			}
			held, haveHeld = rec, true
		}
	case FormatJSON:
		recs, problems, err := sacct.ParseJSON(r, "")
		for _, p := range problems {
			problem(p)
		}
		for _, rec := range recs {
			if oerr := slurmext.CheckTimeOrder(&rec); oerr != nil {
				problem(oerr)
				continue
			}
			if err := add(rec); err != nil {
				return res, err
			}
		}
		ferr := flush()
		res.Took = o.now().Sub(began)
		switch {
		case err != nil && ferr != nil:
			// Nothing of the last batch was stored: do not say it was.
			return res, errors.Join(ferr, fmt.Errorf("sacct JSON: %w", err))
		case err != nil:
			return res, fmt.Errorf("sacct JSON (records before the error were imported): %w", err)
		}
		return res, ferr
	}
	return res, fmt.Errorf("unknown format %q", format)
}

// cutLine returns an error wrapping ErrCutLine when last, the last record of
// sacct text, names a cluster that no other record of the text names while
// the others name another (or names none while every other names one): the
// file ends inside its last line, whose last field (Cluster, in gpuprof's
// earlier 24-column layout) then holds the start of the name ("op" for
// "openb"). Such a line is refused until shown otherwise: a cluster with one
// job is imported on its own. res holds the counts of the records before.
func cutLine(last *slurmext.JobRecord, res Result) error {
	if res.Read == 0 || res.Clusters[last.Cluster] > 0 {
		return nil
	}
	if last.Cluster == "" && res.Unnamed > 0 || last.Cluster != "" && res.Unnamed == res.Read {
		// Lines without a cluster name beside it: no name was cut.
		return nil
	}
	others := make([]string, 0, len(res.Clusters))
	for c := range res.Clusters {
		others = append(others, c)
	}
	sort.Strings(others)
	list := strings.Join(others, ", ")
	if len(list) > 200 {
		list = list[:200] + "…"
	}
	name := "no cluster"
	if last.Cluster != "" {
		name = "cluster " + strconv.Quote(last.Cluster)
	}
	return fmt.Errorf("job %s on the last line names %s, and the %d lines before it name %s: the text ends inside that line (cut short), so its values are not whole; refused (a cluster with one job is imported on its own): %w",
		strconv.Quote(last.JobID), name, res.Read, list, ErrCutLine)
}

func lookupUID(cache map[string]int, name string) int {
	if uid, ok := cache[name]; ok {
		return uid
	}
	uid := -1
	if u, err := user.Lookup(name); err == nil {
		if n, err := strconv.Atoi(u.Uid); err == nil {
			uid = n
		}
	}
	cache[name] = uid
	return uid
}

// DetectFormat tells sacct --json output from sacct -P text by the first
// non-space byte after a byte order mark.
func DetectFormat(head []byte) string {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if b := bytes.TrimLeft(head, " \t\r\n"); len(b) > 0 && b[0] == '{' {
		return FormatJSON
	}
	return FormatText
}

// FinalStates are the job states an import selects.
const FinalStates = "BF,CA,CD,DL,F,NF,OOM,PR,TO"

// SacctCommand returns the sacct invocation for a window: every user (-a),
// pipe-separated with a header line (the reader maps columns by name, so a
// change of sacct.Format cannot misalign them), gpuprof's field list, and
// epoch-second times so time zones cannot skew anything. Steps are listed
// (no -X): Slurm's GPU readings (TRESUsageInMax/TRESUsageInAve) are step
// values, which the reader folds into their job.
func SacctCommand(ctx context.Context, bin string, since, until time.Time) *exec.Cmd {
	const layout = "2006-01-02T15:04:05" // what -S/-E accept in every version
	// With --state, sacct selects jobs that reached one of these states in
	// the window (by end time), so jobs that never became eligible (held,
	// then cancelled) are listed too, and the import mark (latest end)
	// lines up with the selection. Jobs still pending or running come in
	// a later import, once they have ended.
	args := []string{"-a", "-P", "--format=" + sacct.Format,
		"--state=" + FinalStates,
		"--starttime", since.Local().Format(layout), "--endtime", until.Local().Format(layout)}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "SLURM_TIME_FORMAT=%s")
	return cmd
}
