package history

import (
	"errors"
	"io"
	"slices"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

// aheadRecords is how many records an aheadReader reads ahead of the store.
const aheadRecords = 1024

// aheadReader reads sacct text on a goroutine of its own, up to
// aheadRecords records ahead of Import: parsing (a tenth of an import's CPU
// time, and most of its allocations) then runs on a second core beside the
// store's work. Next and Problems are the sacct.Reader's, in the same
// order; after an error other than a *sacct.LineError (io.EOF among them)
// nothing more is read. Close stops the goroutine.
type aheadReader struct {
	records chan aheadRecord
	stop    chan struct{}
	cur     aheadRecord
}

type aheadRecord struct {
	rec      slurmext.JobRecord
	err      error
	problems []string
}

func readAhead(sr *sacct.Reader) *aheadReader {
	a := &aheadReader{records: make(chan aheadRecord, aheadRecords), stop: make(chan struct{})}
	go func() {
		defer close(a.records)
		for {
			rec, err := sr.Next()
			// Problems holds the notes of this record only: the next
			// call of Next clears them.
			next := aheadRecord{rec: rec, err: err, problems: slices.Clone(sr.Problems())}
			select {
			case a.records <- next:
			case <-a.stop:
				return
			}
			var le *sacct.LineError
			if err != nil && !errors.As(err, &le) {
				return
			}
		}
	}()
	return a
}

// Next returns the next record or error, as sacct.Reader.Next.
func (a *aheadReader) Next() (slurmext.JobRecord, error) {
	r, ok := <-a.records
	if !ok {
		// Only after Next has returned the error that ended the reading.
		return slurmext.JobRecord{}, io.EOF
	}
	a.cur = r
	return r.rec, r.err
}

// Problems returns the notes of the record Next returned last.
func (a *aheadReader) Problems() []string { return a.cur.problems }

// Close stops the reading goroutine; call it once, when done.
func (a *aheadReader) Close() { close(a.stop) }
