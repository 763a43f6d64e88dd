package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/tools/planmonth"
)

// screenshotCases are the months docs/report.md shows: one of a real
// trace's size (20,000 jobs, a busy 80 % on 160 GPUs, which buys), a
// small one (400 jobs on 16 GPUs at 30 %) and a quiet one (2,000 jobs on
// 160 GPUs at 4 %, whose capacity is far above its days).
var screenshotCases = []struct {
	name  string
	shape planmonth.Shape
}{
	{"large", planmonth.Shape{Jobs: 20000, GPUs: 160, Occupancy: 0.8, Seed: 1}},
	{"small", planmonth.Shape{Jobs: 400, GPUs: 16, Occupancy: 0.3, Seed: 1}},
	{"quiet", planmonth.Shape{Jobs: 2000, GPUs: 160, Occupancy: 0.04, Seed: 1}},
}

// screenshotParts are the report's parts cut out of the page: the
// headline section (to the end of its table) and four charts.
var screenshotParts = []string{"headline", chartDaily, chartHeatmap, chartPlan, chartWait}

// rectsScript measures, once the page has laid out, the page's height
// and each part's box, into a <pre id="shot-rects"> the DOM dump carries.
const rectsScript = `<script>
window.addEventListener("load", function () {
  var out = {height: document.documentElement.scrollHeight, rects: {}};
  IDS.forEach(function (id) {
    var el = document.getElementById(id);
    if (!el) return;
    var r = el.getBoundingClientRect(), bottom = r.bottom;
    // The headline section down to the end of its table of numbers.
    var table = id === "headline" && el.querySelector("table");
    if (table) bottom = table.getBoundingClientRect().bottom;
    out.rects[id] = [r.left + window.scrollX, r.top + window.scrollY, r.width, bottom - r.top];
  });
  var pre = document.createElement("pre");
  pre.id = "shot-rects";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
`

var shotRectsRE = regexp.MustCompile(`(?s)<pre id="shot-rects">(.*?)</pre>`)

// TestReportScreenshots renders the report of each screenshot case in
// headless Chromium and cuts its headline and charts out of the page, as
// PNGs in $REPORT_SCREENSHOTS (docs/img for docs/report.md; see
// scripts/report-screenshots.sh). Without that variable it skips: it
// plans a 20,000-job month.
func TestReportScreenshots(t *testing.T) {
	dir := os.Getenv("REPORT_SCREENSHOTS")
	if dir == "" {
		t.Skip("REPORT_SCREENSHOTS is not set")
	}
	chromium := findChromium(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const width = 1000
	for _, c := range screenshotCases {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			d := busyMonth(t, c.shape)
			d.Title = fmt.Sprintf("GPU workload report, %s (planted: %d jobs on %d GPUs at %.0f %%)", d.Month, c.shape.Jobs, c.shape.GPUs, 100*c.shape.Occupancy)
			d.Cluster = "planted-" + c.name
			t.Logf("planned in %v: %s", time.Since(t0).Round(time.Second), d.SimPlan.Verdict.Text)
			var page bytes.Buffer
			if err := WriteHTML(&page, d); err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			tr := newTrap(t)
			ids, _ := json.Marshal(screenshotParts)
			src := page.String()
			i := strings.LastIndex(src, "</body>")
			measured := filepath.Join(work, "measured.html")
			writeFile(t, measured, []byte(src[:i]+strings.Replace(rectsScript, "IDS", string(ids), 1)+src[i:]))
			m := shotRectsRE.FindSubmatch(browse(t, chromium, tr, measured, "--dump-dom", fmt.Sprintf("--window-size=%d,2000", width)))
			if m == nil {
				t.Fatal("no #shot-rects in the DOM: did the script run?")
			}
			var res struct {
				Height int
				Rects  map[string][4]float64
			}
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &res); err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(work, "report.html")
			writeFile(t, report, page.Bytes())
			shot := filepath.Join(work, "page.png")
			browse(t, chromium, tr, report, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", width, res.Height))
			img := readPNG(t, shot)
			for _, id := range screenshotParts {
				r, ok := res.Rects[id]
				if !ok {
					t.Errorf("no %s in the page", id)
					continue
				}
				const pad = 8
				box := image.Rect(int(r[0])-pad, int(r[1])-pad, int(r[0]+r[2])+pad, int(r[1]+r[3])+pad).Intersect(img.Bounds())
				part := image.NewRGBA(image.Rect(0, 0, box.Dx(), box.Dy()))
				draw.Draw(part, part.Bounds(), img, box.Min, draw.Src)
				var b bytes.Buffer
				if err := png.Encode(&b, part); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, fmt.Sprintf("report-%s-%s.png", c.name, strings.TrimPrefix(id, "chart-")))
				writeFile(t, out, b.Bytes())
				px, cols := inked(part)
				t.Logf("%s: %dx%d px, %d inked pixels, %d colours", out, box.Dx(), box.Dy(), px, cols)
			}
			if reqs := tr.pageRequests(); len(reqs) != 0 {
				t.Errorf("the report made %d network requests: %q", len(reqs), reqs)
			}
		})
	}
}
