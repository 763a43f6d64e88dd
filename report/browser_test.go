package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/capacity"
	"github.com/gpuprof/gpuprof/demo"
	"github.com/gpuprof/gpuprof/store"
)

// findChromium returns the headless browser to render with. Without one
// the browser tests skip, except in CI (CI=true), where they must run.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH, and CI=true: the browser test must run in CI")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// trap is a TCP listener that counts connections: chromium is told to
// use it as its proxy for everything but loopback, so any network request
// the report makes lands here.
type trap struct {
	ln    net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup // connection readers
	mu    sync.Mutex
	first []string // the first request line of each connection
}

// browserHosts are where chromium itself connects (component updates,
// network time, account checks), whatever page it shows; flags do not
// switch all of it off. Requests there are not the report's.
var browserHosts = regexp.MustCompile(`^(CONNECT |[A-Z]+ https?://)([a-z0-9-]+\.)*(google\.com|googleapis\.com|gstatic\.com|gvt1\.com|googleusercontent\.com)[:/ ]`)

// pageRequests returns the first request line of every connection that
// did not come from chromium's own background traffic. Call it after
// chromium has exited. A connection that sent nothing fetched nothing and
// is left out.
func (tr *trap) pageRequests() []string {
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, l := range tr.first {
		if l != "" && !browserHosts.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tr.conns.Add(1)
			tr.wg.Add(1)
			go func() {
				defer tr.wg.Done()
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				line, _ := bufio.NewReader(c).ReadString('\n')
				tr.mu.Lock()
				tr.first = append(tr.first, strings.TrimSpace(line))
				tr.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return tr
}

// browse runs chromium headless on page with extra arguments, with a
// 60-second limit and a fresh profile, its network sent to tr, and
// returns what chromium wrote to stdout (the DOM, with --dump-dom).
func browse(t *testing.T, chromium string, tr *trap, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir=" + t.TempDir(),
		"--proxy-server=127.0.0.1:" + fmt.Sprint(tr.ln.Addr().(*net.TCPAddr).Port),
		"--proxy-bypass-list=<-loopback>",
		// Chromium's own background traffic would reach the trap too.
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-first-run",
		"--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication",
		"--hide-scrollbars",
	}, args...)
	all = append(all, "file://"+page)
	cmd := exec.CommandContext(ctx, chromium, all...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errs.String())
	}
	return out.Bytes()
}

// externalRef matches a URL the page could fetch: src, href, xlink:href
// or CSS url() and @import with a scheme or a protocol-relative "//".
var externalRef = regexp.MustCompile(`(?i)((src|href)\s*=\s*["']?\s*(https?:|//|ftp:|file:))|url\(\s*["']?\s*(https?:|//)|@import`)

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// inked counts pixels that are not near-white and the distinct colours
// among them (quantised to 4 bits a channel).
func inked(img image.Image) (pixels, colours int) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0xf000 && g > 0xf000 && bl > 0xf000 {
				continue
			}
			pixels++
			seen[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	return pixels, len(seen)
}

// artifacts is where the test leaves its files: REPORT_ARTIFACTS if set
// (to look at them or keep them in CI), else a temporary directory.
func artifacts(t *testing.T) string {
	if dir := os.Getenv("REPORT_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	dir := artifacts(t)
	tr := newTrap(t)

	d := hostileFixture()
	var page bytes.Buffer
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	if m := externalRef.FindString(page.String()); m != "" {
		t.Errorf("HTML references an external resource: %q", m)
	}
	if strings.Contains(strings.ToLower(page.String()), "<script") {
		t.Error("HTML contains a script")
	}
	report := filepath.Join(dir, "report.html")
	writeFile(t, report, page.Bytes())

	shot := filepath.Join(dir, "report.png")
	browse(t, chromium, tr, report, "--screenshot="+shot, "--window-size=1200,5000")
	if px, cols := inked(readPNG(t, shot)); px < 100000 || cols < 8 {
		t.Errorf("report screenshot looks blank: %d inked pixels, %d colours", px, cols)
	}
	// Each chart alone on a page with the report's CSS: the chart must
	// draw something in several colours.
	cs, err := charts(func() *Data { c := cleanData(d); return &c }())
	if err != nil {
		t.Fatal(err)
	}
	css := regexp.MustCompile(`(?s)<style>.*</style>`).FindString(page.String())
	for _, id := range []string{chartDaily, chartVRAM, chartUtil, chartWait, chartClass, chartHeatmap, chartPlan} {
		c := cs[id]
		if c.SVG == "" {
			t.Errorf("%s: no chart drawn for the full fixture (%s)", id, c.Empty)
			continue
		}
		if m := externalRef.FindString(string(c.SVG)); m != "" || strings.Contains(string(c.SVG), "http") {
			t.Errorf("%s: SVG references a URL: %q", id, m)
		}
		var one bytes.Buffer
		err := singleChart.Execute(&one, struct {
			CSS   template.HTML
			Chart chart
		}{template.HTML(css), c}) //nolint:gosec // the report's own CSS
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, id+".html")
		writeFile(t, path, one.Bytes())
		png := filepath.Join(dir, id+".png")
		browse(t, chromium, tr, path, "--screenshot="+png, "--window-size=900,520")
		px, cols := inked(readPNG(t, png))
		if px < 5000 || cols < 3 {
			t.Errorf("%s: chart looks empty: %d inked pixels, %d colours", id, px, cols)
		}
	}
	if reqs := tr.pageRequests(); len(reqs) != 0 {
		t.Errorf("the report made %d network requests: %q", len(reqs), reqs)
	}
	t.Logf("chromium's own background connections (ignored): %d", tr.conns.Load())
}

