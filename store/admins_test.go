package store

import (
	"os"
	"os/user"
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
