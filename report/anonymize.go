package report

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuprof/gpuprof/analysis"
)

// Anonymize replaces every user and account name in d with "user-01",
// "user-02", … and "account-01", …, numbered by allocated GPU-hours
// (largest first), consistently across the whole report: the workload
// tables, the task profiles, the recommendations (titles, changes,
// evidence, notes, configuration lines, simulated effects), the
// no-change notes, the cross-check's evidence, the simulated plan (the
// verdict's text and evidence, the groups the effects measured), the
// sources and the title. users and accounts must list every
// name in the input: the "others" rows of the workload carry none, and
// a name seen only in a configuration line would otherwise stay.
//
// A name is replaced only as a whole word: a user "al" leaves "allocated"
// alone. Letters and digits make words; "_", "-", "." and the rest
// separate them, so a job name "al_train" becomes "user-01_train".
// Machine keys (recommendation kinds, rule and metric names, config
// targets, the cross-check's constraints, the verdict's code and binding
// constraint, effect outcomes, partition and GPU model names) and the
// thresholds are left as they are. A name that is both a user and an
// account becomes the user.
func Anonymize(d *Data, users, accounts []string) {
	w := d.Workload
	userHours := map[string]float64{}
	accountHours := map[string]float64{}
	for _, g := range w.Users {
		userHours[g.Name] += g.GPUHours
	}
	for _, g := range w.Accounts {
		accountHours[g.Name] += g.GPUHours
	}
	// Names outside the top N: rank by their task profiles' GPU-hours,
	// which are already computed and sum to a sensible order.
	profUser := map[string]float64{}
	profAccount := map[string]float64{}
	for _, p := range d.Findings.Profiles {
		profUser[p.User] += p.GPUHours
		profAccount[p.Account] += p.GPUHours
	}
	allUsers := slices.Concat(users, names(w.Users), keys(profUser))
	allAccounts := slices.Concat(accounts, names(w.Accounts), keys(profAccount))

	m := map[string]string{}
	for i, n := range rank(allAccounts, accountHours, profAccount) {
		m[n] = fmt.Sprintf("account-%02d", i+1)
	}
	for i, n := range rank(allUsers, userHours, profUser) {
		m[n] = fmt.Sprintf("user-%02d", i+1)
	}
	r := newReplacer(m)
	keep := func(f reflect.StructField) bool {
		if f.Type == reflect.TypeFor[analysis.Config]() {
			return true
		}
		switch f.Name {
		case "Kind", "Target", "Constraint", "Constraints", "Rule", "Metric", "Op",
			"PercentileMethod", "ID", "Date", "State", "Model", "Partition", "Month",
			"Code", "Binding", "BindingName", "Outcome", "Cheaper":
			return true
		}
		return false
	}
	*d = cleanValue(reflect.ValueOf(*d), r.replace, keep).Interface().(Data)
	d.Anonymized = true
}

func names(gs []analysis.GroupUsage) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// rank returns the distinct non-empty names, those in the workload's top
// list first by GPU-hours, then the rest by their profiles' GPU-hours,
// ties by name.
func rank(all []string, top, prof map[string]float64) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range all {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b string) int {
		_, ta := top[a]
		_, tb := top[b]
		if ta != tb {
			if ta {
				return -1
			}
			return 1
		}
		if ta {
			if c := cmp.Compare(top[b], top[a]); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(prof[b], prof[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// replacer replaces whole-word occurrences of names in one left-to-right
// pass, longest name first at each position, so a replacement is never
// itself replaced.
type replacer struct {
	m       map[string]string
	byFirst map[byte][]string // names by first byte, longest first
}

func newReplacer(m map[string]string) *replacer {
	r := &replacer{m: m, byFirst: map[byte][]string{}}
	for n := range m {
		r.byFirst[n[0]] = append(r.byFirst[n[0]], n)
	}
	for _, ns := range r.byFirst {
		slices.SortFunc(ns, func(a, b string) int {
			if c := cmp.Compare(len(b), len(a)); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
	}
	return r
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func (r *replacer) replace(s string) string {
	var b strings.Builder
	last := 0 // s[last:i] is not yet written
	prev := rune(-1)
	for i := 0; i < len(s); {
		if cands := r.byFirst[s[i]]; cands != nil {
			if n := r.match(s, i, prev, cands); n != "" {
				b.WriteString(s[last:i])
				b.WriteString(r.m[n])
				i += len(n)
				last = i
				prev, _ = utf8.DecodeLastRuneInString(n)
				continue
			}
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		prev = c
		i += size
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// match returns the longest candidate at s[i:] that stands as a whole
// word: a name that starts (ends) with a letter or digit must not follow
// (precede) one.
func (r *replacer) match(s string, i int, prev rune, cands []string) string {
	for _, n := range cands {
		if !strings.HasPrefix(s[i:], n) {
			continue
		}
		first, _ := utf8.DecodeRuneInString(n)
		if isWord(first) && prev >= 0 && isWord(prev) {
			continue
		}
		lastRune, _ := utf8.DecodeLastRuneInString(n)
		if next, _ := utf8.DecodeRuneInString(s[i+len(n):]); i+len(n) < len(s) && isWord(lastRune) && isWord(next) {
			continue
		}
		return n
	}
	return ""
}
