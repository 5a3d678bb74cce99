package agentfile

import "slices"

// kind is what a node of the tree holds.
type kind uint8

const (
	kTable kind = iota + 1
	kArray
	kString
	kInt
	kFloat
	kBool
	kNull
	// kOther is a value no setting takes (a TOML date, a YAML timestamp
	// or binary); its source text is in str.
	kOther
)

// what names a kind in messages ("got an integer").
func (k kind) what() string {
	switch k {
	case kTable:
		return "a table"
	case kArray:
		return "a list"
	case kString:
		return "a string"
	case kInt:
		return "an integer"
	case kFloat:
		return "a number with a fraction"
	case kBool:
		return "a boolean"
	case kNull:
		return "nothing"
	}
	return "a date or another value"
}

// node is a value of the tree both formats are read into.
type node struct {
	kind kind
	pos  Pos
	str  string // kString; the source text for kOther
	i    int64
	f    float64
	b    bool

	entries []*entry // kTable, in file order
	items   []*node  // kArray

	// TOML bookkeeping: a table named by a [header] (explicit), made by a
	// dotted key (dotted), written inline (closed), or an array of
	// [[tables]] (arrayTable).
	explicit, dotted, closed, arrayTable bool
}

// entry is a key of a table and its value.
type entry struct {
	key    string
	keyPos Pos
	val    *node
}

// get is the entry of key, or nil.
func (n *node) get(key string) *entry {
	for _, e := range n.entries {
		if e.key == key {
			return e
		}
	}
	return nil
}

// add appends an entry.
func (n *node) add(key string, keyPos Pos, val *node) *entry {
	e := &entry{key: key, keyPos: keyPos, val: val}
	n.entries = append(n.entries, e)
	return e
}

// maxBytes bounds a file: an agent file is a few kilobytes.
const maxBytes = 1 << 20

// maxDepth bounds nesting: an agent file nests three levels.
const maxDepth = 32

// Hints of the tree's own limits, the same in both formats.
const (
	nestedHint     = "an agent file nests three levels: write the value flat"
	intRangeHint   = "an integer is at most 9223372036854775807 (no setting needs more)"
	floatRangeHint = "write a number within ±1.8e308 (no setting needs more)"
)

// maxNodes bounds the tree (YAML aliases can multiply a small file).
const maxNodes = 100_000

// lineIndex finds the line and column of a byte offset.
type lineIndex struct {
	starts []int // offset of each line's first byte
	size   int
}

func newLineIndex(data []byte) lineIndex {
	idx := lineIndex{starts: []int{0}, size: len(data)}
	for i, c := range data {
		if c == '\n' {
			idx.starts = append(idx.starts, i+1)
		}
	}
	return idx
}

// pos is the position of offset off (clamped to the input).
func (x lineIndex) pos(off int) Pos {
	off = max(0, min(off, x.size))
	line, _ := slices.BinarySearch(x.starts, off+1)
	return Pos{line, off - x.starts[line-1] + 1}
}

// inside tells whether p is a position of the input: a line of it, and
// a column from 1 to just past the line's last byte.
func (x lineIndex) inside(p Pos) bool {
	if p.Line < 1 || p.Line > len(x.starts) || p.Col < 1 {
		return false
	}
	end := x.size
	if p.Line < len(x.starts) {
		end = x.starts[p.Line] - 1 // the '\n'
	}
	return p.Col <= end-x.starts[p.Line-1]+1
}