// TestTrapCatches checks the network trap itself: a page that loads an
// image over HTTP must reach it, or a zero count above proves nothing.
func TestTrapCatches(t *testing.T) {
	chromium := findChromium(t)
	tr := newTrap(t)
	page := filepath.Join(t.TempDir(), "net.html")
	writeFile(t, page, []byte(`<!DOCTYPE html><img src="http://example.invalid/x.png"><p>x</p>`))
	browse(t, chromium, tr, page, "--screenshot="+filepath.Join(t.TempDir(), "net.png"), "--window-size=200,200")
	found := false
	for _, r := range tr.pageRequests() {
		found = found || strings.Contains(r, "example.invalid")
	}
	if !found {
		t.Errorf("the proxy trap did not count the page's request to http://example.invalid as the page's: %q", tr.pageRequests())
	}
}

var singleChart = template.Must(template.New("chart").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8">{{.CSS}}</head><body>
<figure id="{{.Chart.ID}}" class="chart">{{.Chart.SVG}}<figcaption>{{.Chart.Caption}}</figcaption></figure>
</body></html>`))

// findTool returns the path of a command-line tool the browser tests
// need besides chromium (pdfinfo, pdftoppm from poppler-utils). Without
// it they skip, except in CI (CI=true), where they must run.
func findTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no %s on PATH, and CI=true: the browser test must run in CI", name)
	}
	t.Skipf("no %s on PATH", name)
	return ""
}

// runTool runs a tool with a 60-second limit and returns its stdout.
func runTool(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errs.String())
	}
	return out.Bytes()
}

// layoutResult is what testdata/browser/layout.js measured in a page.
type layoutResult struct {
	Viewport int `json:"viewport"`
	Cells    int `json:"cells"`
	BadCells []struct {
		Text   string   `json:"text"`
		Word   string   `json:"word"`
		WordPx float64  `json:"word_px"`
		BoxPx  float64  `json:"box_px"`
		Broken []string `json:"broken"`
	} `json:"bad_cells"`
	Overflow []struct {
		Element     string `json:"element"`
		Text        string `json:"text"`
		Left, Right int
	} `json:"overflow"`
	CodeBlocks int `json:"code_blocks"`
	BadCode    []struct {
		Text string `json:"text"`
		Why  string `json:"why"`
	} `json:"bad_code"`
	ScrollWidth     int `json:"scroll_width"`
	ScrollingTables int `json:"scrolling_tables"`
	Charts          []struct {
		ID     string `json:"id"`
		SVG    bool   `json:"svg"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Shapes int    `json:"shapes"`
		Empty  string `json:"empty"`
	} `json:"charts"`
	Font  string `json:"font"`
	Error string `json:"error"`
}

var layoutResultRE = regexp.MustCompile(`<pre id="layout-result"[^>]*>([^<]*)</pre>`)

