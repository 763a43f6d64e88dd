package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report as GitHub-flavoured Markdown: the same
// sections as the HTML, without the charts. Text is escaped so that no
// name can open a link, an HTML tag or emphasis, or break a table; code
// blocks use a fence longer than any backtick run inside them.
func WriteMarkdown(w io.Writer, d Data) error {
	d = cleanData(d)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", escapeMarkdown(title(&d)))
	var meta []string
	if d.Cluster != "" {
		meta = append(meta, "Cluster "+escapeMarkdown(d.Cluster))
	}
	if d.Month != "" {
		meta = append(meta, "month "+escapeMarkdown(d.Month))
	}
	if g := generated(&d); g != "" {
		meta = append(meta, "generated "+g)
	}
	if d.Anonymized {
		meta = append(meta, "user and account names anonymised")
	}
	if len(meta) > 0 {
		fmt.Fprintf(bw, "%s\n\n", strings.Join(meta, " · "))
	}
	for _, s := range build(&d) {
		fmt.Fprintf(bw, "## %s\n\n", escapeMarkdown(s.Title))
		for _, b := range s.Blocks {
			writeMarkdownBlock(bw, b)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write Markdown: %w", err)
	}
	return nil
}

func writeMarkdownBlock(w *bufio.Writer, b block) {
	switch b.Kind {
	case blockPara:
		fmt.Fprintf(w, "%s\n\n", escapeMarkdown(b.Text))
	case blockHeading:
		fmt.Fprintf(w, "### %s\n\n", escapeMarkdown(b.Text))
	case blockList:
		for _, it := range b.Items {
			fmt.Fprintf(w, "- %s\n", escapeMarkdown(it))
		}
		w.WriteString("\n")
	case blockTable:
		writeMarkdownTable(w, b.Table)
	case blockCode:
		fmt.Fprintf(w, "%s:\n\n", escapeMarkdown(b.Text))
		fence := codeFence(b.Items)
		fmt.Fprintf(w, "%s\n%s\n%s\n\n", fence, strings.Join(b.Items, "\n"), fence)
	case blockChart:
		// Charts are drawn in the HTML report only.
	}
}

func writeMarkdownTable(w *bufio.Writer, t *table) {
	row := func(cells []string) {
		w.WriteString("|")
		for i := range t.Head {
			c := ""
			if i < len(cells) {
				c = escapeMarkdown(cells[i])
			}
			fmt.Fprintf(w, " %s |", c)
		}
		w.WriteString("\n")
	}
	row(t.Head)
	w.WriteString("|")
	for i := range t.Head {
		if t.Num[i] {
			w.WriteString(" ---: |")
		} else {
			w.WriteString(" --- |")
		}
	}
	w.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	w.WriteString("\n")
}

// mdSpecial are the characters escapeMarkdown backslash-escapes anywhere:
// those that open emphasis, code, links, images, HTML, entities and
// strike-through, or split a table cell.
const mdSpecial = "\\`*_{}[]<>#|~&!"

// escapeMarkdown escapes s (already sanitised, one line) for use as
// Markdown text or a table cell. A leading "-", "+", "=" or "1." is
// escaped too so that text cannot start a list or a heading.
func escapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		if r < 0x80 && strings.ContainsRune(mdSpecial, r) {
			b.WriteByte('\\')
		} else if i == 0 && (r == '-' || r == '+' || r == '=') {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	out := b.String()
	// "1. " or "1) " at the start would begin an ordered list.
	if n := leadingDigits(out); n > 0 && n < 10 && n < len(out) && (out[n] == '.' || out[n] == ')') &&
		(n+1 == len(out) || out[n+1] == ' ') {
		out = out[:n] + "\\" + out[n:]
	}
	return out
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// codeFence returns a backtick fence longer than any backtick run in
// lines, at least three long.
func codeFence(lines []string) string {
	longest := 0
	for _, l := range lines {
		run := 0
		for _, r := range l {
			if r == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
