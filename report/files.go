package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Formats checks the formats asked for (html, md, json; markdown and htm
// stand for md and html) and returns them in the order asked, each once.
func Formats(in []string) ([]string, error) {
	var out []string
	for _, f := range in {
		f = strings.ToLower(strings.TrimSpace(f))
		switch f {
		case "markdown":
			f = "md"
		case "htm":
			f = "html"
		}
		if f != "html" && f != "md" && f != "json" {
			return nil, fmt.Errorf("want html, md or json, got %q", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no format given")
	}
	return out, nil
}

// WriteFiles writes d in each of formats (Formats) into dir, made when
// missing, as gpuprof-report-MONTH<suffix>.FORMAT (suffix: "" or, for
// one report of several, ClusterSuffix). wrote (if not nil) is told each
// file's path once it is written.
func WriteFiles(dir string, formats []string, d Data, suffix string, wrote func(path string)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "gpuprof-report-"+d.Month+suffix)
	for _, f := range formats {
		path := base + "." + f
		if err := writeReportFile(path, f, d); err != nil {
			return err
		}
		if wrote != nil {
			wrote(path)
		}
	}
	return nil
}

// writeReportFile writes one format through a temporary file, so a reader
// never sees half a report.
func writeReportFile(path, format string, d Data) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	switch format {
	case "html":
		err = WriteHTML(tmp, d)
	case "md":
		err = WriteMarkdown(tmp, d)
	case "json":
		err = WriteJSON(tmp, d)
	default:
		err = fmt.Errorf("unknown report format %q (Formats checks them)", format)
	}
	if err != nil {
		_ = tmp.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ClusterSuffix ends the file names of one cluster's report of several:
// "-" and the cluster's name made safe for a file name.
func ClusterSuffix(cluster string) string { return "-" + fileSafe(cluster) }

// fileSafe is a cluster name as part of a file name: letters, digits,
// '.', '_' and '-' kept, anything else '_'.
func fileSafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		return "_" + string(b)
	}
	return string(b)
}
