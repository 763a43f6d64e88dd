package commentqueue

import (
	"regexp"
	"strings"
	"testing"
)

// TestQueueNameRules: queueCluster and queueJobID accept exactly what the
// regular expressions they replaced accepted (issue #41: the hook links no
// regexp), on every string of up to four characters over an alphabet of
// their edge cases and on the length limits.
func TestQueueNameRules(t *testing.T) {
	rules := []struct {
		name string
		re   *regexp.Regexp
		f    func(string) bool
	}{
		{"cluster", regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`), queueCluster},
		{"job id", regexp.MustCompile(`^[0-9]{1,20}(_[0-9]{1,10})?(\+[0-9]{1,10})?$`), queueJobID},
	}
	alphabet := []string{"a", "z", "A", "0", "9", "_", "-", "+", ".", "/", "\n", "é"}
	inputs := []string{""}
	for n, last := 0, []string{""}; n < 4; n++ {
		var next []string
		for _, p := range last {
			for _, c := range alphabet {
				next = append(next, p+c)
			}
		}
		inputs, last = append(inputs, next...), next
	}
	for _, n := range []int{9, 10, 11, 19, 20, 21, 63, 64, 65} {
		d, a := strings.Repeat("7", n), strings.Repeat("a", n)
		inputs = append(inputs, d, a, "1"+a, d+"_"+d, "1_"+d, "1+"+d, "1_2+"+d, d+"+1", "x"+a[1:], "-"+a[1:], d+"\n")
	}
	for _, r := range rules {
		accepted := 0
		for _, s := range inputs {
			want := r.re.MatchString(s)
			if got := r.f(s); got != want {
				t.Errorf("%s %q: got %v, want %v (as %s)", r.name, s, got, want, r.re)
			}
			if want {
				accepted++
			}
		}
		if accepted < 50 {
			t.Errorf("%s: only %d of %d inputs accepted; the test would prove little", r.name, accepted, len(inputs))
		}
	}
}
