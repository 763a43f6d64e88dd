package main

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// table lays out rows of cells in columns padded by display width (a CJK
// character or an emoji takes two terminal cells), which text/tabwriter,
// counting runes, gets wrong. Cells must already be sanitised
// (termtext.Clean): a table measures them, it does not clean them.
type table struct {
	rows [][]string
	// right marks the columns aligned to the right (numbers).
	right map[int]bool
	// gap is what separates two left-aligned columns: two spaces unless
	// set (sacct's one space for a table that must fit 120 columns).
	gap string
}

func newTable(header ...string) *table {
	return &table{rows: [][]string{header}, right: map[int]bool{}}
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table with gap (two spaces by default) between
// columns, one space before a right-aligned column, whose padding
// already sets it apart, and no padding after the last one.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	gap := t.gap
	if gap == "" {
		gap = "  "
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			switch {
			case t.right[i]:
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
			if i < len(r)-1 {
				if t.right[i+1] {
					b.WriteString(" ")
				} else {
					b.WriteString(gap)
				}
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitWidth cuts s to at most n terminal cells, marking a cut with "…".
func fitWidth(s string, n int) string {
	if ansi.StringWidth(s) <= n {
		return s
	}
	return ansi.Truncate(s, n, "…")
}
