package slurmext

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{name: "empty", in: "", want: nil},
		{name: "only separators", in: " , ,", want: nil},
		{name: "single host", in: "login1", want: []string{"login1"}},
		{name: "brief example", in: "gpu[01-04,07],login1",
			want: []string{"gpu01", "gpu02", "gpu03", "gpu04", "gpu07", "login1"}},
		{name: "padding kept across a decade", in: "n[08-11]", want: []string{"n08", "n09", "n10", "n11"}},
		{name: "no padding grows naturally", in: "n[8-10]", want: []string{"n8", "n9", "n10"}},
		{name: "wide padding", in: "n[001-002]", want: []string{"n001", "n002"}},
		{name: "suffix after brackets", in: "r[1-2]-ib", want: []string{"r1-ib", "r2-ib"}},
		{name: "cartesian product, first group slowest", in: "r[1-2]n[1-2]",
			want: []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{name: "bare brackets", in: "[1-2]", want: []string{"1", "2"}},
		{name: "device files", in: "/dev/nvidia[0-3]",
			want: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}},
		{name: "comma list of paths", in: "/dev/nvidia0,/dev/nvidia2", want: []string{"/dev/nvidia0", "/dev/nvidia2"}},
		{name: "white space separates", in: "a b\tc\nd", want: []string{"a", "b", "c", "d"}},
		{name: "duplicates kept in order", in: "b,a,b", want: []string{"b", "a", "b"}},
		{name: "empty items skipped", in: "a,,b,", want: []string{"a", "b"}},
		{name: "single element group", in: "gpu[5]", want: []string{"gpu5"}},
		{name: "unclosed bracket", in: "gpu[01-04", wantErr: ErrBadHostlist},
		{name: "unopened bracket", in: "gpu01]", wantErr: ErrBadHostlist},
		{name: "nested brackets", in: "gpu[1-[2]]", wantErr: ErrBadHostlist},
		{name: "empty brackets", in: "gpu[]", wantErr: ErrBadHostlist},
		{name: "reverse range", in: "gpu[3-1]", wantErr: ErrBadHostlist},
		{name: "letters in range", in: "gpu[a-b]", wantErr: ErrBadHostlist},
		{name: "empty range item", in: "gpu[1,,2]", wantErr: ErrBadHostlist},
		{name: "open range", in: "gpu[1-]", wantErr: ErrBadHostlist},
		{name: "space in brackets", in: "gpu[1 - 2]", wantErr: ErrBadHostlist},
		{name: "number above 32 bits", in: "n[0-4294967296]", wantErr: ErrBadHostlist},
		{name: "too many hosts", in: "n[0-65536]", wantErr: ErrTooLarge},
		{name: "too many in product", in: "a[0-999]b[0-999]", wantErr: ErrTooLarge},
		{name: "too many over terms", in: "a[0-40000],b[0-40000]", wantErr: ErrTooLarge},
		{name: "absurd padding", in: "n[" + strings.Repeat("0", 200) + "-65000]", wantErr: ErrTooLarge},
		{name: "32-bit range refused before allocation", in: "n[0-4294967295]", wantErr: ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ExpandHostlist(%q) error = %v, want %v", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExpandHostlist(%q) error = %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExpandHostlist(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandHostlistAtBound(t *testing.T) {
	got, err := ExpandHostlist("n[00000-65535]")
	if err != nil {
		t.Fatalf("ExpandHostlist at the bound: %v", err)
	}
	if len(got) != MaxHostlistHosts || got[0] != "n00000" || got[len(got)-1] != "n65535" {
		t.Errorf("got %d hosts from %q to %q, want %d from n00000 to n65535",
			len(got), got[0], got[len(got)-1], MaxHostlistHosts)
	}
}

