package slurmext

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// This file is the one reader of Slurm's configuration syntax, shared by
// slurm.conf and gres.conf, as src/common/parse_config.c reads it:
//
//   - a '#' preceded by an even number of backslashes starts a comment, also
//     inside double quotes (Slurm strips comments before it reads values);
//   - a line that ends, before trailing white space, in an odd number of
//     backslashes continues on the next: the last backslash is removed and
//     the next line is joined directly, without a space;
//   - then every backslash escapes the character after it ("\#" is '#',
//     "\\" is '\');
//   - a logical line is Key=Value pairs (keys of letters, digits, '_' and
//     '.', matched case-insensitively; white space allowed around '='; a
//     value is "double quoted", may then hold spaces, or runs to the next
//     white space);
//   - "Include FILE" (any case) reads FILE in its place. "%c" in FILE is the
//     ClusterName set so far (lowercased). A relative FILE is read from the
//     directory of the first file (slurm.conf), as slurm.conf(5) says and
//     Slurm 23.02 and later do (get_extra_conf_path); 22.05 and earlier read
//     it from the including file's directory (_add_full_path). The two
//     differ only for a file included from another directory: then the one
//     that exists is read, and both existing is an error (the version
//     decides, and is not known here). Slurm does not expand globs (24.05
//     says so: "Slurm does not support glob parsing"), so '*' is an error.
//
// A missing included file, an Include cycle, more than MaxConfDepth levels,
// more than MaxConfBytes bytes in all, and a line that is not Key=Value
// pairs are errors naming the file and line: refused, never guessed.

// Bounds on reading Slurm's configuration.
const (
	// MaxConfBytes bounds the bytes of one configuration with all the files
	// it includes.
	MaxConfBytes = 64 << 20
	// MaxConfDepth bounds how deeply Include lines nest.
	MaxConfDepth = 16
	// maxConfLines bounds the logical lines of one configuration.
	maxConfLines = 4 << 20
	// maxConfLine bounds one logical line (continuations joined).
	maxConfLine = 1 << 20
)

// ErrBadConf means Slurm's configuration syntax cannot be read: a line that
// is not Key=Value pairs, an Include that cannot be followed.
var ErrBadConf = errors.New("malformed Slurm configuration")

// ConfPair is one Key=Value of a configuration line, the key as written.
type ConfPair struct {
	Key, Value string
}

// ConfLine is one logical line of a configuration: its pairs, the file it
// is in and the physical line it starts on.
type ConfLine struct {
	File  string
	Line  int
	Pairs []ConfPair
}

// Get returns the value of key (case-insensitive) on the line, and whether
// the line has it. A key given twice keeps its last value.
func (l ConfLine) Get(key string) (string, bool) {
	v, ok := "", false
	for _, p := range l.Pairs {
		if strings.EqualFold(p.Key, key) {
			v, ok = p.Value, true
		}
	}
	return v, ok
}

// Where names the line for an error: "file line N".
func (l ConfLine) Where() string {
	return fmt.Sprintf("%s line %d", QuoteShort(l.File), l.Line)
}

// ConfText is a configuration read with every Include followed: its lines
// in the order Slurm reads them, and the files read (the first is the one
// asked for).
type ConfText struct {
	Files []string
	Lines []ConfLine
}

// ConfOpener reads one configuration file; ReadConfFile in production, a
// map of names to texts in tests.
type ConfOpener func(path string) ([]byte, error)

// ReadConfText reads the configuration file at path with open, following
// its Include lines (open nil: ReadConfFile).
func ReadConfText(path string, open ConfOpener) (*ConfText, error) {
	if open == nil {
		open = ReadConfFile
	}
	p := &confParser{open: open, text: &ConfText{}}
	if err := p.file(path, nil, 0); err != nil {
		return nil, err
	}
	return p.text, nil
}

// ParseConfText reads one configuration text named name; an Include in it
// is an error (there is no file to resolve it from).
func ParseConfText(name string, data []byte) (*ConfText, error) {
	p := &confParser{text: &ConfText{}}
	p.open = func(path string) ([]byte, error) {
		if path == name {
			return data, nil
		}
		return nil, fmt.Errorf("Include %s is not supported in a configuration read from a stream (no file to resolve it from): %w", QuoteShort(path), ErrBadConf)
	}
	if err := p.file(name, nil, 0); err != nil {
		return nil, err
	}
	return p.text, nil
}

