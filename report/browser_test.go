package report

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html/template"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
// 60-second limit and a fresh profile, its network sent to tr.
func browse(t *testing.T, chromium string, tr *trap, page string, args ...string) {
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
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
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
	pdf := filepath.Join(dir, "report.pdf")
	browse(t, chromium, tr, report, "--print-to-pdf="+pdf, "--no-pdf-header-footer")
	b, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF")) || len(b) < 20000 {
		t.Errorf("PDF: %d bytes starting %q, want a non-trivial %%PDF file", len(b), b[:min(len(b), 8)])
	}
	// Print CSS starts each section on a new page: at least 12 pages.
	// The page tree's /Count is the largest /Count in the file (outline
	// counts are smaller).
	pages := 0
	for _, m := range regexp.MustCompile(`/Count (\d+)`).FindAllSubmatch(b, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		pages = max(pages, n)
	}
	if pages < 12 {
		t.Errorf("PDF has %d pages, want at least one per section (12)", pages)
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
