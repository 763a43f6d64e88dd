package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// render returns the report of d in all three formats.
func renderAll(t *testing.T, d Data) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, f := range map[string]func(*bytes.Buffer, Data) error{
		"html": func(b *bytes.Buffer, d Data) error { return WriteHTML(b, d) },
		"md":   func(b *bytes.Buffer, d Data) error { return WriteMarkdown(b, d) },
		"json": func(b *bytes.Buffer, d Data) error { return WriteJSON(b, d) },
	} {
		var b bytes.Buffer
		if err := f(&b, d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report/ -update to create it)", err)
	}
	if got != string(want) {
		g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(g), len(w)) {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				t.Errorf("%s differs from the golden file at line %d:\n got: %q\nwant: %q\n(run go test ./report/ -update and review the diff)", name, i+1, gl, wl)
				break
			}
		}
	}
}

func TestGolden(t *testing.T) {
	out := renderAll(t, fixture())
	golden(t, "month.md.golden", out["md"])
	golden(t, "month.json.golden", out["json"])
	var v map[string]any
	if err := json.Unmarshal([]byte(out["json"]), &v); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	if v["schema"] != Schema {
		t.Errorf("schema = %v, want %s", v["schema"], Schema)
	}
}

func TestSectionsInOrder(t *testing.T) {
	out := renderAll(t, fixture())
	titles := []string{"Headline numbers", "Queue wait and run time by partition", "Work by task class, account and user",
		"Bottlenecks", "Notices to users", "GPU-hours lost", "This month against earlier months", "Capacity plan", "What buying or changing would do", "Recommendations",
		"Rules that found nothing to change", "Top task profiles", "Methods and data"}
	for _, format := range []string{"html", "md"} {
		pos := 0
		for _, title := range titles {
			i := strings.Index(out[format][pos:], title)
			if i < 0 {
				t.Errorf("%s: section %q missing or out of order", format, title)
				continue
			}
			pos += i
		}
	}
}
