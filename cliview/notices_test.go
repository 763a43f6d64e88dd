package cliview

import (
	"strings"
	"testing"
	"time"
)

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
