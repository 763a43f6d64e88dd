package jobsource

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gpuprof/gpuprof/config"
	"github.com/gpuprof/gpuprof/store"
)

// TestOpenUnknownAdminGroup: an admin_group this host does not know has
// the one policy of store.Admins (issue #41): the command runs, with no
// one an admin but root and the database's owner, and the source keeps
// the warning for the command to print (before, Open refused).
func TestOpenUnknownAdminGroup(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuprof.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := config.Config{DB: path, AdminGroup: "no-such-group-here"}
	for _, tt := range []struct {
		name      string
		uid       int
		wantAdmin bool
	}{
		{name: "root", uid: 0, wantAdmin: true},
		{name: "another user", uid: 4242, wantAdmin: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := Open(ctx, cfg, Options{UID: tt.uid})
			if err != nil {
				t.Fatalf("Open: %v, want it to run with root only as admin", err)
			}
			defer src.Close()
			var unknown *store.UnknownAdminGroupError
			if !errors.As(src.AdminWarning(), &unknown) {
				t.Errorf("AdminWarning = %v, want the unknown group said", src.AdminWarning())
			}
			if got := src.Identity().Admin; got != tt.wantAdmin {
				t.Errorf("uid %d admin = %v, want %v", tt.uid, got, tt.wantAdmin)
			}
		})
	}
}
