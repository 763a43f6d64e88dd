package history

import (
	"errors"
	"io"
	"slices"

	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/slurmext/sacct"
)

// aheadRecords is how many records an aheadReader reads ahead of the store,
// handed over aheadBatch at a time: one channel operation (and, when the
// other side waits, one goroutine wake-up) a batch instead of a record.
const (
	aheadRecords = 1024
	aheadBatch   = 128
)

// aheadReader reads sacct text on a goroutine of its own, up to
// aheadRecords records ahead of Import: parsing (a tenth of an import's CPU
// time, and most of its allocations) then runs on a second core beside the
// store's work. Next and Problems are the sacct.Reader's, in the same
// order; after an error other than a *sacct.LineError (io.EOF among them)
// nothing more is read. Close stops the goroutine.
type aheadReader struct {
	batches chan []aheadRecord
	// free holds batches Next is done with, for the goroutine to fill
	// again: a batch is 128 records of hundreds of bytes each, and a new
	// one each time was a fifth of what an import allocated.
	free  chan []aheadRecord
	stop  chan struct{}
	whole []aheadRecord // the batch received last
	batch []aheadRecord // what is left of it
	cur   aheadRecord
}

type aheadRecord struct {
	rec      slurmext.JobRecord
	err      error
	problems []string
}

func readAhead(sr *sacct.Reader) *aheadReader {
	n := aheadRecords / aheadBatch
	a := &aheadReader{batches: make(chan []aheadRecord, n), free: make(chan []aheadRecord, n), stop: make(chan struct{})}
	go func() {
		defer close(a.batches)
		batch := make([]aheadRecord, 0, aheadBatch)
		for {
			rec, err := sr.Next()
			// Problems holds the notes of this record only: the next
			// call of Next clears them.
			batch = append(batch, aheadRecord{rec: rec, err: err, problems: slices.Clone(sr.Problems())})
			last := err != nil && !isLineError(err)
			if len(batch) < aheadBatch && !last {
				continue
			}
			select {
			case a.batches <- batch:
			case <-a.stop:
				return
			}
			if last {
				return
			}
			select {
			case batch = <-a.free:
				batch = batch[:0]
			default:
				batch = make([]aheadRecord, 0, aheadBatch)
			}
		}
	}()
	return a
}

// Next returns the next record or error, as sacct.Reader.Next.
func (a *aheadReader) Next() (slurmext.JobRecord, error) {
	if len(a.batch) == 0 {
		b, ok := <-a.batches
		if !ok {
			// Only after Next has returned the error that ended the reading.
			return slurmext.JobRecord{}, io.EOF
		}
		if a.whole != nil {
			// The records Next returned are copies: the batch can
			// be filled again. When free is full, it is dropped.
			select {
			case a.free <- a.whole:
			default:
			}
		}
		a.whole, a.batch = b, b
	}
	a.cur, a.batch = a.batch[0], a.batch[1:]
	return a.cur.rec, a.cur.err
}

// Problems returns the notes of the record Next returned last.
func (a *aheadReader) Problems() []string { return a.cur.problems }

// isLineError reports whether err is a *sacct.LineError: a line skipped,
// after which the reading goes on. The target of errors.As escapes to the
// heap where it is declared, so it is declared here, where only errors
// reach: declared beside each record's Next, it cost an allocation a record.
func isLineError(err error) bool {
	if err == nil {
		return false
	}
	var le *sacct.LineError
	return errors.As(err, &le)
}

// Close stops the reading goroutine; call it once, when done.
func (a *aheadReader) Close() { close(a.stop) }
