// Package texttable lays out plain-text tables for a terminal or a mail:
// columns padded by display width, so that a CJK character or an emoji
// (two cells) does not shift a column. It measures cells; it does not
// clean them (termtext does) or format numbers (internal/present does).
package texttable

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Table lays out rows of cells in columns padded by display width (a CJK
// character or an emoji takes two terminal cells), which text/tabwriter,
// counting runes, gets wrong. Cells must already be sanitised
// (termtext.Clean): a table measures them, it does not clean them.
type Table struct {
	rows [][]string
	// Right marks the columns aligned to the right (numbers).
	Right map[int]bool
	// Gap is what separates two left-aligned columns: two spaces unless
	// set (sacct's one space for a table that must fit 120 columns).
	Gap string
}

// New starts a table with its header row.
func New(header ...string) *Table {
	return &Table{rows: [][]string{header}, Right: map[int]bool{}}
}

// Row adds a row of cells.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write prints the table with gap (two spaces by default) between
// columns, one space before a right-aligned column, whose padding
// already sets it apart, and no padding after the last one.
func (t *Table) Write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	gap := t.Gap
	if gap == "" {
		gap = "  "
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			switch {
			case t.Right[i]:
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
			if i < len(r)-1 {
				if t.Right[i+1] {
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

// FitWidth cuts s to at most n terminal cells, marking a cut with "…".
func FitWidth(s string, n int) string {
	if ansi.StringWidth(s) <= n {
		return s
	}
	return ansi.Truncate(s, n, "…")
}