// ReadConfFile reads a configuration file: a regular file (a FIFO or a
// device in its place is refused, without blocking on it) of at most
// MaxConfBytes bytes.
func ReadConfFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): %w", QuoteShort(path), st.Mode().Type(), ErrBadConf)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxConfBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxConfBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", QuoteShort(path), MaxConfBytes, ErrTooLarge)
	}
	return b, nil
}

type confParser struct {
	open    ConfOpener
	text    *ConfText
	bytes   int
	cluster string // ClusterName so far, for %c
}

// file reads one file; stack holds the files including it.
func (p *confParser) file(path string, stack []string, depth int) error {
	data, err := p.open(path)
	if err != nil {
		// A PathError would carry the raw path into the message: name it
		// quoted instead.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
			if len(stack) > 0 {
				return fmt.Errorf("%s (included from %s): %w", QuoteShort(path), QuoteShort(stack[len(stack)-1]), err)
			}
			return fmt.Errorf("%s: %w", QuoteShort(path), err)
		}
		return err
	}
	p.bytes += len(data)
	if p.bytes > MaxConfBytes {
		return fmt.Errorf("%s: the configuration is more than %d bytes with its included files: %w", QuoteShort(path), MaxConfBytes, ErrTooLarge)
	}
	p.text.Files = append(p.text.Files, path)
	stack = append(stack, path)
	err = scanConfLines(data, func(lineNo int, line string) error {
		where := func() string { return fmt.Sprintf("%s line %d", QuoteShort(path), lineNo) }
		if name, ok := includeTarget(line); ok {
			return p.include(name, where(), stack, depth)
		}
		pairs, err := splitConfPairs(line)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		if len(pairs) == 0 {
			return nil
		}
		if len(p.text.Lines) >= maxConfLines {
			return fmt.Errorf("%s: more than %d lines: %w", where(), maxConfLines, ErrTooLarge)
		}
		for _, pr := range pairs {
			if strings.EqualFold(pr.Key, "ClusterName") {
				p.cluster = strings.ToLower(pr.Value)
			}
		}
		p.text.Lines = append(p.text.Lines, ConfLine{File: path, Line: lineNo, Pairs: pairs})
		return nil
	})
	if err != nil && !strings.HasPrefix(err.Error(), QuoteShort(path)) {
		return fmt.Errorf("%s %w", QuoteShort(path), err)
	}
	return err
}

