package cliview

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/notice"
	"github.com/gpuprof/gpuprof/profile"
)

// TestNoticeCounting: the statuses most frequent first, ties by name,
// each in words; "notice" for one.
func TestNoticeCounting(t *testing.T) {
	row := func(status string) notice.Row { return notice.Row{Notice: profile.Notice{Status: status}} }
	tests := []struct {
		name string
		rows []notice.Row
		want string
	}{
		{"one", []notice.Row{row(profile.NoticeSent)}, "1 notice: 1 sent"},
		{"most frequent first", []notice.Row{row(profile.NoticeCapped), row(profile.NoticeSent), row(profile.NoticeSent)},
			"3 notices: 2 sent, 1 not sent: daily cap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NoticeCounting(tt.rows); got != tt.want {
				t.Errorf("NoticeCounting = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNotices: no row says so (since when, if given); an empty --json is
// an array, not null.
func TestNotices(t *testing.T) {
	var b strings.Builder
	if err := Notices(&b, nil, time.Time{}, time.UTC); err != nil || b.String() != "No notices.\n" {
		t.Errorf("no rows: %q, %v", b.String(), err)
	}
	b.Reset()
	since := time.Date(2026, 10, 7, 0, 0, 0, 0, time.UTC)
	if err := Notices(&b, nil, since, time.UTC); err != nil || b.String() != "No notices since 2026-10-07T00:00:00.\n" {
		t.Errorf("no rows since: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := NoticesJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("NoticesJSON(nil) = %q, %v; want []", b.String(), err)
	}
}
