package gpu

import "testing"

func TestXID(t *testing.T) {
	tests := []struct {
		code      uint64
		wantClass XIDClass
	}{
		// The job's: NVIDIA's device plugin leaves the GPU healthy on these.
		{13, XIDApplication}, {31, XIDApplication}, {43, XIDApplication}, {45, XIDApplication},
		{68, XIDApplication}, {109, XIDApplication},
		// The hardware's or the driver's.
		{48, XIDHardware}, {63, XIDHardware}, {64, XIDHardware}, {74, XIDHardware}, {79, XIDHardware},
		{92, XIDHardware}, {93, XIDHardware}, {94, XIDHardware}, {95, XIDHardware}, {119, XIDHardware},
		// Not in the table.
		{0, XIDUnclassified}, {999, XIDUnclassified},
	}
	for _, tt := range tests {
		got := XID(tt.code)
		if got.Class != tt.wantClass || got.Code != tt.code || got.Name == "" {
			t.Errorf("XID(%d) = %+v, want class %s with a name", tt.code, got, tt.wantClass)
		}
	}
	if got := XID(999).Name; got != "XID 999" {
		t.Errorf("XID(999).Name = %q, want %q", got, "XID 999")
	}
}