func (p *confParser) include(name, where string, stack []string, depth int) error {
	if strings.Contains(name, "%c") {
		if p.cluster == "" {
			return fmt.Errorf("%s: Include %s: no ClusterName set before it for %%c: %w", where, QuoteShort(name), ErrBadConf)
		}
		name = strings.ReplaceAll(name, "%c", p.cluster)
	}
	if strings.Contains(name, "*") {
		return fmt.Errorf("%s: Include %s: Slurm does not expand globs: %w", where, QuoteShort(name), ErrBadConf)
	}
	if !filepath.IsAbs(name) {
		rel := name
		name = filepath.Join(filepath.Dir(stack[0]), rel)
		if old := filepath.Join(filepath.Dir(stack[len(stack)-1]), rel); old != name {
			// Slurm 23.02 and later resolve from slurm.conf's directory,
			// 22.05 and earlier from the including file's: use the one
			// that exists; when both do, the version decides, and this
			// reader does not guess it.
			_, errNew := p.open(name)
			_, errOld := p.open(old)
			switch {
			case errNew != nil && errOld == nil:
				name = old
			case errNew == nil && errOld == nil:
				return fmt.Errorf("%s: Include %s: both %s (Slurm 23.02 and later) and %s (Slurm 22.05 and earlier) exist: which is read depends on the version: %w",
					where, QuoteShort(rel), QuoteShort(name), QuoteShort(old), ErrBadConf)
			}
		}
	}
	name = filepath.Clean(name)
	for _, s := range stack {
		if filepath.Clean(s) == name {
			return fmt.Errorf("%s: Include %s: an Include cycle: %w", where, QuoteShort(name), ErrBadConf)
		}
	}
	if depth+1 > MaxConfDepth {
		return fmt.Errorf("%s: Include %s: more than %d levels of Include: %w", where, QuoteShort(name), MaxConfDepth, ErrTooLarge)
	}
	if err := p.file(name, stack, depth+1); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// includeTarget reports an Include line and the file it names.
func includeTarget(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t\v\f\r\n")
	if len(t) < 8 || !strings.EqualFold(t[:7], "include") || !isConfSpace(t[7]) {
		return "", false
	}
	f := strings.Fields(t[8:])
	if len(f) == 0 {
		return "", true
	}
	return f[0], true
}

// scanConfLines calls fn with each logical line (comments removed,
// continuations joined, escapes resolved), numbered by the physical line it
// starts on.
func scanConfLines(data []byte, fn func(lineNo int, line string) error) error {
	var logical strings.Builder
	lineNo, start := 0, 0
	rest := string(data)
	for len(rest) > 0 {
		var raw string
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			raw, rest = rest, ""
		}
		lineNo++
		if logical.Len() == 0 {
			start = lineNo
		}
		line, cont := joinContinued(stripConfComment(raw))
		if logical.Len()+len(line) > maxConfLine {
			return fmt.Errorf("line %d: logical line longer than %d bytes: %w", start, maxConfLine, ErrBadConf)
		}
		logical.WriteString(line)
		if cont && len(rest) > 0 {
			continue
		}
		s := unescapeConf(logical.String())
		logical.Reset()
		if err := fn(start, s); err != nil {
			return err
		}
	}
	return nil
}

// stripConfComment cuts a line at the first '#' preceded by an even number
// of backslashes.
func stripConfComment(line string) string {
	bs := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '#':
			if bs%2 == 0 {
				return line[:i]
			}
			bs = 0
		case '\\':
			bs++
		default:
			bs = 0
		}
	}
	return line
}

// joinContinued reports a line that ends, before trailing white space, in
// an odd number of backslashes, and returns it without that last backslash
// and what follows it.
func joinContinued(line string) (string, bool) {
	t := strings.TrimRight(line, " \t\v\f\r")
	bs := len(t) - len(strings.TrimRight(t, `\`))
	if bs%2 == 1 {
		return t[:len(t)-1], true
	}
	return line, false
}

// unescapeConf removes each backslash and keeps the character after it.
func unescapeConf(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isConfSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

func isConfKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// splitConfPairs splits a logical line into Key=Value pairs. Slurm's
// operators ("Key+=Value") are read as "=": gpuprof reads no key that
// takes them.
func splitConfPairs(line string) ([]ConfPair, error) {
	var pairs []ConfPair
	i := 0
	skip := func() {
		for i < len(line) && isConfSpace(line[i]) {
			i++
		}
	}
	for {
		skip()
		if i == len(line) {
			return pairs, nil
		}
		start := i
		for i < len(line) && isConfKeyChar(line[i]) {
			i++
		}
		key := line[start:i]
		skip()
		if i < len(line) && strings.IndexByte("+-*/", line[i]) >= 0 && i+1 < len(line) && line[i+1] == '=' {
			i++
		}
		if key == "" || i == len(line) || line[i] != '=' {
			return nil, fmt.Errorf("expected Key=Value at %s: %w", QuoteShort(line[start:]), ErrBadConf)
		}
		i++ // '='
		skip()
		var value string
		if i < len(line) && line[i] == '"' {
			end := strings.IndexByte(line[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in %s: %w", QuoteShort(line[start:]), ErrBadConf)
			}
			value = line[i+1 : i+1+end]
			i += end + 2
			if i < len(line) && !isConfSpace(line[i]) {
				return nil, fmt.Errorf("expected white space after the quoted value in %s: %w", QuoteShort(line[start:]), ErrBadConf)
			}
		} else {
			vs := i
			for i < len(line) && !isConfSpace(line[i]) {
				i++
			}
			value = line[vs:i]
		}
		pairs = append(pairs, ConfPair{Key: key, Value: value})
	}
}
