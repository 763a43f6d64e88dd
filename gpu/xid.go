package gpu

import "fmt"

// XIDClass says whose an XID error is.
type XIDClass string

const (
	// XIDApplication: the job's own program did it (an illegal address, a
	// fault it caused, its channel torn down after its own error or its
	// end). The GPU is fine; the user's code is worth a look.
	XIDApplication XIDClass = "application"
	// XIDHardware: the GPU, its memory, its links or the driver failed (ECC
	// errors, row remapping, NVLink, a GPU fallen off the bus, firmware).
	// The job was a victim; a GPU that keeps doing it is failing.
	XIDHardware XIDClass = "hardware"
	// XIDUnclassified: a code the table does not list.
	XIDUnclassified XIDClass = "unclassified"
)

// XIDInfo is what the policy table says of one XID code.
type XIDInfo struct {
	Code  uint64
	Name  string // short description, e.g. "GPU memory page fault: an illegal address"
	Class XIDClass
}

// xids is the policy table of XID codes: a short name for each, and whose
// fault it is. It follows NVIDIA's Xid catalog
// (docs.nvidia.com/deploy/xid-errors) and the split NVIDIA's Kubernetes
// device plugin makes when it decides whether an XID marks a GPU unhealthy
// (it ignores 13, 31, 43, 45, 68 and 109 as the application's). Codes the
// catalog lists as caused by either side (13, 31, 43) count as the
// application's: the catalog names the user's program first, and a GPU
// that really fails shows hardware codes beside them.
var xids = map[uint64]XIDInfo{
	8:   {Name: "GPU stopped processing: engine timeout", Class: XIDHardware},
	13:  {Name: "graphics engine exception: an illegal instruction or out-of-range access", Class: XIDApplication},
	31:  {Name: "GPU memory page fault: an illegal address", Class: XIDApplication},
	32:  {Name: "invalid or corrupted push buffer stream", Class: XIDHardware},
	38:  {Name: "driver firmware error", Class: XIDHardware},
	43:  {Name: "GPU stopped processing: the program's channel was stopped", Class: XIDApplication},
	45:  {Name: "preemptive cleanup after an earlier error or the program's end", Class: XIDApplication},
	48:  {Name: "double-bit ECC error", Class: XIDHardware},
	56:  {Name: "display engine error", Class: XIDHardware},
	57:  {Name: "error programming video memory interface", Class: XIDHardware},
	58:  {Name: "unstable video memory interface", Class: XIDHardware},
	61:  {Name: "internal micro-controller breakpoint or warning", Class: XIDHardware},
	62:  {Name: "internal micro-controller halt", Class: XIDHardware},
	63:  {Name: "ECC page retirement or row remapping recorded", Class: XIDHardware},
	64:  {Name: "ECC page retirement or row remapping failed", Class: XIDHardware},
	68:  {Name: "video decoder (NVDEC) exception", Class: XIDApplication},
	69:  {Name: "graphics engine class error", Class: XIDHardware},
	74:  {Name: "NVLink error", Class: XIDHardware},
	79:  {Name: "GPU has fallen off the bus", Class: XIDHardware},
	92:  {Name: "high single-bit ECC error rate", Class: XIDHardware},
	93:  {Name: "InfoROM wear limit exceeded", Class: XIDHardware},
	94:  {Name: "contained uncorrectable ECC error", Class: XIDHardware},
	95:  {Name: "uncontained uncorrectable ECC error", Class: XIDHardware},
	109: {Name: "context switch timeout", Class: XIDApplication},
	119: {Name: "GSP firmware RPC timeout", Class: XIDHardware},
	120: {Name: "GSP firmware error", Class: XIDHardware},
	121: {Name: "C2C link corrected error", Class: XIDHardware},
	140: {Name: "unrecovered ECC error", Class: XIDHardware},
	143: {Name: "GPU initialisation failure", Class: XIDHardware},
}

// XID returns the table's entry for code; a code it does not list is
// XIDUnclassified, named by its number.
func XID(code uint64) XIDInfo {
	if x, ok := xids[code]; ok {
		x.Code = code
		return x
	}
	return XIDInfo{Code: code, Name: fmt.Sprintf("XID %d", code), Class: XIDUnclassified}
}
