package slurmext

import (
	"reflect"
	"testing"
)

// The values of SLURM_JOB_MAIL_TYPE are _mail_type_str's in
// src/slurmctld/agent.c (22.05 to 25.x).
func TestMailTypeReportsRun(t *testing.T) {
	for typ, want := range map[string]bool{
		"Began": false, "Ended": true, "Failed": true, "Requeued": true,
		"StageOut/Teardown": false, "Reached time limit": true,
		"Reached 90% of time limit": true, "Reached 80% of time limit": true, "Reached 50% of time limit": true,
		"Invalid dependency": false, "unknown": false, "": false, "ended": false,
	} {
		if got := MailTypeReportsRun(typ); got != want {
			t.Errorf("MailTypeReportsRun(%q) = %v, want %v", typ, got, want)
		}
	}
}

func TestAdminCommentSafe(t *testing.T) {
	for s, want := range map[string]bool{
		"gpuprof:v1:gpus=2,used=1,util=30,idle=0.50,class=short_debug,hint=unused_gpus,final=1": true,
		"": true,
		// 22.05's sacctmgr lowercases the value and turns quotes into
		// backquotes: JSON and base64 do not survive it.
		`gpuprof:v1:{"gpus":2}`: false, "JS1:H4sIAAA": false, "a'b": false, "a`b": false,
		"a|b": false, "a b": false, "a\nb": false, "é": false,
	} {
		if got := AdminCommentSafe(s); got != want {
			t.Errorf("AdminCommentSafe(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestAdminCommentCommands(t *testing.T) {
	if got, want := SacctmgrSetAdminComment("lab", "42", "gpuprof:v1:x=1"), []string{"-i", "modify", "job", "where", "jobid=42", "cluster=lab", "set", "AdminComment=gpuprof:v1:x=1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sacctmgr %q, want %q", got, want)
	}
	if got, want := SacctAdminComment("", "42"), []string{"--noheader", "--parsable2", "--allocations", "--jobs=42", "--format=AdminComment"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sacct %q, want %q", got, want)
	}
	for out, want := range map[string]string{"": "", "\n": "", "gpuprof:v1:a=1\n": "gpuprof:v1:a=1", "x\ny\n": "y"} {
		if got := ParseSacctAdminComment(out); got != want {
			t.Errorf("ParseSacctAdminComment(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestParseSqueueIDUserName(t *testing.T) {
	// A name with a line break: its second line starts no record.
	out := "8101|alice|train|resnet\n8102|bob|e2e-mail\nBcc: victim@example.org\n8103|carol|\n\n"
	got := ParseSqueueIDUserName(out)
	want := map[string]SqueueJob{"8101": {"alice", "train|resnet"}, "8102": {"bob", "e2e-mail"}, "8103": {"carol", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
