package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/gpuprof/gpuprof/profile"
)

// A chunk of gpu_series.points is stored in one of two forms, told apart
// by its first byte:
//
//   - '[': a JSON array of profile.Point, as every gpuprof before the
//     binary form wrote it (and migration 0006 still does). Read as ever;
//     never rewritten just to change form.
//   - chunkBinary (0x01): the binary form below, written since. Its points
//     read back exactly as put, every field bit for bit (floats included).
//
// The binary form: the version byte, the number of points (uvarint), then
// per point a mask (uvarint) of the fields that differ from the point
// before (all zero before the first) and, in mask-bit order, each such
// field's change:
//
//	bit 0 T          change of the step from the point before (t − t₋₁ − (t₋₁ − t₋₂)), zigzag varint
//	bit 1 UtilSum    uint32 difference, zigzag varint
//	bit 2 MemMax     uint64 difference, zigzag varint
//	bit 3 SMSum      the float's bits XOR the previous one's: a byte of trailing zeros, then the rest as uvarint
//	bit 4 TensorSum  as SMSum
//	bit 5 UtilMax    uint8 difference, zigzag varint
//	bit 6 N          uint32 difference, zigzag varint
//	bit 7 SMN        uint32 difference, zigzag varint
//	bit 8 TensorN    uint32 difference, zigzag varint
//
// A steady stretch (buckets one step apart, the same memory, one reading
// each) costs a mask byte and the utilisation's change; the bits are
// ordered so that the mask of a series with GPM readings still fits in
// one byte while the counts stay constant.
const chunkBinary = 0x01

const (
	fieldT = 1 << iota
	fieldUtilSum
	fieldMemMax
	fieldSMSum
	fieldTensorSum
	fieldUtilMax
	fieldN
	fieldSMN
	fieldTensorN
	fieldAll = fieldTensorN<<1 - 1
)

// errChunk: a stored chunk that is neither form, or a binary one cut short
// or followed by bytes of nothing.
var errChunk = errors.New("malformed series chunk")

// encodeChunk returns pts in the binary form.
func encodeChunk(pts []profile.Point) []byte {
	b := make([]byte, 0, 8+4*len(pts))
	b = append(b, chunkBinary)
	b = binary.AppendUvarint(b, uint64(len(pts)))
	var prev profile.Point
	var prevStep int64
	for _, p := range pts {
		step := p.T - prev.T
		var mask uint64
		if step != prevStep {
			mask |= fieldT
		}
		if p.UtilSum != prev.UtilSum {
			mask |= fieldUtilSum
		}
		if p.MemMax != prev.MemMax {
			mask |= fieldMemMax
		}
		if math.Float64bits(p.SMSum) != math.Float64bits(prev.SMSum) {
			mask |= fieldSMSum
		}
		if math.Float64bits(p.TensorSum) != math.Float64bits(prev.TensorSum) {
			mask |= fieldTensorSum
		}
		if p.UtilMax != prev.UtilMax {
			mask |= fieldUtilMax
		}
		if p.N != prev.N {
			mask |= fieldN
		}
		if p.SMN != prev.SMN {
			mask |= fieldSMN
		}
		if p.TensorN != prev.TensorN {
			mask |= fieldTensorN
		}
		b = binary.AppendUvarint(b, mask)
		if mask&fieldT != 0 {
			b = binary.AppendVarint(b, step-prevStep)
		}
		if mask&fieldUtilSum != 0 {
			b = binary.AppendVarint(b, int64(int32(p.UtilSum-prev.UtilSum)))
		}
		if mask&fieldMemMax != 0 {
			b = binary.AppendVarint(b, int64(p.MemMax-prev.MemMax))
		}
		if mask&fieldSMSum != 0 {
			b = appendFloatXOR(b, p.SMSum, prev.SMSum)
		}
		if mask&fieldTensorSum != 0 {
			b = appendFloatXOR(b, p.TensorSum, prev.TensorSum)
		}
		if mask&fieldUtilMax != 0 {
			b = binary.AppendVarint(b, int64(int8(p.UtilMax-prev.UtilMax)))
		}
		if mask&fieldN != 0 {
			b = binary.AppendVarint(b, int64(int32(p.N-prev.N)))
		}
		if mask&fieldSMN != 0 {
			b = binary.AppendVarint(b, int64(int32(p.SMN-prev.SMN)))
		}
		if mask&fieldTensorN != 0 {
			b = binary.AppendVarint(b, int64(int32(p.TensorN-prev.TensorN)))
		}
		prev, prevStep = p, step
	}
	return b
}

