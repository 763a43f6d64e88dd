package main

import (
	"bytes"
	"testing"
)

// TestIsTerminal: the plan's progress (cliview.StartPlanProgress) is off
// when stderr is not a terminal.
func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
}

// TestQuietFlag: the commands that make the simulated plan take --quiet.
func TestQuietFlag(t *testing.T) {
	root := newRootCommand()
	for _, name := range []string{"plan", "recommend", "report"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if f := cmd.Flags().Lookup("quiet"); f == nil || f.DefValue != "false" {
			t.Errorf("%s: no --quiet flag defaulting to off", name)
		}
	}
}