func TestHostlistContains(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		host    string
		want    bool
		wantErr error
	}{
		{name: "plain name", expr: "login1", host: "login1", want: true},
		{name: "plain name differs", expr: "login1", host: "login2", want: false},
		{name: "in padded range", expr: "gpu[01-04]", host: "gpu03", want: true},
		{name: "unpadded form of padded range", expr: "gpu[01-04]", host: "gpu3", want: false},
		{name: "outside range", expr: "gpu[01-04]", host: "gpu05", want: false},
		{name: "second item of group", expr: "gpu[01-04,07]", host: "gpu07", want: true},
		{name: "second term", expr: "gpu[01-02],login1", host: "login1", want: true},
		{name: "grows past padding", expr: "n[8-10]", host: "n10", want: true},
		{name: "extra zero not produced", expr: "n[8-10]", host: "n08", want: false},
		{name: "wide range without expanding", expr: "n[0-4294967295]", host: "n4000000000", want: true},
		{name: "wide range miss", expr: "n[1-4294967295]", host: "n0", want: false},
		{name: "product", expr: "r[1-2]n[1-2]", host: "r2n1", want: true},
		{name: "digits after group need backtracking", expr: "n[1-20]0", host: "n200", want: true},
		{name: "prefix only", expr: "gpu[01-04]", host: "gpu", want: false},
		{name: "longer host", expr: "gpu[01-04]", host: "gpu011", want: false},
		{name: "empty host", expr: "gpu[01-04]", host: "", want: false},
		{name: "empty expression", expr: "", host: "gpu01", want: false},
		{name: "malformed", expr: "gpu[01-04", host: "gpu01", wantErr: ErrBadHostlist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HostlistContains(tt.expr, tt.host)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("HostlistContains(%q, %q) error = %v, want %v", tt.expr, tt.host, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("HostlistContains(%q, %q) error = %v", tt.expr, tt.host, err)
			}
			if got != tt.want {
				t.Errorf("HostlistContains(%q, %q) = %v, want %v", tt.expr, tt.host, got, tt.want)
			}
		})
	}
}

// TestHostlistContainsManyGroups guards the memo in termMatcher: without it
// this takes exponential time.
func TestHostlistContainsManyGroups(t *testing.T) {
	expr := strings.Repeat("[0-99]", 40) + "x"
	host := strings.Repeat("1", 80) + "y"
	got, err := HostlistContains(expr, host)
	if err != nil || got {
		t.Errorf("HostlistContains = %v, %v; want false, nil", got, err)
	}
}

func TestHostlistContainsAgreesWithExpand(t *testing.T) {
	exprs := []string{"gpu[01-04,07],login1", "n[8-12]", "r[1-2]n[09-11]", "a[0-3]0", "[0-12]"}
	for _, expr := range exprs {
		hosts, err := ExpandHostlist(expr)
		if err != nil {
			t.Fatalf("ExpandHostlist(%q): %v", expr, err)
		}
		for _, h := range hosts {
			if ok, err := HostlistContains(expr, h); !ok || err != nil {
				t.Errorf("HostlistContains(%q, %q) = %v, %v; want true", expr, h, ok, err)
			}
		}
		for i := range 130 {
			for _, h := range []string{fmt.Sprint("gpu", i), fmt.Sprintf("gpu%02d", i), fmt.Sprint("n", i),
				fmt.Sprintf("r1n%02d", i), fmt.Sprint("a", i), fmt.Sprint(i)} {
				got, _ := HostlistContains(expr, h)
				if want := slices.Contains(hosts, h); got != want {
					t.Errorf("HostlistContains(%q, %q) = %v, want %v", expr, h, got, want)
				}
			}
		}
	}
}

// TestCheckHostlistAllocates: an import checks every job's NodeList; a
// well-formed list is checked without allocating (it was parsed into terms
// before, two or more allocations a list), and a malformed one still fails.
func TestCheckHostlistAllocates(t *testing.T) {
	for _, s := range []string{"gpu[53-54]", "gpu01", "gpu[01-04,07],login1", "r[1-2]n[1-2]", ""} {
		if err := CheckHostlist(s); err != nil {
			t.Fatalf("CheckHostlist(%q) = %v", s, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = CheckHostlist(s) }); n != 0 {
			t.Errorf("CheckHostlist(%q): %v allocations, want 0", s, n)
		}
	}
	for _, s := range []string{"gpu[1-", "gpu]", "gpu[]", "gpu[2-1]", "gpu[a]", "gpu[1[2]]"} {
		if err := CheckHostlist(s); !errors.Is(err, ErrBadHostlist) {
			t.Errorf("CheckHostlist(%q) = %v, want ErrBadHostlist", s, err)
		}
		if _, err := ExpandHostlist(s); !errors.Is(err, ErrBadHostlist) {
			t.Errorf("ExpandHostlist(%q) = %v, want ErrBadHostlist", s, err)
		}
	}
}
