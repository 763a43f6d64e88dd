package slurmext

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mapOpener reads configuration files from a map, as fuzz and table tests
// need.
func mapOpener(files map[string]string) ConfOpener {
	return func(path string) ([]byte, error) {
		s, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return []byte(s), nil
	}
}

func pairsOf(t *ConfText) [][]string {
	var out [][]string
	for _, l := range t.Lines {
		var kv []string
		for _, p := range l.Pairs {
			kv = append(kv, p.Key+"="+p.Value)
		}
		out = append(out, kv)
	}
	return out
}

// TestConfSyntax: parse_config.c's rules (comments, continuation, escapes,
// quotes, spaces around '='), each case written from the C source.
func TestConfSyntax(t *testing.T) {
	tests := []struct {
		name, in string
		want     [][]string
	}{
		{"comment", "A=1 # B=2\n#C=3\n", [][]string{{"A=1"}}},
		{"escaped hash", `A=x\#y`, [][]string{{"A=x#y"}}},
		{"hash after two backslashes is a comment", `A=x\\#y`, [][]string{{`A=x\`}}},
		{"hash inside quotes is a comment too", `A="x #y"`, nil},
		{"continuation joins directly", "NodeName=n1 \\\nGres=gpu:2\n", [][]string{{"NodeName=n1", "Gres=gpu:2"}}},
		{"continuation without space glues", "Nodes=a,\\\nb\n", [][]string{{"Nodes=a,b"}}},
		{"trailing space after backslash", "A=1 \\  \nB=2\n", [][]string{{"A=1", "B=2"}}},
		{"two backslashes do not continue", "A=x\\\\\nB=2\n", [][]string{{`A=x\`}, {"B=2"}}},
		{"comment then backslash continues", "A=1 \\ # note\nB=2\n", [][]string{{"A=1", "B=2"}}},
		{"spaces around =", "Name = gpu  File= /dev/nvidia0", [][]string{{"Name=gpu", "File=/dev/nvidia0"}}},
		{"quoted value with space", `A="x y" B=2`, [][]string{{"A=x y", "B=2"}}},
		{"crlf", "A=1\r\nB=2\r\n", [][]string{{"A=1"}, {"B=2"}}},
		{"operator", "A+=1", [][]string{{"A=1"}}},
		{"dotted key", "x.y=1", [][]string{{"x.y=1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfText("c", []byte(tt.in))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("parsed %v, want an error (unterminated quote)", pairsOf(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := pairsOf(got); !reflect.DeepEqual(g, tt.want) {
				t.Fatalf("got %q, want %q", g, tt.want)
			}
		})
	}
}

func TestConfInclude(t *testing.T) {
	files := map[string]string{
		"/etc/slurm/slurm.conf":      "ClusterName=Alpha\ninclude nodes.conf\nINCLUDE /opt/conf/parts.conf\nInclude %c.extra\nX=last\n",
		"/etc/slurm/nodes.conf":      "NodeName=n[1-2]\nInclude sub/deeper.conf\n",
		"/etc/slurm/sub/deeper.conf": "NodeName=n3\nInclude more.conf\n",
		"/etc/slurm/sub/more.conf":   "NodeName=n4\n",
		"/opt/conf/parts.conf":       "PartitionName=p Nodes=n[1-4]\n",
		"/etc/slurm/alpha.extra":     "Y=1\n",
	}
	got, err := ReadConfText("/etc/slurm/slurm.conf", mapOpener(files))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"ClusterName=Alpha"}, {"NodeName=n[1-2]"}, {"NodeName=n3"}, {"NodeName=n4"}, {"PartitionName=p", "Nodes=n[1-4]"}, {"Y=1"}, {"X=last"}}
	if g := pairsOf(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("lines %q, want %q", g, want)
	}
	wantFiles := []string{"/etc/slurm/slurm.conf", "/etc/slurm/nodes.conf", "/etc/slurm/sub/deeper.conf", "/etc/slurm/sub/more.conf", "/opt/conf/parts.conf", "/etc/slurm/alpha.extra"}
	if !reflect.DeepEqual(got.Files, wantFiles) {
		t.Fatalf("files %q, want %q", got.Files, wantFiles)
	}
	if got.Lines[3].File != "/etc/slurm/sub/more.conf" || got.Lines[3].Line != 1 {
		t.Fatalf("line 4 at %s", got.Lines[3].Where())
	}
}

func TestConfIncludeErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
		is    error
	}{
		{"missing", map[string]string{"/s/slurm.conf": "A=1\nInclude nodes.conf\n"}, `"/s/nodes.conf" (included from "/s/slurm.conf")`, fs.ErrNotExist},
		{"cycle", map[string]string{"/s/slurm.conf": "Include a.conf\n", "/s/a.conf": "Include slurm.conf\n"}, "Include cycle", ErrBadConf},
		{"self", map[string]string{"/s/slurm.conf": "Include ./slurm.conf\n"}, "Include cycle", ErrBadConf},
		{"glob", map[string]string{"/s/slurm.conf": "Include conf.d/*.conf\n"}, "does not expand globs", ErrBadConf},
		{"%c without ClusterName", map[string]string{"/s/slurm.conf": "Include %c.conf\n"}, "no ClusterName", ErrBadConf},
		{"not key=value", map[string]string{"/s/slurm.conf": "A=1\nnonsense here\n"}, `"/s/slurm.conf" line 2: expected Key=Value`, ErrBadConf},
		{"relative include that the version decides", map[string]string{"/s/slurm.conf": "Include d/a.conf\n", "/s/d/a.conf": "Include b.conf\n", "/s/b.conf": "A=1\n", "/s/d/b.conf": "A=2\n"}, "depends on the version", ErrBadConf},
		{"error in an included file names it", map[string]string{"/s/slurm.conf": "Include n.conf\n", "/s/n.conf": "\n\nbad\n"}, `"/s/n.conf" line 3`, ErrBadConf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadConfText("/s/slurm.conf", mapOpener(tt.files))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want one containing %q and wrapping %v", err, tt.want, tt.is)
			}
		})
	}
	deep := map[string]string{}
	for i := 0; i < 40; i++ {
		deep["/s/"+string(rune('a'+i))+".conf"] = "Include " + string(rune('a'+i+1)) + ".conf\n"
	}
	if _, err := ReadConfText("/s/a.conf", mapOpener(deep)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("40 levels: %v, want ErrTooLarge", err)
	}
	// Many includes of one big file stay within MaxConfBytes in all.
	big := map[string]string{"/s/big.conf": strings.Repeat("A=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 1<<15)}
	var main strings.Builder
	for i := 0; i < 80; i++ {
		main.WriteString("Include big.conf\n")
	}
	big["/s/slurm.conf"] = main.String()
	if _, err := ReadConfText("/s/slurm.conf", mapOpener(big)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("80 MiB in all: %v, want ErrTooLarge", err)
	}
}

// TestReadConfFileFIFO: a FIFO in place of a file is refused at once, not
// waited on.
func TestReadConfFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "slurm.conf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadConfFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("FIFO: %v, want not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadConfFile blocked on a FIFO")
	}
	if _, err := ReadConfFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	real := filepath.Join(dir, "real.conf")
	os.WriteFile(real, []byte("Include slurm.conf\n"), 0o600)
	if _, err := ReadConfText(real, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("include of a FIFO: %v", err)
	}
}
