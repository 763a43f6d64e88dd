package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// htmlPage is what the HTML template sees.
type htmlPage struct {
	Title      string
	Cluster    string
	Month      string
	Generated  string
	Anonymized bool
	Sections   []section
	Charts     map[string]chart
	// CSS is the page's style sheet, report.css.
	CSS template.CSS
}

// styleSheet is the report's CSS, kept in its own file so that layout
// and content can change apart.
//
//go:embed report.css
var styleSheet string

// WriteHTML writes the report as one self-contained HTML file: inline CSS
// and SVG charts, no script, no external resource. All text goes through
// html/template's escaping after sanitize.
func WriteHTML(w io.Writer, d Data) error {
	d = cleanData(d)
	cs, err := charts(&d)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	page := htmlPage{
		Title:      title(&d),
		Cluster:    d.Cluster,
		Month:      d.Month,
		Generated:  generated(&d),
		Anonymized: d.Anonymized,
		Sections:   build(&d),
		CSS:        template.CSS(styleSheet),
		Charts:     cs,
	}
	if err := htmlTemplate().Execute(w, page); err != nil {
		return fmt.Errorf("report: write HTML: %w", err)
	}
	return nil
}

// title is the report's title, made up when Data has none.
func title(d *Data) string {
	if d.Title != "" {
		return d.Title
	}
	if d.Month != "" {
		return "GPU workload report, " + d.Month
	}
	return "GPU workload report"
}

func generated(d *Data) string {
	if d.Generated.IsZero() {
		return ""
	}
	return d.Generated.UTC().Format("2006-01-02 15:04 UTC")
}

// cellMax is the most runes a table cell shows; longer text is cut with
// "…" and kept whole in the cell's title attribute.
const cellMax = 120

// shortRows is the most rows of a table that print keeps on one page
// (break-inside: avoid); a longer one breaks between rows under its
// repeated header.
const shortRows = 20

func cellText(s string) string {
	r := []rune(s)
	if len(r) <= cellMax {
		return s
	}
	return string(r[:cellMax-1]) + "…"
}

// cellHTML is a table cell's text, cut to cellMax and escaped, with each
// word the browser could break inside (after a hyphen, between CJK
// characters: "inference-service", "研究室"; see unbreakable) in a span.w, which
// report.css keeps on one line on screen, where a wide table scrolls. On
// paper, which cannot scroll, such a word may break where the browser
// allows (after its hyphen), and a long one also after its underscores
// (<wbr>: "inference_service_llama_finetune", a task name), never between
// two letters; an option or setting ("QOS=gpu-shared", "--gres=gpu:1") is
// also .opt and never breaks. The text, and so what a reader copies, is
// unchanged.
func cellHTML(s string) template.HTML {
	var b strings.Builder
	for i, w := range strings.FieldsFunc(cellText(s), htmlSpace) {
		if i > 0 {
			b.WriteByte(' ')
		}
		opt := option(w)
		long := !opt && utf8.RuneCountInString(w) > longWord && strings.Contains(w, "_")
		switch {
		case unbreakable(w) && !long:
			b.WriteString(template.HTMLEscapeString(w))
			continue
		case opt:
			b.WriteString(`<span class="w opt">`)
		default:
			b.WriteString(`<span class="w">`)
		}
		if long {
			parts := strings.SplitAfter(w, "_")
			for k, p := range parts {
				if k > 0 && p != "" {
					b.WriteString("<wbr>")
				}
				b.WriteString(template.HTMLEscapeString(p))
			}
		} else {
			b.WriteString(template.HTMLEscapeString(w))
		}
		b.WriteString(`</span>`)
	}
	return template.HTML(b.String()) //nolint:gosec // every piece escaped above
}

// longWord is the most runes of a word that print keeps whole at its
// underscores: a longer one ("inference_service_llama_finetune") may end
// a line after one.
const longWord = 24

// htmlSpace reports whether r is HTML's inter-element white space, the
// only place where a cell may wrap.
func htmlSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

