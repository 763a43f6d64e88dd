package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
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
	if err := htmlTemplate.Execute(w, page); err != nil {
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

// truncateTitle shortens long cell text for display; the full text stays
// in the title attribute.
const cellMax = 120

func cellText(s string) string {
	r := []rune(s)
	if len(r) <= cellMax {
		return s
	}
	return string(r[:cellMax-1]) + "…"
}

func longCell(s string) bool { return len([]rune(s)) > cellMax }

// htmlTemplate is parsed once per process; template.Template is safe for
// concurrent Execute and never modified after parsing.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"cell":     cellText,
	"long":     longCell,
	"isPara":   func(b block) bool { return b.Kind == blockPara },
	"isList":   func(b block) bool { return b.Kind == blockList },
	"isTable":  func(b block) bool { return b.Kind == blockTable },
	"isCode":   func(b block) bool { return b.Kind == blockCode },
	"isChart":  func(b block) bool { return b.Kind == blockChart },
	"isHead":   func(b block) bool { return b.Kind == blockHeading },
	"join":     func(lines []string) string { return strings.Join(lines, "\n") },
	"numClass": func(t *table, i int) bool { return i < len(t.Num) && t.Num[i] },
}).Parse(htmlSource))

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
{{else if isTable .}}{{$t := .Table}}<table>
<thead><tr>{{range $i, $h := $t.Head}}<th{{if numClass $t $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>{{range $t.Rows}}<tr>{{range $i, $c := .}}<td{{if numClass $t $i}} class="num"{{end}}{{if long $c}} title="{{$c}}"{{end}}>{{cell $c}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
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
