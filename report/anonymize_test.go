package report

import (
	"regexp"
	"strings"
	"testing"
)

func TestAnonymize(t *testing.T) {
	d := fixture()
	// Put names where only the name lists can find them.
	d.Findings.NoChange[0].Note = "user carol and account chem looked fine"
	d.Findings.Plan.Evidence[0].Note = "alice's runs"
	d.Sources.Notes = append(d.Sources.Notes, "account physics imported")
	// The simulated plan names users in its effects and its verdict.
	sp := d.SimPlan
	sp.Effects[1].Group = "jobs of account bio"
	sp.Verdict.Evidence = append(sp.Verdict.Evidence, "user bob's jobs wait longest")
	sp.Verdict.Text += " User alice's runs set the peak."
	d.Findings.Recommendations[1].Simulated.Text = "Expected effect (simulated): p95 wait of jobs of user bob 3h00m → 2h00m."
	Anonymize(&d, fixtureUsers, fixtureAccounts)
	if !d.Anonymized {
		t.Error("Anonymized not set")
	}
	out := renderAll(t, d)
	for format, s := range out {
		for _, name := range append(fixtureUsers, fixtureAccounts...) {
			if regexp.MustCompile(`(^|[^\pL\pN])` + regexp.QuoteMeta(name) + `($|[^\pL\pN])`).MatchString(s) {
				i := strings.Index(s, name)
				t.Errorf("%s: name %q remains: …%s…", format, name, s[max(0, i-60):min(len(s), i+60)])
			}
		}
	}
	md := out["md"]
	// Ranks by GPU-hours: alice (5,000) > bob (3,000) > al (1,000); carol
	// has none. Accounts: physics > bio > chem.
	for _, want := range []string{
		"| user-01 | 400 | 5,000 |", "| user-02 | 300 | 3,000 |", "| user-03 | 100 | 1,000 |",
		"| account-01 | 700 | 8,000 |", "| account-02 | 300 | 3,000 |",
		"user user-04 and account account-03 looked fine",
		"user-01's runs",
		// Whole words: "allocate-test" keeps "allocate", "bob_notebook"
		// loses "bob", and "al" in the evidence becomes user-03.
		"allocate-test", `user-02\_notebook`, "users user-02 and user-03 run small jobs",
		"sacctmgr modify user name=user-02 account=account-02 set GrpTRES=gres/gpu=2",
		"Account account-02 holds idle GPUs",
		"user and account names anonymised",
		"| R2 | Account account-02 holds idle GPUs | jobs of account account-02 |", "user user-02's jobs wait longest",
		"User user-01's runs set the peak.", "p95 wait of jobs of user user-02 3h00m → 2h00m.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// Machine keys and thresholds are untouched.
	for _, want := range []string{"GPU-hours allocated", "long training", "| gpu | 600 |", "classes.short\\_job\\_max",
		"Binding constraint: GPU model NVIDIA H100 80GB HBM3."} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q after anonymising", want)
		}
	}
	if !strings.Contains(out["json"], `"anonymized": true`) {
		t.Error(`JSON lacks "anonymized": true`)
	}
}

func TestReplacerWholeWords(t *testing.T) {
	r := newReplacer(map[string]string{"al": "user-01", "alan": "user-02", "user": "user-03", "a.b": "user-04"})
	tests := []struct{ in, want string }{
		{"al", "user-01"},
		{"allocated by al.", "allocated by user-01."},
		{"alan and al", "user-02 and user-01"},
		{"user al", "user-03 user-01"}, // a replacement is not replaced again
		{"al_train, x-al", "user-01_train, x-user-01"},
		{"sal, alx, 1al", "sal, alx, 1al"},
		{"a.b/a.bc", "user-04/a.bc"},
		{"研究al", "研究al"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.replace(tt.in); got != tt.want {
			t.Errorf("replace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