// appendFloatXOR appends v's bits XOR prev's (never zero: the mask says it
// changed) as the number of trailing zero bits, one byte, and the bits
// above them as a uvarint: integral and coarse values, whose low mantissa
// bits are zero, take two or three bytes.
func appendFloatXOR(b []byte, v, prev float64) []byte {
	x := math.Float64bits(v) ^ math.Float64bits(prev)
	tz := bits.TrailingZeros64(x)
	b = append(b, byte(tz))
	return binary.AppendUvarint(b, x>>tz)
}

// decodeChunk reads one stored chunk in either form.
func decodeChunk(b []byte) ([]profile.Point, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty", errChunk)
	}
	if b[0] != chunkBinary {
		var pts []profile.Point
		if err := json.Unmarshal(b, &pts); err != nil {
			return nil, fmt.Errorf("%w: %w", errChunk, err)
		}
		return pts, nil
	}
	r := chunkReader{b: b[1:]}
	n := r.uvarint()
	// Every point takes at least its mask byte: a count beyond the bytes
	// left is a corrupt chunk, not an allocation to make.
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: point count", errChunk)
	}
	pts := make([]profile.Point, n)
	var prev profile.Point
	var prevStep int64
	for i := range pts {
		p := prev
		mask := r.uvarint()
		if mask&^fieldAll != 0 {
			return nil, fmt.Errorf("%w: point %d: unknown fields %#x", errChunk, i, mask&^fieldAll)
		}
		step := prevStep
		if mask&fieldT != 0 {
			step += r.varint()
		}
		p.T = prev.T + step
		if mask&fieldUtilSum != 0 {
			p.UtilSum = prev.UtilSum + uint32(r.varint())
		}
		if mask&fieldMemMax != 0 {
			p.MemMax = prev.MemMax + uint64(r.varint())
		}
		if mask&fieldSMSum != 0 {
			p.SMSum = r.floatXOR(prev.SMSum)
		}
		if mask&fieldTensorSum != 0 {
			p.TensorSum = r.floatXOR(prev.TensorSum)
		}
		if mask&fieldUtilMax != 0 {
			p.UtilMax = prev.UtilMax + uint8(r.varint())
		}
		if mask&fieldN != 0 {
			p.N = prev.N + uint32(r.varint())
		}
		if mask&fieldSMN != 0 {
			p.SMN = prev.SMN + uint32(r.varint())
		}
		if mask&fieldTensorN != 0 {
			p.TensorN = prev.TensorN + uint32(r.varint())
		}
		if r.err != nil {
			return nil, fmt.Errorf("%w: point %d: %w", errChunk, i, r.err)
		}
		pts[i], prev, prevStep = p, p, step
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last point", errChunk, len(r.b))
	}
	return pts, nil
}

// chunkReader reads the binary form; its first error sticks.
type chunkReader struct {
	b   []byte
	err error
}

var errShort = errors.New("cut short")

func (r *chunkReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *chunkReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or
// binary.Varint): 0 and errShort when the bytes end inside it.
func readVarint[T int64 | uint64](r *chunkReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *chunkReader) floatXOR(prev float64) float64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errShort
		return 0
	}
	tz := r.b[0]
	r.b = r.b[1:]
	x := r.uvarint()
	if r.err == nil && (tz > 63 || x == 0 || x<<tz>>tz != x || x&1 == 0) {
		// One encoding per value: the XOR is never zero (the mask would
		// not say the field changed), and tz counts every trailing zero.
		r.err = errors.New("float field not in canonical form")
		return 0
	}
	return math.Float64frombits(math.Float64bits(prev) ^ x<<tz)
}
