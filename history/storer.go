package history

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprof/gpuprof/store"
)

// storer writes an import's batches: each in a transaction of its own, or
// all in one store.BulkLoad, as decided at the first batch.
type storer struct {
	db      *store.DB
	decided bool
	bulk    *store.BulkLoad
	failed  bool // a write failed: a bulk load must not commit
}

// write runs fn for a batch of n records.
func (s *storer) write(ctx context.Context, n int, fn func(tx *store.Tx) error) error {
	if !s.decided {
		s.decided = true
		worth, err := s.db.BulkLoadWorth(ctx, n)
		if err == nil && worth {
			s.bulk, err = s.db.BeginBulkLoad(ctx)
		}
		if err != nil {
			s.failed = true
			return err
		}
	}
	var err error
	if s.bulk != nil {
		err = s.bulk.Do(fn)
	} else {
		err = s.db.WithTx(ctx, fn)
	}
	if err != nil {
		s.failed = true
	}
	return err
}

// errBulkRolledBack says that a bulk import stored nothing.
var errBulkRolledBack = errors.New("nothing of this import was stored (it was one transaction)")

// finish ends the import that returned res and err: a bulk load commits
// unless a write failed or ctx is done; otherwise, or if the commit fails,
// it rolls back, and res no longer counts any job as stored.
func (s *storer) finish(ctx context.Context, res Result, err error) (Result, error) {
	if s.bulk == nil {
		return res, err
	}
	if !s.failed && ctx.Err() == nil {
		cerr := s.bulk.Commit(ctx)
		if cerr == nil {
			return res, err
		}
		err = errors.Join(err, cerr)
	} else {
		_ = s.bulk.Rollback()
		if err == nil {
			err = ctx.Err()
		}
	}
	res.Inserted, res.Updated, res.Unchanged = 0, 0, 0
	res.Last = time.Time{}
	return res, fmt.Errorf("%w: %w", errBulkRolledBack, err)
}

// abandon rolls back a bulk load that finish did not end.
func (s *storer) abandon() {
	if s.bulk != nil {
		_ = s.bulk.Rollback()
	}
}