// measureLayout loads a copy of page with layout.js injected at the given
// window width and returns what the script measured. With print set, the
// copy's print rules apply on screen (@media print becomes @media all),
// so the page is measured as it is printed, at the paper's text width.
func measureLayout(t *testing.T, chromium string, tr *trap, page []byte, dir, name string, width int, print bool) layoutResult {
	t.Helper()
	js, err := os.ReadFile(filepath.Join("testdata", "browser", "layout.js"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(page)
	if print {
		if !strings.Contains(src, "@media print") {
			t.Fatal("the report's CSS has no @media print rules")
		}
		src = strings.Replace(src, "@media print", "@media all", 1)
	}
	i := strings.LastIndex(src, "</body>")
	if i < 0 {
		t.Fatal("report has no </body>")
	}
	script := "<script>\n" + string(js) + "</script>\n"
	if print {
		script = "<script>window.layoutPrint = true;</script>\n" + script
	}
	src = src[:i] + script + src[i:]
	path := filepath.Join(dir, name+"-measured.html")
	writeFile(t, path, []byte(src))
	dom := browse(t, chromium, tr, path, "--dump-dom", fmt.Sprintf("--window-size=%d,2000", width))
	m := layoutResultRE.FindSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: no #layout-result in the DOM chromium dumped (%d bytes): did layout.js run?", name, len(dom))
	}
	var res layoutResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &res); err != nil {
		t.Fatalf("%s: layout result: %v\n%s", name, err, m[1])
	}
	if res.Error != "" {
		t.Fatalf("%s: layout.js failed: %s", name, res.Error)
	}
	if res.Viewport != width {
		t.Fatalf("%s: layout measured at %d px, asked for %d", name, res.Viewport, width)
	}
	return res
}

// checkLayout fails for every table cell with a word that does not fit
// or was broken, every element wider than the viewport outside a scroll
// container, and every chart id in want without its figure (an SVG drawn
// within the page, or an empty chart's note).
func checkLayout(t *testing.T, where string, res layoutResult, want []string) {
	t.Helper()
	if res.Cells == 0 {
		t.Errorf("%s: no table cell measured", where)
	}
	for _, c := range res.BadCells {
		t.Errorf("%s: cell %q: word %q (longest %.1f px) does not fit the %.1f px box, or broken: %q", where, c.Text, c.Word, c.WordPx, c.BoxPx, c.Broken)
	}
	for _, c := range res.BadCode {
		t.Errorf("%s: code %q wraps: %s", where, c.Text, c.Why)
	}
	for _, o := range res.Overflow {
		t.Errorf("%s: %s %q spans %d…%d px, outside the %d px viewport and no scroll container", where, o.Element, o.Text, o.Left, o.Right, res.Viewport)
	}
	if res.ScrollWidth > res.Viewport {
		t.Errorf("%s: the page scrolls sideways: %d px wide in a %d px viewport", where, res.ScrollWidth, res.Viewport)
	}
	if !strings.HasPrefix(res.Font, `"DejaVu Sans"`) && !strings.HasPrefix(res.Font, "DejaVu Sans") {
		t.Errorf("%s: page font %s, want DejaVu Sans first (the charts' family)", where, res.Font)
	}
	seen := map[string]int{}
	for _, c := range res.Charts {
		seen[c.ID]++
		switch {
		case c.SVG && (c.Width < 200 || c.Height < 100 || c.Shapes < 5):
			t.Errorf("%s: chart %s drawn %d×%d px with %d shapes: too small or empty", where, c.ID, c.Width, c.Height, c.Shapes)
		case c.SVG && c.Width > res.Viewport:
			t.Errorf("%s: chart %s is %d px wide in a %d px viewport", where, c.ID, c.Width, res.Viewport)
		case !c.SVG && c.Empty == "":
			t.Errorf("%s: chart %s has neither an SVG nor an empty-chart note", where, c.ID)
		}
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("%s: %d figures for chart %s, want 1", where, seen[id], id)
		}
	}
}

// expectedCharts is every chart id the report of d must show: the fixed
// charts every report has (with data or a note saying why not), and
// every chart a section of d asks for.
func expectedCharts(d Data) []string {
	ids := []string{chartDaily, chartVRAM, chartUtil, chartWait, chartClass, chartHeatmap, chartPlan}
	c := cleanData(d)
	for _, s := range build(&c) {
		for _, b := range s.Blocks {
			if b.Kind == blockChart && !slices.Contains(ids, b.Chart) {
				ids = append(ids, b.Chart)
			}
		}
	}
	return ids
}

// pageFill is the fraction of an image's pixel rows that hold ink
// (any pixel not near-white): how much of a printed page is used.
func pageFill(img image.Image) float64 {
	b := img.Bounds()
	rows := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r <= 0xf000 || g <= 0xf000 || bl <= 0xf000 {
				rows++
				break
			}
		}
	}
	if b.Dy() == 0 {
		return 0
	}
	return float64(rows) / float64(b.Dy())
}

