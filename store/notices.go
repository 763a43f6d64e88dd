package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

// NoticeRecord is one row of the notices table: a notice (profile.Notice)
// with the key of its job on its node and the job's owner, which the
// per-user daily cap and the scoping of listings need.
type NoticeRecord struct {
	profile.Key
	User    string `json:"user,omitempty"`
	UID     int    `json:"uid"`
	Account string `json:"account,omitempty"`
	profile.Notice
}

// NoticeFilter selects notices for ListNotices and CountNotices. Zero
// fields select everything.
type NoticeFilter struct {
	Cluster, JobID, Node string
	// User, UID and Account match the job's owner as the notice recorded
	// it.
	User    string
	UID     *int
	Account string
	Rule    string
	// Status matches one status; Statuses any of several (both given: a
	// notice must match Status and be one of Statuses).
	Status   string
	Statuses []string
	// Since and Until select notices decided in [Since, Until) (their
	// Time). A zero bound is open.
	Since, Until time.Time
	// Limit bounds the number returned (the newest); 0 means no bound.
	Limit int
}

// ScopedTo restricts f to the notices of uid's jobs, the rule for a reader
// who is not an admin (as ViewFilter.ScopedTo): whatever else f asks for,
// only that uid's notices match. A User filter naming the reader's own login
// is dropped, the uid selecting the same rows.
func (f NoticeFilter) ScopedTo(uid int, user string) NoticeFilter {
	f.UID = &uid
	if user != "" && f.User == user {
		f.User = ""
	}
	return f
}

// ClaimNotice records r unless a notice of the same cluster, job, node and
// rule exists, and reports whether it did: claimed true means the caller
// is the first and only one to act on it (send the mail, run the action);
// false means it was decided before (by this agent before a restart, or
// carried in with the profile) and must not be acted on again.
func (db *DB) ClaimNotice(ctx context.Context, r NoticeRecord) (claimed bool, err error) {
	err = db.WithTx(ctx, func(tx *Tx) error {
		claimed, err = tx.ClaimNotice(ctx, r)
		return err
	})
	return claimed, err
}

// UpdateNotice sets the outcome of a claimed notice (status, recipient,
// evidence, fix, detail and time). It returns ErrNotFound when no notice
// with r's key and rule exists.
func (db *DB) UpdateNotice(ctx context.Context, r NoticeRecord) error {
	return db.WithTx(ctx, func(tx *Tx) error { return tx.UpdateNotice(ctx, r) })
}

// listNotices returns the notices f selects, newest first (ties by
// cluster, job id, node, rule).
func (db *DB) listNotices(ctx context.Context, f NoticeFilter) (rs []NoticeRecord, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		rs, err = tx.listNotices(ctx, f)
		return err
	})
	return rs, err
}

// countNotices returns how many notices f selects (f.Limit is ignored).
// The agent's per-user daily cap counts a user's sent notices of one day.
func (db *DB) countNotices(ctx context.Context, f NoticeFilter) (n int, err error) {
	err = db.read(ctx, func(tx *Tx) error {
		n, err = tx.countNotices(ctx, f)
		return err
	})
	return n, err
}

const noticeColumns = `cluster, job_id, node, rule, "user", uid, account, "time", since, gpus,
	recipient, status, evidence, fix, detail`

