package jobend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAccounting writes an sacct that prints current and an sacctmgr
// that records its arguments and prints answer.
func fakeAccounting(t *testing.T, current, answer string) (Accounting, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, script string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.WriteFile(filepath.Join(dir, "current"), []byte(current), 0o644); err != nil {
		t.Fatal(err)
	}
	sacct := write("sacct", "echo \"$*\" >"+dir+"/sacct.args\ncat "+dir+"/current\n")
	mgr := write("sacctmgr", "printf '%s\\n' \"$@\" >"+dir+"/sacctmgr.args\nprintf '%s\\n' '"+answer+"'\n")
	return Accounting{Sacct: sacct, Sacctmgr: mgr, Timeout: 5 * time.Second}, dir
}

const modified = " Modified job:\n  4242"

func TestAnnotate(t *testing.T) {
	const ours = "gpuprof:v1:gpus=1,used=1,final=1"
	for _, tc := range []struct {
		name, current, answer, comment string
		wantErr                        error
		anyErr, written                bool
	}{
		{name: "empty", current: "\n", answer: modified, comment: ours, written: true},
		{name: "ours before, a requeue", current: "gpuprof:v1:gpus=1,final=0\n", answer: modified, comment: ours, written: true},
		{name: "the same already", current: ours + "\n", answer: modified, comment: ours},
		{name: "jobstats'", current: "JS1:H4sIAAAAAAAAA+1X\n", answer: modified, comment: ours, wantErr: ErrForeignComment},
		{name: "an admin's note", current: "checked by bob\n", answer: modified, comment: ours, wantErr: ErrForeignComment},
		{name: "not in slurmdbd yet", current: "\n", answer: " Nothing modified", comment: ours, anyErr: true, written: true},
		{name: "text 22.05 would lowercase", current: "\n", answer: modified, comment: "gpuprof:v1:Class=X", wantErr: ErrUnsafeComment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, dir := fakeAccounting(t, tc.current, tc.answer)
			err := a.Annotate(context.Background(), "lab", "4242", tc.comment)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err %v, want %v", err, tc.wantErr)
			case tc.wantErr == nil && !tc.anyErr && err != nil:
				t.Errorf("err %v", err)
			case tc.anyErr && err == nil:
				t.Errorf("no error")
			}
			args, rerr := os.ReadFile(filepath.Join(dir, "sacctmgr.args"))
			if written := rerr == nil; written != tc.written {
				t.Fatalf("sacctmgr ran: %v, want %v", written, tc.written)
			}
			if tc.written {
				want := "-i\nmodify\njob\nwhere\njobid=4242\ncluster=lab\nset\nAdminComment=" + tc.comment + "\n"
				if string(args) != want {
					t.Errorf("sacctmgr %q, want %q", args, want)
				}
			}
			if tc.wantErr != ErrUnsafeComment {
				sargs, _ := os.ReadFile(filepath.Join(dir, "sacct.args"))
				if !strings.Contains(string(sargs), "--jobs=4242") || !strings.Contains(string(sargs), "--format=AdminComment") {
					t.Errorf("sacct %q", sargs)
				}
			}
		})
	}
}