// printedPages prints page to PDF with chromium, counts its pages with
// pdfinfo, rasterises each with pdftoppm at 40 dpi and returns every
// page's fill, in page order.
func printedPages(t *testing.T, chromium string, tr *trap, page, dir, name string) []float64 {
	t.Helper()
	pdfinfo, pdftoppm := findTool(t, "pdfinfo"), findTool(t, "pdftoppm")
	pdf := filepath.Join(dir, name+".pdf")
	browse(t, chromium, tr, page, "--print-to-pdf="+pdf, "--no-pdf-header-footer")
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindSubmatch(runTool(t, pdfinfo, pdf))
	if m == nil {
		t.Fatalf("%s: pdfinfo gives no page count", pdf)
	}
	pages, _ := strconv.Atoi(string(m[1]))
	prefix := filepath.Join(dir, name+"-page")
	old, err := filepath.Glob(prefix + "-*.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range old { // an earlier run's, in REPORT_ARTIFACTS
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	runTool(t, pdftoppm, "-r", "40", "-png", pdf, prefix)
	pngs, err := filepath.Glob(prefix + "-*.png")
	if err != nil {
		t.Fatal(err)
	}
	// pdftoppm numbers pages with as many digits as the last one has.
	num := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimSuffix(p[len(prefix)+1:], ".png"))
		return n
	}
	slices.SortFunc(pngs, func(a, b string) int { return num(a) - num(b) })
	if len(pngs) != pages {
		t.Fatalf("%s: pdfinfo counts %d pages, pdftoppm wrote %d", pdf, pages, len(pngs))
	}
	fill := make([]float64, pages)
	for i, p := range pngs {
		fill[i] = pageFill(readPNG(t, p))
	}
	return fill
}

// minPageFill is the least fill a printed page may have unless it is the
// last: a quarter of its rows. A page holding one sentence or a lone
// heading (the old forced page breaks) has far less.
const minPageFill = 0.25

// a4TextWidth is the width in CSS pixels (96 per inch) of an A4 page's
// text between the side margins that report.css sets with @page; A4 is
// narrower than Letter, so a layout that fits it fits both.
func a4TextWidth(t *testing.T) int {
	t.Helper()
	m := regexp.MustCompile(`@page\s*\{\s*margin:\s*([\d.]+)mm(?:\s+([\d.]+)mm)?`).FindStringSubmatch(styleSheet)
	if m == nil {
		// Measure at Chromium's own default margins (0.4 in) and go on
		// to the PDF's checks.
		t.Error("report.css sets no @page margin in mm")
		m = []string{"", "10.16", ""}
	}
	side := m[1]
	if m[2] != "" {
		side = m[2]
	}
	mm, _ := strconv.ParseFloat(side, 64)
	return int((210 - 2*mm) / 25.4 * 96)
}

// layoutCases are the reports the layout is checked on: the demo month
// (the big realistic one), the planted month with long and hostile names
// (hyphenated services, QOS settings, CJK) and the hand-built hostile
// fixture.
var layoutCases = []struct {
	name string
	data func(t *testing.T) Data
}{
	{"demo", demoMonthData},
	{"planted-long-names", plantedLongNames},
	{"hostile", func(*testing.T) Data { return hostileFixture() }},
}

