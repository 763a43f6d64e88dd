package tui

import "testing"

func TestStateStyle(t *testing.T) {
	s := newStyles(false)
	tests := []struct {
		label string
		want  string
	}{
		{"COMPLETED", s.render(s.good, "x")},
		{"TIMEOUT", s.render(s.warn, "x")},
		{"PREEMPTED", s.render(s.warn, "x")},
		{"CANCELLED", s.render(s.warn, "x")},
		{"FAILED", s.render(s.bad, "x")},
		{stateLabel("OUT_OF_MEMORY"), s.render(s.bad, "x")},
		{"NODE_FAIL", s.render(s.bad, "x")},
		{"BOOT_FAIL", s.render(s.bad, "x")},
		// DEADLINE and REVOKED by their outcome class (timeout,
		// cancelled), as analysis and the report class them: until issue
		// #29 the list showed DEADLINE as a failure and REVOKED uncoloured.
		{"DEADLINE", s.render(s.warn, "x")},
		{"REVOKED", s.render(s.warn, "x")},
		// LAUNCH_FAILED is a failure (it was uncoloured until issue #29).
		{"LAUNCH_FAILED", s.render(s.bad, "x")},
		{"RUNNING", "x"},
		{"PENDING", "x"},
		{"REQUEUED", "x"},
		{"-", "x"},
	}
	for _, tt := range tests {
		if got := s.render(s.stateStyle(tt.label), "x"); got != tt.want {
			t.Errorf("stateStyle(%s) renders %q, want %q", tt.label, got, tt.want)
		}
	}
}

func TestStateStyleColoursDiffer(t *testing.T) {
	s := newStyles(false)
	if g, b, w := s.render(s.good, "x"), s.render(s.bad, "x"), s.render(s.warn, "x"); g == b || b == w || g == "x" {
		t.Fatalf("the state colours render alike (%q, %q, %q): TestStateStyle would check nothing", g, b, w)
	}
}
