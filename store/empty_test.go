package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A reader (jobs, show, tui) that finds an empty file says so, instead of
// calling it an old schema, and leaves it as it was; a writer (agent,
// hooks) initialises the same file.
func TestReadOnlyOpenOfAnEmptyFile(t *testing.T) {
	tests := []struct {
		name string
		mk   func(t *testing.T, path string)
	}{
		{"0-byte file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"sqlite database with nothing in it", func(t *testing.T, path string) {
			db := rawDB(t, path)
			if _, err := db.Exec("VACUUM"); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			before := writeFixture(t, path, tt.mk)
			files := listDir(t, dir)
			db, err := Open(context.Background(), path, Options{ReadOnly: true, BusyTimeout: time.Second})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("read-only Open: got %v, want ErrEmpty", err)
			}
			for _, want := range []string{path, "empty", "not a gpuprof database"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "older") || strings.Contains(err.Error(), "version 0") {
				t.Errorf("error %q calls an empty file an old schema", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("read-only Open changed the file")
			}
			if got := listDir(t, dir); !slices.Equal(got, files) {
				t.Errorf("files after read-only Open = %v, want %v", got, files)
			}
			w, err := Open(context.Background(), path, Options{BusyTimeout: time.Second})
			if err != nil {
				t.Fatalf("a writer does not initialise the empty file: %v", err)
			}
			w.Close()
			r, err := Open(context.Background(), path, Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only Open after the writer: %v", err)
			}
			r.Close()
		})
	}
}

// The refusals name what the file is and that it was left alone.
func TestRefusalMessages(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "other.db")
	db := rawDB(t, foreign)
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tt := range []struct {
		path string
		want []string
	}{
		{text, []string{"not a gpuprof database", "no SQLite header", "left untouched"}},
		{foreign, []string{"not a gpuprof database", "another program", "left untouched"}},
	} {
		for _, ro := range []bool{false, true} {
			_, err := Open(context.Background(), tt.path, Options{ReadOnly: ro})
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Open(%s, read-only %v): %v, want it to say %q", filepath.Base(tt.path), ro, err, w)
				}
			}
		}
	}
}
