package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/profile"
)

func noticeRec(job, user string, uid int, rule, status string, at time.Time) NoticeRecord {
	return NoticeRecord{
		Key:  profile.Key{Cluster: "lab", JobID: job, Node: "gpu01"},
		User: user, UID: uid, Account: "acct-" + user,
		Notice: profile.Notice{Rule: rule, Time: at, Since: at.Add(-time.Hour), GPUs: []int{1},
			Recipient: user + "@example.org", Status: status,
			Evidence: "GPU 1 idle for 01:00:00", Fix: "--gres=gpu:1"},
	}
}

func TestClaimNoticeOnce(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	r := noticeRec("7", "alice", 1001, profile.RuleIdleGPU, profile.NoticePending, t0)
	for i, want := range []bool{true, false, false} {
		got, err := db.ClaimNotice(ctx, r)
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if got != want {
			t.Errorf("claim %d = %v, want %v", i, got, want)
		}
	}
	// Another rule, another node: claims of their own.
	other := r
	other.Rule = profile.RuleIdleJob
	if ok, err := db.ClaimNotice(ctx, other); err != nil || !ok {
		t.Errorf("claim of another rule = %v, %v; want true", ok, err)
	}
	other = r
	other.Node = "gpu02"
	if ok, err := db.ClaimNotice(ctx, other); err != nil || !ok {
		t.Errorf("claim on another node = %v, %v; want true", ok, err)
	}
	if n := countRows(t, db, "notices"); n != 3 {
		t.Errorf("notices rows = %d, want 3", n)
	}
}

func TestClaimNoticeRefusesIncompleteKey(t *testing.T) {
	db := openTest(t, Options{})
	r := noticeRec("", "alice", 1001, profile.RuleIdleGPU, profile.NoticePending, t0)
	if _, err := db.ClaimNotice(context.Background(), r); !errors.Is(err, ErrInvalid) {
		t.Errorf("claim without job id: %v, want ErrInvalid", err)
	}
}

func TestUpdateAndListNotices(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	day := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	recs := []NoticeRecord{
		noticeRec("1", "alice", 1001, profile.RuleIdleGPU, profile.NoticePending, day.Add(9*time.Hour)),
		noticeRec("2", "alice", 1001, profile.RuleIdleJob, profile.NoticePending, day.Add(10*time.Hour)),
		noticeRec("3", "bob", 1002, profile.RuleOversized, profile.NoticePending, day.Add(11*time.Hour)),
		noticeRec("4", "alice", 1001, profile.RuleIdleJob, profile.NoticePending, day.Add(-2*time.Hour)),
	}
	for _, r := range recs {
		if _, err := db.ClaimNotice(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sent := recs[0]
	sent.Status, sent.Detail = profile.NoticeSent, "sendmail exit 0"
	if err := db.UpdateNotice(ctx, sent); err != nil {
		t.Fatalf("UpdateNotice: %v", err)
	}
	missing := recs[0]
	missing.JobID = "99"
	if err := db.UpdateNotice(ctx, missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateNotice of no notice: %v, want ErrNotFound", err)
	}

	got, err := db.listNotices(ctx, NoticeFilter{JobID: "1"})
	if err != nil || len(got) != 1 {
		t.Fatalf("ListNotices(job 1) = %v, %v", got, err)
	}
	want := sent
	want.Time, want.Since = want.Time.UTC(), want.Since.UTC()
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("ListNotices(job 1) =\n%+v\nwant\n%+v", got[0], want)
	}

	ids := func(rs []NoticeRecord) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.JobID)
		}
		return out
	}
	uid := 1002
	tests := []struct {
		name string
		f    NoticeFilter
		want []string
	}{
		{name: "all, newest first", f: NoticeFilter{}, want: []string{"3", "2", "1", "4"}},
		{name: "user", f: NoticeFilter{User: "alice"}, want: []string{"2", "1", "4"}},
		{name: "account", f: NoticeFilter{Account: "acct-bob"}, want: []string{"3"}},
		{name: "rule", f: NoticeFilter{Rule: profile.RuleIdleJob}, want: []string{"2", "4"}},
		{name: "status", f: NoticeFilter{Status: profile.NoticeSent}, want: []string{"1"}},
		{name: "statuses", f: NoticeFilter{Statuses: []string{profile.NoticeSent, profile.NoticePending}, User: "alice"}, want: []string{"2", "1", "4"}},
		{name: "one day", f: NoticeFilter{Since: day, Until: day.Add(24 * time.Hour)}, want: []string{"3", "2", "1"}},
		{name: "since is inclusive", f: NoticeFilter{Since: day.Add(10 * time.Hour)}, want: []string{"3", "2"}},
		{name: "until is exclusive", f: NoticeFilter{Until: day.Add(10 * time.Hour)}, want: []string{"1", "4"}},
		{name: "limit", f: NoticeFilter{Limit: 2}, want: []string{"3", "2"}},
		{name: "scoped to bob asking for alice", f: NoticeFilter{User: "alice"}.ScopedTo(1002, "bob"), want: nil},
		{name: "scoped to bob", f: NoticeFilter{User: "bob"}.ScopedTo(1002, "bob"), want: []string{"3"}},
		{name: "uid", f: NoticeFilter{UID: &uid}, want: []string{"3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := db.listNotices(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(rs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ListNotices = %v, want %v", got, tt.want)
			}
			n, err := db.countNotices(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if tt.f.Limit == 0 && n != len(tt.want) {
				t.Errorf("CountNotices = %d, want %d", n, len(tt.want))
			}
		})
	}
}

