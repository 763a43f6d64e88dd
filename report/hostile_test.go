package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/analysis"
)

var (
	hostileScript = "<script>alert(1)</script>"
	hostileANSI   = "\x1b[31mred\x1b[0m|pipe"
	hostileQuote  = `o"neil's | name`
	hostileLong   = strings.Repeat("x|<", 700)[:2000]
	hostileCJK    = "研究室のユーザー"
	hostileEmoji  = "🚀gpu🔥user"
	hostileFence  = "echo ```` done \x00 \u202e"
)

// hostileFixture puts hostile strings wherever users can choose text:
// user, account, job and partition names, and so recommendation texts.
func hostileFixture() Data {
	d := fixture()
	w := &d.Workload
	names := []string{hostileScript, hostileANSI, hostileQuote}
	for i := range w.Users {
		w.Users[i].Name = names[i%len(names)]
	}
	w.Accounts[0].Name = hostileLong
	w.Accounts[1].Name = hostileCJK
	w.Models[0].Model = hostileEmoji + hostileScript
	f := &d.Findings
	f.Profiles[0].User = hostileScript
	f.Profiles[0].Name = hostileANSI
	f.Profiles[1].Account = hostileLong
	f.Profiles[2].Name = hostileEmoji
	f.Summary.Partitions[0].Partition = hostileScript + hostileANSI
	f.Recommendations[0].Title = "Limit " + hostileScript
	f.Recommendations[0].Evidence[0].Note = hostileANSI + hostileCJK
	f.Recommendations[1].Config = append(f.Recommendations[1].Config,
		analysis.ConfigLine{Target: analysis.TargetSacctmgr, Text: "sacctmgr modify account " + hostileFence})
	f.NoChange[0].Note = hostileQuote + hostileANSI
	f.Plan.CrossCheck = hostileLong
	// The simulated plan carries model, partition and group names, and
	// sentences built from them.
	sp := d.SimPlan
	sp.Models[0].Model = hostileEmoji + hostileScript
	sp.Models[1].Model = hostileANSI
	sp.Models[1].Why = hostileFence
	sp.Effects[0].Group = hostileScript + hostileANSI
	sp.Effects[1].Simulated, sp.Effects[1].Why = false, hostileQuote+hostileANSI
	sp.Costs[0].Model = hostileLong
	sp.Timeline.Group = "partition " + hostileScript + hostileANSI
	sp.Verdict.Text = "Buy 4 " + hostileEmoji + hostileScript + " GPUs " + hostileANSI + "."
	sp.Verdict.BindingName = hostileScript + hostileANSI
	sp.Verdict.Evidence = append(sp.Verdict.Evidence, "- "+hostileANSI+hostileFence)
	sp.Assumed = append(sp.Assumed, hostileQuote+hostileANSI)
	sp.ClusterSource = hostileANSI
	f.Recommendations[0].Simulated.Text = "Expected effect (simulated): " + hostileANSI + hostileScript
	d.Sources.Notes = append(d.Sources.Notes, "- "+hostileANSI)
	d.Cluster = hostileScript
	return d
}

// unescapedPipes counts "|" not preceded by a backslash.
func unescapedPipes(line string) int {
	n := 0
	for i := range len(line) {
		if line[i] == '|' && (i == 0 || line[i-1] != '\\') {
			n++
		}
	}
	return n
}

// checkMarkdownTables checks that every table row has as many cells as
// its header.
func checkMarkdownTables(t *testing.T, md string) {
	t.Helper()
	want := -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = -1
			continue
		}
		n := unescapedPipes(line)
		if want < 0 {
			want = n
			continue
		}
		if n != want {
			t.Errorf("table row has %d cell separators, header %d: %.200q", n, want, line)
		}
	}
}

func TestHostileInput(t *testing.T) {
	out := renderAll(t, hostileFixture())
	for format, s := range out {
		if strings.ContainsRune(s, 0x1b) {
			t.Errorf("%s contains an ESC byte", format)
		}
		if strings.ContainsRune(s, 0) || strings.ContainsRune(s, '\u202e') {
			t.Errorf("%s contains a NUL or a bidi override", format)
		}
		if !utf8.ValidString(s) {
			t.Errorf("%s is not valid UTF-8", format)
		}
		for _, bad := range []string{"NaN", "+Inf", "-Inf"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", format, bad)
			}
		}
	}
	html := out["html"]
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Error("HTML contains a raw <script")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("HTML lost the escaped hostile name instead of showing it")
	}
	if !strings.Contains(html, hostileCJK) || !strings.Contains(html, "🚀gpu🔥user") {
		t.Error("HTML lost CJK or emoji text")
	}
	// Long strings: tables scroll sideways in their wrapper and words with
	// a break opportunity are kept whole (TestBrowserLayout measures the
	// result in Chromium).
	if !strings.Contains(html, `class="table-wrap`) || !strings.Contains(html, ".w { white-space: nowrap; }") {
		t.Error("HTML has no scroll wrapper or no-wrap rule for long strings")
	}

	md := out["md"]
	if regexp.MustCompile(`(^|[^\\])<`).MatchString(md) {
		t.Error("Markdown contains an unescaped <")
	}
	checkMarkdownTables(t, md)
	// The config line with a run of four backticks sits in a fence of five.
	if !strings.Contains(md, "`````\nsacctmgr modify user") {
		t.Errorf("Markdown code fence not longer than the backtick run inside:\n%s", md[strings.Index(md, "sacctmgr:"):][:300])
	}
	// Outside code blocks, a hostile "- " note must not start a list item.
	if strings.Contains(md, "- - ") {
		t.Error("Markdown: a note starting with \"- \" made a nested list")
	}

	var v map[string]any
	if err := json.Unmarshal([]byte(out["json"]), &v); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	if strings.Contains(out["json"], `\u001b`) {
		t.Error("JSON keeps an escaped ESC")
	}
}

func TestSanitize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "alice", "alice"},
		{"csi colour", "\x1b[31mred\x1b[0m", "red"},
		{"osc title", "a\x1b]0;title\x07b", "ab"},
		{"c1 csi", "a\u009b31mb", "ab"},
		{"controls", "a\x00b\x7fc", "a\uFFFDb\uFFFDc"},
		{"newline", "a\nb\tc", "a b c"},
		{"bidi", "a\u202eb", "a\uFFFDb"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"cjk emoji", "研究🚀", "研究🚀"},
		{"lone esc", "a\x1b", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sanitize(tt.in); got != tt.want {
				t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a|b", `a\|b`},
		{"<b>", `\<b\>`},
		{"*x* _y_ `z` [l](u) #h", "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\#h"},
		{"- item", `\- item`},
		{"1. item", `1\. item`},
		{"55.0 %", "55.0 %"},
	}
	for _, tt := range tests {
		if got := escapeMarkdown(tt.in); got != tt.want {
			t.Errorf("escapeMarkdown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := codeFence([]string{"a ``` b", "````"}); got != "`````" {
		t.Errorf("codeFence = %q, want five backticks", got)
	}
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// htmlText strips tags, for checks on what a reader sees.
func htmlText(s string) string { return tagRE.ReplaceAllString(s, " ") }
