package texttable

import (
	"strings"
	"testing"
)

// TestTable: columns are padded by display width (a CJK character takes
// two cells), a right-aligned column is padded on its left and set apart
// by one space, Gap separates left-aligned columns, and the last cell of
// a line gets no padding.
func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		right map[int]bool
		gap   string
		rows  [][]string
		want  string
	}{
		{"two spaces by default", nil, "", [][]string{{"NAME", "USER"}, {"a", "bob"}},
			"NAME  USER\n" +
				"a     bob\n"},
		{"CJK cell counts two cells", nil, "", [][]string{{"NAME", "USER"}, {"训练", "bob"}, {"x", "al"}},
			"NAME  USER\n" +
				"训练  bob\n" +
				"x     al\n"},
		{"right-aligned column", map[int]bool{1: true}, "", [][]string{{"JOB", "GPUS"}, {"7", "4/1"}, {"训练任务", "12/12"}},
			"JOB       GPUS\n" +
				"7          4/1\n" +
				"训练任务 12/12\n"},
		{"gap of one space, as sacct", map[int]bool{1: true}, " ", [][]string{{"A", "N", "B"}, {"训", "10", "x"}, {"yyy", "1", "z"}},
			"A    N B\n" +
				"训  10 x\n" +
				"yyy  1 z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := New(tt.rows[0]...)
			for i, r := range tt.right {
				tb.Right[i] = r
			}
			tb.Gap = tt.gap
			for _, r := range tt.rows[1:] {
				tb.Row(r...)
			}
			var b strings.Builder
			if err := tb.Write(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}
