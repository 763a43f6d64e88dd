package store

import (
	"errors"
	"os"
	"os/user"
	"strings"
	"testing"
)

// TestAdminsSlurmUser: the SlurmUser reads every job (MailProg's and
// jobcomp's summaries); an unknown SlurmUser adds no one, and anyone else
// stays a user.
func TestAdminsSlurmUser(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	uid := os.Getuid()
	if uid == 0 {
		t.Skip("root is an admin anyway")
	}
	isAdmin, err := Admins("", me.Username)
	if err != nil {
		t.Fatal(err)
	}
	if !isAdmin(uid) || !isAdmin(0) || isAdmin(uid+1) {
		t.Errorf("Admins(\"\", %s): uid %d %v, root %v, uid %d %v; want true, true, false", me.Username, uid, isAdmin(uid), isAdmin(0), uid+1, isAdmin(uid+1))
	}
	isAdmin, err = Admins("", "no-such-slurm-user-here")
	if err != nil {
		t.Fatal(err)
	}
	if isAdmin(uid) || !isAdmin(0) || isAdmin(-1) {
		t.Errorf("an unknown SlurmUser: uid %d admin %v, root %v, -1 %v", uid, isAdmin(uid), isAdmin(0), isAdmin(-1))
	}
}

// TestAdminsUnknownGroup: an admin_group this host does not know has one
// policy (issue #41): no one but root is an admin, not the SlurmUser
// either, and the error says so for the caller to log.
func TestAdminsUnknownGroup(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	uid := os.Getuid()
	if uid == 0 {
		t.Skip("root is an admin anyway")
	}
	isAdmin, err := Admins("no-such-group-here", me.Username)
	var unknown *UnknownAdminGroupError
	if !errors.As(err, &unknown) || unknown.Group != "no-such-group-here" || !strings.Contains(err.Error(), "only root reads every user's jobs") {
		t.Fatalf("err = %v, want an *UnknownAdminGroupError saying only root reads every job", err)
	}
	if isAdmin == nil || !isAdmin(0) || isAdmin(uid) || isAdmin(uid+1) {
		t.Errorf("an unknown group: root %v, the SlurmUser (uid %d) %v; want root alone", isAdmin != nil && isAdmin(0), uid, isAdmin != nil && isAdmin(uid))
	}
}

// TestRequireAdmin: the one check of an answer that reads every user's
// jobs, in one sentence that names the caller, cleaned.
func TestRequireAdmin(t *testing.T) {
	if err := (Caller{UID: 0, Admin: true}).RequireAdmin("x"); err != nil {
		t.Errorf("an admin: %v", err)
	}
	err := Caller{UID: 1001, User: "ann\x1b[31m"}.RequireAdmin("gpuprof whatif replays every user's jobs")
	const want = "gpuprof whatif replays every user's jobs: it is for root and admin_group only (ann"
	if !errors.Is(err, ErrAdminOnly) || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), " sees only their own)") || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("err = %q, want %q… naming the user, cleaned", err, want)
	}
}