func TestPutJobCarriesNotices(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("42", t0, 30, false)
	pending := profile.Notice{Rule: profile.RuleIdleGPU, Time: t0.Add(time.Hour), Since: t0, GPUs: []int{0},
		Status: profile.NoticePending, Evidence: "GPU 0 idle"}
	j.Notices = []profile.Notice{pending}
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, j.Key)
	if err != nil {
		t.Fatal(err)
	}
	if want := Normalize(j).Notices; !reflect.DeepEqual(got.Notices, want) {
		t.Errorf("GetJob notices =\n%+v\nwant\n%+v", got.Notices, want)
	}
	// The claim exists: a second agent's claim fails.
	if ok, err := db.ClaimNotice(ctx, NoticeRecord{Key: j.Key, User: j.User, UID: j.UID, Notice: pending}); err != nil || ok {
		t.Errorf("claim of a notice saved with its job = %v, %v; want false", ok, err)
	}

	// The outcome arrives from delivery; a later snapshot still saying
	// pending must not undo it, a final one replaces it.
	sent := pending
	sent.Status, sent.Recipient = profile.NoticeSent, "alice@example.org"
	if err := db.UpdateNotice(ctx, NoticeRecord{Key: j.Key, User: j.User, UID: j.UID, Notice: sent}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, _ = db.GetJob(ctx, j.Key)
	if len(got.Notices) != 1 || got.Notices[0].Status != profile.NoticeSent {
		t.Errorf("after a pending snapshot: %+v, want the sent notice kept", got.Notices)
	}
	failed := pending
	failed.Status, failed.Detail = profile.NoticeFailed, "sendmail: exit status 75"
	j.Notices = []profile.Notice{failed}
	j.Finish(t0.Add(2 * time.Hour))
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, _ = db.GetJob(ctx, j.Key)
	if len(got.Notices) != 1 || got.Notices[0].Status != profile.NoticeFailed || got.Notices[0].Detail == "" {
		t.Errorf("after a final profile: %+v, want its failed notice", got.Notices)
	}
	// Listing jobs fills them too.
	js, err := db.ListJobs(ctx, Filter{})
	if err != nil || len(js) != 1 || len(js[0].Notices) != 1 {
		t.Errorf("ListJobs notices = %+v, %v", js, err)
	}
	// Running jobs, which a resumed agent reads, have them.
	j2 := richJob("43", t0, 5, false)
	j2.Notices = []profile.Notice{pending}
	if err := db.PutJob(ctx, j2); err != nil {
		t.Fatal(err)
	}
	run, err := db.RunningJobs(ctx, "", "")
	if err != nil || len(run) != 1 || len(run[0].Notices) != 1 || run[0].Notices[0].Rule != profile.RuleIdleGPU {
		t.Errorf("RunningJobs = %+v, %v; want job 43 with its notice", run, err)
	}
}

func TestDeleteRunningJobMovesNotices(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, Options{})
	j := richJob("50", t0, 3, false)
	j.Notices = []profile.Notice{{Rule: profile.RuleIdleJob, Time: t0, Status: profile.NoticeSent}}
	if err := db.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	moved := j
	moved.Node = "gpu01-real"
	err := db.WithTx(ctx, func(tx *Tx) error {
		if _, err := tx.DeleteRunningJob(ctx, j.Key); err != nil {
			return err
		}
		return tx.PutJob(ctx, moved)
	})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.listNotices(ctx, NoticeFilter{})
	if err != nil || len(rs) != 1 || rs[0].Node != "gpu01-real" {
		t.Errorf("notices after the move = %+v, %v; want one under the new node", rs, err)
	}
}

func TestMigrateToNoticesKeepsJobs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old := openAtVersion(t, path, 3)
	j := richJob("9", t0, 4, true)
	putLegacyJob(t, old, j)
	old.Close()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("migrate to %d: %v", SchemaVersion, err)
	}
	defer db.Close()
	got, err := db.GetJob(ctx, j.Key)
	if err != nil || got.JobID != "9" || got.Notices != nil {
		t.Errorf("after migration: %+v, %v", got, err)
	}
	if ok, err := db.ClaimNotice(ctx, noticeRec("9", "alice", 1001, profile.RuleIdleGPU, profile.NoticePending, t0)); err != nil || !ok {
		t.Errorf("claim after migration = %v, %v", ok, err)
	}
}