// ClaimNotice is DB.ClaimNotice within a transaction.
func (t *Tx) ClaimNotice(ctx context.Context, r NoticeRecord) (bool, error) {
	args, err := noticeArgs(r)
	if err != nil {
		return false, err
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO notices (`+noticeColumns+`, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (cluster, job_id, node, rule) DO NOTHING`, args...)
	if err != nil {
		return false, fmt.Errorf("claim notice: %w", classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim notice: %w", classify(err))
	}
	return n == 1, nil
}

// UpdateNotice is DB.UpdateNotice within a transaction.
func (t *Tx) UpdateNotice(ctx context.Context, r NoticeRecord) error {
	if err := validNotice(r); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE notices SET status = ?, recipient = ?, evidence = ?, fix = ?,
		detail = ?, "time" = ?, updated_at = ? WHERE cluster = ? AND job_id = ? AND node = ? AND rule = ?`,
		r.Status, r.Recipient, r.Evidence, r.Fix, r.Detail, r.Time.Unix(), time.Now().Unix(),
		r.Cluster, r.JobID, r.Node, r.Rule)
	if err != nil {
		return fmt.Errorf("update notice: %w", classify(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update notice: %w", classify(err))
	} else if n == 0 {
		return fmt.Errorf("update notice %s %s: %w", keyString(r.Key), r.Rule, ErrNotFound)
	}
	return nil
}

// putNotices stores the notices a profile carries: new ones are inserted,
// and a stored one takes the profile's outcome unless that would move it
// back to pending (a late running snapshot must not undo a recorded
// outcome).
func (t *Tx) putNotices(ctx context.Context, j profile.Job) error {
	if len(j.Notices) == 0 {
		return nil
	}
	stmt, err := t.tx.PrepareContext(ctx, `INSERT INTO notices (`+noticeColumns+`, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (cluster, job_id, node, rule) DO UPDATE SET
		"user" = excluded."user", uid = excluded.uid, account = excluded.account,
		"time" = excluded."time", since = excluded.since, gpus = excluded.gpus,
		recipient = excluded.recipient, status = excluded.status, evidence = excluded.evidence,
		fix = excluded.fix, detail = excluded.detail, updated_at = excluded.updated_at
		WHERE excluded.status <> '`+profile.NoticePending+`' OR notices.status = '`+profile.NoticePending+`'`)
	if err != nil {
		return classify(err)
	}
	defer stmt.Close()
	for _, n := range j.Notices {
		args, err := noticeArgs(NoticeRecord{Key: j.Key, User: j.User, UID: j.UID, Account: j.Account, Notice: n})
		if err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("notice %s: %w", n.Rule, classify(err))
		}
	}
	return nil
}

func validNotice(r NoticeRecord) error {
	switch {
	case r.Cluster == "" || r.JobID == "" || r.Node == "":
		return fmt.Errorf("%w: notice: cluster, job id and node must all be set", ErrInvalid)
	case r.Rule == "":
		return fmt.Errorf("%w: notice without rule", ErrInvalid)
	case r.Status == "":
		return fmt.Errorf("%w: notice without status", ErrInvalid)
	case r.Time.IsZero():
		return fmt.Errorf("%w: notice without time", ErrInvalid)
	}
	return nil
}

func noticeArgs(r NoticeRecord) ([]any, error) {
	if err := validNotice(r); err != nil {
		return nil, err
	}
	gpus := r.GPUs
	if gpus == nil {
		gpus = []int{}
	}
	b, err := json.Marshal(gpus)
	if err != nil {
		return nil, fmt.Errorf("encode notice gpus: %w", err)
	}
	return []any{r.Cluster, r.JobID, r.Node, r.Rule, r.User, r.UID, r.Account,
		r.Time.Unix(), unixOrNull(r.Since), string(b), r.Recipient, r.Status, r.Evidence, r.Fix, r.Detail,
		time.Now().Unix()}, nil
}

func (f NoticeFilter) where() (string, []any) {
	var conds []string
	var args []any
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("cluster", f.Cluster)
	eq("job_id", f.JobID)
	eq("node", f.Node)
	eq(`"user"`, f.User)
	eq("account", f.Account)
	eq("rule", f.Rule)
	eq("status", f.Status)
	if f.UID != nil {
		conds = append(conds, "uid = ?")
		args = append(args, *f.UID)
	}
	if len(f.Statuses) > 0 {
		conds = append(conds, "status IN (?"+strings.Repeat(",?", len(f.Statuses)-1)+")")
		for _, s := range f.Statuses {
			args = append(args, s)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, `"time" >= ?`)
		args = append(args, ceilUnix(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, `"time" < ?`)
		args = append(args, ceilUnix(f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// listNotices is DB.listNotices within a transaction.
func (t *Tx) listNotices(ctx context.Context, f NoticeFilter) ([]NoticeRecord, error) {
	where, args := f.where()
	q := `SELECT ` + noticeColumns + ` FROM notices` + where + ` ORDER BY "time" DESC, cluster, job_id, node, rule`
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list notices: %w", classify(err))
	}
	defer rows.Close()
	var out []NoticeRecord
	for rows.Next() {
		r, err := scanNotice(rows)
		if err != nil {
			return nil, fmt.Errorf("list notices: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list notices: %w", classify(err))
	}
	return out, nil
}

// countNotices is DB.countNotices within a transaction.
func (t *Tx) countNotices(ctx context.Context, f NoticeFilter) (int, error) {
	where, args := f.where()
	var n int
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM notices`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count notices: %w", classify(err))
	}
	return n, nil
}

func scanNotice(rows scanner) (NoticeRecord, error) {
	var r NoticeRecord
	var tm int64
	var since sql.NullInt64
	var gpus string
	if err := rows.Scan(&r.Cluster, &r.JobID, &r.Node, &r.Rule, &r.User, &r.UID, &r.Account, &tm, &since, &gpus,
		&r.Recipient, &r.Status, &r.Evidence, &r.Fix, &r.Detail); err != nil {
		return r, classify(err)
	}
	r.Time = time.Unix(tm, 0).UTC()
	r.Since = timeOrZero(since)
	if err := json.Unmarshal([]byte(gpus), &r.GPUs); err != nil {
		return r, fmt.Errorf("notice %s %s: gpus: %w", keyString(r.Key), r.Rule, err)
	}
	if len(r.GPUs) == 0 {
		r.GPUs = nil
	}
	return r, nil
}

// jobNotices fills the Notices of the jobs in index (by key) from the
// notices table, oldest first, for the jobs sel (a WHERE clause over jobs
// and its args) selects.
func (t *Tx) jobNotices(ctx context.Context, js []profile.Job, index map[profile.Key]int, sel string, args []any) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+prefixed("n", noticeColumns)+`
		FROM notices n JOIN (SELECT cluster, job_id, node FROM jobs`+sel+`) j
		ON n.cluster = j.cluster AND n.job_id = j.job_id AND n.node = j.node
		ORDER BY n."time", n.rule`, args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanNotice(rows)
		if err != nil {
			return err
		}
		if i, ok := index[r.Key]; ok {
			js[i].Notices = append(js[i].Notices, r.Notice)
		}
	}
	return classify(rows.Err())
}
