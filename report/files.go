package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpuprof/gpuprof/internal/safefs"
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
// file's path once it is written. The directory is walked and written
// through internal/safefs (no link followed, a file created new), since a
// root cron job may write into a directory another account can change.
func WriteFiles(dir string, formats []string, d Data, suffix string, wrote func(path string)) error {
	out, err := safefs.MkdirAll(dir, 0o755)
	if err != nil {
		return err
	}
	defer out.Close()
	base := "gpuprof-report-" + d.Month + suffix
	for _, f := range formats {
		name := base + "." + f
		if err := writeReportFile(out, name, f, d); err != nil {
			return err
		}
		if wrote != nil {
			wrote(filepath.Join(dir, name))
		}
	}
	return nil
}

// writeReportFile writes one format through a temporary file in dir, so
// a reader never sees half a report.
func writeReportFile(dir *safefs.Dir, name, format string, d Data) (err error) {
	tmp, tmpName, err := dir.CreateTemp(".report-", 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = dir.Remove(tmpName)
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
		return fmt.Errorf("%s: %w", filepath.Join(dir.Path(), name), err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return dir.Rename(tmpName, dir, name)
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
