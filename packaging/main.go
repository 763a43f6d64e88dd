// Command package builds gpuprof's Debian and RPM packages from one
// definition, nfpm.yaml, with nfpm's library (github.com/goreleaser/nfpm):
// the same files, conffiles and maintainer scripts in both. It is its own
// module so that the packager's dependencies stay out of gpuprof's binary
// and out of go test ./... of the main module. make package runs it after
// it has staged the binary, man pages and completions under build/pkg.
//
//	go run . -config nfpm.yaml -out ../dist -version 0.3.0 deb rpm
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb"
	_ "github.com/goreleaser/nfpm/v2/rpm"
)

func main() {
	config := flag.String("config", "nfpm.yaml", "the package definition")
	out := flag.String("out", "dist", "directory for the packages")
	version := flag.String("version", "", "package version (default: $VERSION, else 0.0.0)")
	flag.Parse()
	formats := flag.Args()
	if len(formats) == 0 {
		formats = []string{"deb", "rpm"}
	}
	if err := run(*config, *out, *version, formats); err != nil {
		fmt.Fprintln(os.Stderr, "package:", err)
		os.Exit(1)
	}
}

func run(config, out, version string, formats []string) error {
	env := func(k string) string {
		if k == "VERSION" && version != "" {
			return version
		}
		return os.Getenv(k)
	}
	cfg, err := nfpm.ParseFileWithEnvMapping(config, env)
	if err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, format := range formats {
		info, err := cfg.Get(format)
		if err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
		info = nfpm.WithDefaults(info)
		if err := nfpm.Validate(info); err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
		pkgr, err := nfpm.Get(format)
		if err != nil {
			return err
		}
		path := filepath.Join(out, pkgr.ConventionalFileName(info))
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pkgr.Package(info, f); err != nil {
			f.Close()
			os.Remove(path)
			return fmt.Errorf("%s: %w", format, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}