// TestBrowserLayout renders each layout case in headless Chromium and
// checks what issue #14 asks of the layout: screenshots at 1280 and 800
// px that are not blank; no table cell broken inside a word, nothing
// wider than the window outside a scroll wrapper and every chart present
// (measured in the DOM by layout.js, at both widths and as printed on
// A4); and a printed PDF whose pages are each at least a quarter full
// but the last.
func TestBrowserLayout(t *testing.T) {
	chromium := findChromium(t)
	findTool(t, "pdfinfo")
	findTool(t, "pdftoppm")
	for _, c := range layoutCases {
		t.Run(c.name, func(t *testing.T) {
			d := c.data(t)
			dir := artifacts(t)
			tr := newTrap(t)
			var page bytes.Buffer
			if err := WriteHTML(&page, d); err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(dir, c.name+".html")
			writeFile(t, report, page.Bytes())
			want := expectedCharts(d)
			for _, w := range []int{1280, 800} {
				shot := filepath.Join(dir, fmt.Sprintf("%s-%d.png", c.name, w))
				browse(t, chromium, tr, report, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,3000", w))
				if px, cols := inked(readPNG(t, shot)); px < 100000 || cols < 8 {
					t.Errorf("%d px: screenshot looks blank: %d inked pixels, %d colours", w, px, cols)
				}
				res := measureLayout(t, chromium, tr, page.Bytes(), dir, fmt.Sprintf("%s-%d", c.name, w), w, false)
				checkLayout(t, fmt.Sprintf("%d px", w), res, want)
				t.Logf("%d px: %d cells, %d code blocks, %d tables scroll sideways, %d charts", w, res.Cells, res.CodeBlocks, res.ScrollingTables, len(res.Charts))
			}
			pw := a4TextWidth(t)
			res := measureLayout(t, chromium, tr, page.Bytes(), dir, c.name+"-print", pw, true)
			checkLayout(t, fmt.Sprintf("printed (A4, %d px)", pw), res, want)

			fill := printedPages(t, chromium, tr, report, dir, c.name)
			var fills []string
			for i, f := range fill {
				fills = append(fills, fmt.Sprintf("%.0f%%", 100*f))
				if i < len(fill)-1 && f < minPageFill {
					t.Errorf("PDF page %d of %d is %.0f %% full, want at least %.0f %% on every page but the last", i+1, len(fill), 100*f, 100*minPageFill)
				}
			}
			t.Logf("PDF: %d pages, filled %s", len(fill), strings.Join(fills, " "))
			if reqs := tr.pageRequests(); len(reqs) != 0 {
				t.Errorf("the report made %d network requests: %q", len(reqs), reqs)
			}
		})
	}
}

// demoMonth caches the demo month's report data: simulating it takes
// about 15 s, and the data is read-only once built.
var demoMonth struct {
	once sync.Once
	d    Data
	err  error
}

// demoMonthData is the demo month's report data, built as
// TestDemoMonthReport and `gpuprof report` build it: the month simulated
// through the real recording path into a store, analysed and planned
// with the demo's planning inputs (scripts/demo-analysis.toml).
func demoMonthData(t *testing.T) Data {
	t.Helper()
	if testing.Short() {
		t.Skip("simulates a month (about 15 s)")
	}
	demoMonth.once.Do(func() { demoMonth.d, demoMonth.err = buildDemoMonth() })
	if demoMonth.err != nil {
		t.Fatal(demoMonth.err)
	}
	return demoMonth.d
}

func buildDemoMonth() (Data, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gpuprof-demo-layout-")
	if err != nil {
		return Data{}, err
	}
	defer os.RemoveAll(dir)
	sum, err := demo.Month(ctx, demo.MonthOptions{Dir: dir, DB: filepath.Join(dir, "month.db"), Seed: 1, Days: 30})
	if err != nil {
		return Data{}, fmt.Errorf("demo month: %w", err)
	}
	db, err := store.Open(ctx, sum.DB, store.Options{ReadOnly: true})
	if err != nil {
		return Data{}, err
	}
	defer db.Close()
	w := analysis.Window{From: demo.DefaultStart, To: demo.DefaultStart.AddDate(0, 1, 0)}
	b := analysis.NewInputBuilder()
	err = db.ReaderFor(store.System).EachView(ctx, store.ViewFilter{Since: w.From, Until: w.To, WithSeries: true}, func(v store.JobView) error {
		b.Add(v.Sched, v.Profiles)
		return nil
	})
	if err != nil {
		return Data{}, err
	}
	c, err := analysis.LoadConfig(filepath.Join("..", "scripts", "demo-analysis.toml"))
	if err != nil {
		return Data{}, err
	}
	d, err := analysedMonth(b.Input(w, w.To.Add(24*time.Hour)), c, w)
	d.Title, d.Cluster = "GPU workload report, demo month", "demo"
	return d, err
}

// analysedMonth is the report data of one month of input, analysed,
// planned and summarised as the report command does.
func analysedMonth(in analysis.Input, c analysis.Config, w analysis.Window) (Data, error) {
	f, err := analysis.Analyse(in, c)
	if err != nil {
		return Data{}, err
	}
	sp, err := capacity.SimulatePlan(in, &f, capacity.SimPlanParams{Plan: c.Plan.Params()}, c)
	if err != nil {
		return Data{}, err
	}
	f.Jobs = nil
	return Data{
		Month: w.From.Format("2006-01"), Generated: w.To, Findings: f, Config: c, SimPlan: &sp,
		Workload: analysis.SummariseWorkload(in, analysis.WorkloadParams{Window: w, TopN: 10}, c),
	}, nil
}

// longNames renames the planted month's users, accounts, job names,
// partitions and QOS into the long, hyphenated and non-Latin names real
// sites have: the words that the old layout broke ("infere/nce/servic/e",
// "QOS=gpu-"/"shared").
var longNames = map[string]string{
	"ann": "anna-katharina.meyer-lindenberg", "bob": "o'brien", "sam": "研究室のユーザー",
	"sue": "sue.ellen-mac.donald", "cat": "catalina_rodriguez-zapatero", "dan": "dan", "eve": "évelyne-marie", "fay": "fay",
	"ml": "machine-learning-infrastructure", "nlp": "natural-language-processing", "bio": "bioinformatics/genomics-core",
	"chem":  "computational-chemistry",
	"train": "inference-service-llama-70b-finetune", "eval": "inference-service", "fold": "alphafold2-multimer-v3",
	"md_sim": "gromacs-2024.3-md-sim", "crashy": "pytorch-lightning_ddp-crash", "longrun": "long-run", "jax_fit": "jax-fit",
	"gpu": "gpu-shared", "a100": "a100-long-queue",
}

// plantedLongNames is the planted month (planted_test.go's input) with
// longNames, and the QOS gpu-shared on every job, analysed as the report
// command does.
func plantedLongNames(t *testing.T) Data {
	t.Helper()
	in := plantedInput()
	rename := func(s string) string {
		if n, ok := longNames[s]; ok {
			return n
		}
		return s
	}
	for i := range in.Jobs {
		j := &in.Jobs[i]
		j.User, j.Account, j.Name, j.Partition = rename(j.User), rename(j.Account), rename(j.Name), rename(j.Partition)
		j.QOS = "gpu-shared"
	}
	for i := range in.Nodes {
		for k, p := range in.Nodes[i].Partitions {
			in.Nodes[i].Partitions[k] = rename(p)
		}
	}
	d, err := analysedMonth(in, analysis.DefaultConfig(), october)
	if err != nil {
		t.Fatal(err)
	}
	d.Title, d.Cluster = "GPU workload report, October 2026", "planted-cluster-with-a-long-name"
	d.Earlier = []MonthHeadline{{Month: "2026-09", Headline: analysis.Headline{Jobs: 200, GPUJobs: 190, Users: 7, Accounts: 4, AllocatedGPUHours: 1500.25}}}
	return d
}

// TestCellHTML checks the markup of table cells: words with a break
// opportunity inside (measured in Chromium, see unbreakable) are kept
// whole by a span, options also marked .opt, long underscored words get
// paper-only <wbr>s, everything is escaped, and the text is unchanged.
func TestCellHTML(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain words", "io bound 1,105 NODE_FAIL", "io bound 1,105 NODE_FAIL"},
		{"punctuation that never breaks", "unknown (no GPU recorded: it) a/b", "unknown (no GPU recorded: it) a/b"},
		{"hyphen", "GPU-hours used", `<span class="w">GPU-hours</span> used`},
		{"setting", "QOS=gpu-shared", `<span class="w opt">QOS=gpu-shared</span>`},
		{"option", "--gres=gpu:1", `<span class="w opt">--gres=gpu:1</span>`},
		{"unbreakable setting", "Count=32", "Count=32"},
		{"bracket after punctuation", "alert(1)</script>", `<span class="w">alert(1)&lt;/script&gt;</span>`},
		{"CJK", "研究室 ann", `<span class="w">研究室</span> ann`},
		{"non-ASCII sign", "1.5× 55.6 %", `<span class="w">1.5×</span> 55.6 %`},
		{"long underscored", "inference_service_llama_finetune", `<span class="w">inference_<wbr>service_<wbr>llama_<wbr>finetune</span>`},
		{"short underscored", "short_job_max", "short_job_max"},
		{"spaces collapse", " a \t b\n", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(cellHTML(tt.in))
			if got != tt.want {
				t.Errorf("cellHTML(%q) = %q, want %q", tt.in, got, tt.want)
			}
			text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(got, ""))
			if want := strings.Join(strings.Fields(tt.in), " "); text != want {
				t.Errorf("text of cellHTML(%q) = %q, want %q", tt.in, text, want)
			}
		})
	}
}