// option reports whether w is a command-line option or a setting
// ("--time=1:00:00", "QOS=gpu-shared", "#SBATCH"), which must read as one
// token wherever it is shown.
func option(w string) bool {
	return strings.ContainsRune(w, '=') || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "#")
}

// unbreakable reports whether a browser has no line-break opportunity
// inside w. Measured in Chromium over every pair of ASCII punctuation
// between letters and digits (its take on Unicode line breaking, UAX
// #14), an ASCII word breaks only after "-" or "?" and before an opening
// "(", "[", "{" or "<" that follows punctuation; any rune beyond ASCII (a
// dash, "×", CJK, an emoji) is taken to break. Such words need no span,
// which keeps the HTML of most cells plain text.
func unbreakable(w string) bool {
	prev := 'a'
	for i, r := range w {
		switch {
		case r >= utf8.RuneSelf, r == '-', r == '?':
			return false
		case i > 0 && strings.ContainsRune("([{<", r) && !asciiAlnum(prev):
			return false
		}
		prev = r
	}
	return true
}

func asciiAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func longCell(s string) bool { return len([]rune(s)) > cellMax }

// htmlTemplate is parsed once per process, on first use rather than at
// start-up, which every gpuprof process (a slurmd hook among them) would
// pay for (issue #41); template.Template is safe for concurrent Execute
// and never modified after parsing.
var htmlTemplate = sync.OnceValue(func() *template.Template { return parseHTMLTemplate() })

func parseHTMLTemplate() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"cell":     cellHTML,
		"long":     longCell,
		"short":    func(t *table) bool { return len(t.Rows) <= shortRows },
		"isPara":   func(b block) bool { return b.Kind == blockPara },
		"isList":   func(b block) bool { return b.Kind == blockList },
		"isTable":  func(b block) bool { return b.Kind == blockTable },
		"isCode":   func(b block) bool { return b.Kind == blockCode },
		"isChart":  func(b block) bool { return b.Kind == blockChart },
		"isHead":   func(b block) bool { return b.Kind == blockHeading },
		"join":     func(lines []string) string { return strings.Join(lines, "\n") },
		"numClass": func(t *table, i int) bool { return i < len(t.Num) && t.Num[i] },
	}).Parse(htmlSource))
}

const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gpuprof report">
<title>{{.Title}}</title>
<style>
{{.CSS}}</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="meta">{{if .Cluster}}Cluster {{.Cluster}}{{end}}{{if .Month}} · month {{.Month}}{{end}}{{if .Generated}} · generated {{.Generated}}{{end}}{{if .Anonymized}} · user and account names anonymised{{end}}</p>
</header>
<nav><ol>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ol></nav>
{{range .Sections}}{{$charts := $.Charts}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Blocks}}{{if isPara .}}<p>{{.Text}}</p>
{{else if isHead .}}<h3>{{.Text}}</h3>
{{else if isList .}}<ul>{{range .Items}}<li>{{.}}</li>{{end}}</ul>
{{else if isTable .}}{{$t := .Table}}<div class="table-wrap{{if short $t}} short{{end}}"><table>
<thead><tr>{{range $i, $h := $t.Head}}<th{{if numClass $t $i}} class="num"{{end}}>{{cell $h}}</th>{{end}}</tr></thead>
<tbody>{{range $t.Rows}}<tr>{{range $i, $c := .}}<td{{if numClass $t $i}} class="num"{{end}}{{if long $c}} title="{{$c}}"{{end}}>{{cell $c}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{else if isCode .}}<p class="code-label">{{.Text}}</p>
<pre><code>{{join .Items}}</code></pre>
{{else if isChart .}}{{with index $charts .Chart}}{{if .SVG}}<figure id="{{.ID}}" class="chart">
{{.SVG}}
<figcaption>{{.Caption}}</figcaption>
</figure>{{else}}<figure id="{{.ID}}" class="chart chart-empty">
<p>{{.Empty}}</p>
<figcaption>{{.Caption}}</figcaption>
</figure>{{end}}
{{end}}{{end}}{{end}}
</section>
{{end}}
</body>
</html>
`
