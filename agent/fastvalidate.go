package agent

import (
	"bytes"
	"math/bits"
	"regexp"
	"slices"

	"github.com/brisvox/brisvox/agent/jsonlex"
)

// The fast path of argument validation. At Register a tool's parameter
// schema is also compiled into a small tree of fastNodes when it uses only
// the subset below; validateArguments then runs that tree over the raw
// arguments with the lexer of agent/jsonlex, allocating nothing (but one
// buffer for a pattern over a string with escapes), and returns at once
// when it says valid. Any other answer (invalid, or unsure:
// malformed JSON, invalid UTF-8, a duplicate key, a huge exponent, deep
// nesting) sends the call down the library path unchanged, so every refusal
// is the library's. The fast path may only ever answer valid where the
// library does.
//
// The subset, as the library applies it to draft 2020-12 without format or
// content assertion (the registry's compiler):
//
//   - type (one name or a list), enum and const of scalars (null, booleans,
//     numbers compared exactly, so 1 equals 1.0, strings);
//   - properties, required, additionalProperties (boolean or schema),
//     minProperties, maxProperties;
//   - items (one schema), minItems, maxItems, uniqueItems false;
//   - minLength, maxLength (in code points of the decoded string, as the
//     library counts), pattern (Go's regexp, as the library compiles it);
//   - minimum, maximum, exclusiveMinimum, exclusiveMaximum (exact decimal
//     comparison; "integer" means no fractional part, so 1.0 and 1e2 are
//     integers);
//   - $ref to "#" or "#/$defs/name", beside other keywords or alone;
//   - annotations, ignored as the library ignores them: title, description,
//     $comment, default, examples, deprecated, readOnly, writeOnly, format,
//     $defs, and $schema when it names draft 2020-12.
//
// Any other keyword (allOf, anyOf, oneOf, not, if, patternProperties,
// prefixItems, multipleOf, uniqueItems true, $id, $anchor, an unknown
// keyword, ...) leaves the tool without a fast validator. fastcompile.go
// builds the tree, this file runs it, agent/jsonlex reads the JSON's
// strings and numbers and decimal.go compares numbers.

// Bounds of the fast path; past them it answers unsure.
const (
	// maxFastDepth bounds the nesting of values plus $ref hops.
	maxFastDepth = 256
	// maxFastFields is how many names (properties and required) an object
	// schema may declare: one bit each in a uint64.
	maxFastFields = 64
	// maxFastDecodeBytes bounds a key or an enum string with escapes,
	// decoded on the stack.
	maxFastDecodeBytes = 256
	// maxFastCount bounds minLength, maxItems and the like; larger ones
	// are left to the library (it reads them through an int64).
	maxFastCount = 1 << 30
)

// verdict is the fast path's answer about a value.
type verdict uint8

const (
	// verdictValid: the library accepts the value.
	verdictValid verdict = iota
	// verdictInvalid: the value breaks a keyword the library checks too.
	// With a duplicate key in an object the library keeps only the last
	// value; the fast path checks every one, so this may then be wrong.
	// Nothing but tests relies on it.
	verdictInvalid
	// verdictUnsure: the fast path does not model the value.
	verdictUnsure
)

// schemaType is a JSON type as the schema keyword "type" names it.
type schemaType uint8

const (
	kindNull schemaType = iota
	kindBoolean
	kindNumber
	kindInteger
	kindString
	kindArray
	kindObject
)

// typeSet is a set of jsonKinds; empty means any type.
type typeSet uint8

func (s typeSet) has(k schemaType) bool { return s&(1<<k) != 0 }

// fastValidator is a tool's parameter schema compiled for the fast path.
// It is read-only after compileFast and safe for concurrent use.
type fastValidator struct {
	root *fastNode
}

// fastNode is one schema of the subset. Zero values mean "no constraint"
// except where noted.
type fastNode struct {
	never bool      // the schema false
	types typeSet   // empty: any type
	ref   *fastNode // $ref, checked as well as the rest

	enums [][]fastScalar // each of enum and const: the value must equal one of the set

	minLen, maxLen int // maxLen -1: none
	pattern        *regexp.Regexp

	bounds []fastBound

	minItems, maxItems int // maxItems -1: none
	items              *fastNode

	fields     []fastField    // properties, then names only required
	index      map[string]int // field name to its index
	required   uint64         // bits of fields
	additional *fastNode      // nil: any
	minProps   int
	maxProps   int // -1: none
}

// fastField is a name an object schema knows.
type fastField struct {
	schema  *fastNode // the property's schema; nil for a name only required
	inProps bool      // named by properties (so not "additional")
}

// fastScalar is one value of an enum or const.
type fastScalar struct {
	kind schemaType // kindNull, kindBoolean, kindNumber or kindString
	b    bool
	s    string
	num  decimal // points into its own copy of the number's text
}

// fastBound is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum:
// a number satisfies it when cmpDecimal(number, limit) is in ok.
type fastBound struct {
	limit decimal
	ok    [3]bool // indexed by cmp+1
}

func newFastNode() *fastNode { return &fastNode{maxLen: -1, maxItems: -1, maxProps: -1} }

// onlyRef says n is nothing but its $ref.
func (n *fastNode) onlyRef() bool {
	return n.ref != nil && !n.never && n.types == 0 && n.enums == nil && n.minLen == 0 && n.maxLen < 0 &&
		n.pattern == nil && n.bounds == nil && n.minItems == 0 && n.maxItems < 0 && n.items == nil &&
		n.fields == nil && n.additional == nil && n.minProps == 0 && n.maxProps < 0
}

// check runs v over the trimmed arguments args.
func (v *fastValidator) check(args []byte) verdict {
	i := jsonlex.SkipSpace(args, 0)
	if i == len(args) || args[i] != '{' {
		// Not an object: the library words that refusal.
		return verdictUnsure
	}
	end, res := checkValue(v.root, args, i, 0)
	if res != verdictValid {
		return res
	}
	if jsonlex.SkipSpace(args, end) != len(args) {
		return verdictUnsure
	}
	return verdictValid
}

// checkValue checks the value at d[i] against n (nil: any value, scanned
// for syntax only) and returns the index just past it.
func checkValue(n *fastNode, d []byte, i, depth int) (int, verdict) {
	if depth > maxFastDepth || i >= len(d) {
		return i, verdictUnsure
	}
	var end int
	var res verdict
	switch d[i] {
	case '{':
		end, res = checkObject(n, d, i, depth)
	case '[':
		end, res = checkArray(n, d, i, depth)
	case '"':
		end, res = checkString(n, d, i)
	case 't', 'f', 'n':
		end, res = checkLiteral(n, d, i)
	default:
		end, res = checkNumber(n, d, i)
	}
	if res != verdictValid || n == nil || n.ref == nil {
		return end, res
	}
	// $ref applies beside the other keywords: the same value again.
	_, res = checkValue(n.ref, d, i, depth+1)
	return end, res
}

// admitsKind applies never and type to a value of kind k; integral tells
// whether a number has no fractional part.
func (n *fastNode) admitsKind(k schemaType, integral bool) bool {
	if n.never {
		return false
	}
	if n.types == 0 || n.types.has(k) {
		return true
	}
	return k == kindNumber && integral && n.types.has(kindInteger)
}

// checkObject checks the object at d[i] against n: every member, then
// required and the member counts.
func checkObject(n *fastNode, d []byte, i, depth int) (int, verdict) {
	start := i
	if n != nil && (!n.admitsKind(kindObject, false) || n.enums != nil) {
		// Enums hold scalars only: an object equals none of them.
		return i, verdictInvalid
	}
	var seen uint64         // fields met
	members, others := 0, 0 // all members; those of names n does not know
	i = jsonlex.SkipSpace(d, i+1)
	if i < len(d) && d[i] == '}' {
		return finishObject(n, d, start, i+1, seen, members, others)
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return i, verdictUnsure
		}
		kend, _, escaped, fault := jsonlex.ScanString(d, i)
		if fault != jsonlex.NoFault {
			return i, verdictUnsure
		}
		key := d[i:kend] // quotes included
		i = jsonlex.SkipSpace(d, kend)
		if i >= len(d) || d[i] != ':' {
			return i, verdictUnsure
		}
		i = jsonlex.SkipSpace(d, i+1)
		members++
		var child *fastNode
		if n != nil {
			f, known, res := n.field(key, escaped)
			if res != verdictValid {
				return i, res
			}
			switch {
			case known && seen&(1<<f) != 0:
				// A duplicate: the library keeps the last value only.
				return i, verdictUnsure
			case known:
				seen |= 1 << f
			}
			if known && n.fields[f].inProps {
				child = n.fields[f].schema
			} else {
				if !known {
					others++
				}
				child = n.additional
			}
		}
		end, res := checkValue(child, d, i, depth+1)
		if res != verdictValid {
			return end, res
		}
		i = jsonlex.SkipSpace(d, end)
		if i < len(d) && d[i] == ',' {
			i = jsonlex.SkipSpace(d, i+1)
			continue
		}
		if i < len(d) && d[i] == '}' {
			return finishObject(n, d, start, i+1, seen, members, others)
		}
		return i, verdictUnsure
	}
}

// field finds the field named by the key, a string jsonlex.ScanString
// accepted, quotes included (escaped: it holds escapes).
func (n *fastNode) field(key []byte, escaped bool) (int, bool, verdict) {
	if n.index == nil {
		return 0, false, verdictValid
	}
	if !escaped {
		f, ok := n.index[string(key[1:len(key)-1])] // no allocation: a map lookup
		return f, ok, verdictValid
	}
	var buf [maxFastDecodeBytes]byte
	name, _, _ := jsonlex.AppendContent(buf[:0], key, 1)
	if len(name) > len(buf) {
		return 0, false, verdictUnsure
	}
	f, ok := n.index[string(name)]
	return f, ok, verdictValid
}

// finishObject applies required and the member counts to the object that
// starts at d[start] and ends before d[end]. The library counts distinct
// names; the fields n knows cannot repeat here (a repeat is unsure), but
// the others may, so when the counts decide the verdict they are counted
// again, distinct.
func finishObject(n *fastNode, d []byte, start, end int, seen uint64, members, others int) (int, verdict) {
	if n == nil {
		return end, verdictValid
	}
	if seen&n.required != n.required {
		return end, verdictInvalid
	}
	known := bits.OnesCount64(seen)
	low, high := known+min(others, 1), members
	if low < n.minProps && n.minProps <= high || n.maxProps >= 0 && low <= n.maxProps && n.maxProps < high {
		k, ok := distinctOthers(n, d, start)
		if !ok {
			return end, verdictUnsure
		}
		low, high = known+k, known+k
	}
	if high < n.minProps || n.maxProps >= 0 && low > n.maxProps {
		return end, verdictInvalid
	}
	return end, verdictValid
}

// maxFastOthers bounds the names distinctOthers compares pairwise.
const maxFastOthers = 64

// distinctOthers counts the distinct names n does not know among the
// members of the object at d[start], which checkObject has scanned
// already. It gives up (false) on more than maxFastOthers of them or on a
// name with escapes.
func distinctOthers(n *fastNode, d []byte, start int) (int, bool) {
	var names [maxFastOthers][]byte
	k := 0
	i := jsonlex.SkipSpace(d, start+1)
	for i < len(d) && d[i] == '"' {
		kend, _, escaped, _ := jsonlex.ScanString(d, i)
		key := d[i+1 : kend-1]
		if escaped {
			return 0, false
		}
		if _, known := n.index[string(key)]; !known {
			if !slices.ContainsFunc(names[:k], func(b []byte) bool { return bytes.Equal(b, key) }) {
				if k == maxFastOthers {
					return 0, false
				}
				names[k] = key
				k++
			}
		}
		i = jsonlex.SkipSpace(d, kend)
		i = jsonlex.SkipSpace(d, i+1) // the colon
		i, _ = checkValue(nil, d, i, 0)
		i = jsonlex.SkipSpace(d, i)
		if i < len(d) && d[i] == ',' {
			i = jsonlex.SkipSpace(d, i+1)
		}
	}
	return k, true
}

// checkArray checks the array at d[i] against n: every item, then the
// item counts.
func checkArray(n *fastNode, d []byte, i, depth int) (int, verdict) {
	if n != nil && (!n.admitsKind(kindArray, false) || n.enums != nil) {
		return i, verdictInvalid
	}
	var items *fastNode
	if n != nil {
		items = n.items
	}
	count := 0
	i = jsonlex.SkipSpace(d, i+1)
	if i < len(d) && d[i] == ']' {
		return finishArray(n, i+1, count)
	}
	for {
		end, res := checkValue(items, d, i, depth+1)
		if res != verdictValid {
			return end, res
		}
		count++
		i = jsonlex.SkipSpace(d, end)
		if i < len(d) && d[i] == ',' {
			i = jsonlex.SkipSpace(d, i+1)
			continue
		}
		if i < len(d) && d[i] == ']' {
			return finishArray(n, i+1, count)
		}
		return i, verdictUnsure
	}
}

// finishArray applies minItems and maxItems to an array of count items.
func finishArray(n *fastNode, end, count int) (int, verdict) {
	if n != nil && (count < n.minItems || n.maxItems >= 0 && count > n.maxItems) {
		return end, verdictInvalid
	}
	return end, verdictValid
}

// checkString checks the string at d[i] against n: type, enum and const,
// length in runes, pattern.
func checkString(n *fastNode, d []byte, i int) (int, verdict) {
	end, runes, escaped, fault := jsonlex.ScanString(d, i)
	if fault != jsonlex.NoFault {
		return end, verdictUnsure
	}
	if n == nil {
		return end, verdictValid
	}
	if !n.admitsKind(kindString, false) {
		return end, verdictInvalid
	}
	str := d[i:end] // quotes included
	for _, set := range n.enums {
		res := matchString(set, str, escaped)
		if res != verdictValid {
			return end, res
		}
	}
	if runes < n.minLen || n.maxLen >= 0 && runes > n.maxLen {
		return end, verdictInvalid
	}
	if n.pattern != nil {
		s := str[1 : len(str)-1]
		if escaped {
			// The one allocation of the fast path, for a pattern over
			// a string with escapes: decoded, it is never longer.
			s, _, _ = jsonlex.AppendContent(make([]byte, 0, len(s)), str, 1)
		}
		if !n.pattern.Match(s) {
			return end, verdictInvalid
		}
	}
	return end, verdictValid
}

// matchString says whether the string str (quotes included, as
// jsonlex.ScanString accepted it) equals one of the set's strings.
func matchString(set []fastScalar, str []byte, escaped bool) verdict {
	s := str[1 : len(str)-1]
	var buf [maxFastDecodeBytes]byte
	if escaped {
		s, _, _ = jsonlex.AppendContent(buf[:0], str, 1)
		if len(s) > len(buf) {
			return verdictUnsure
		}
	}
	for _, e := range set {
		if e.kind == kindString && e.s == string(s) {
			return verdictValid
		}
	}
	return verdictInvalid
}

// checkLiteral checks the true, false or null at d[i] against n.
func checkLiteral(n *fastNode, d []byte, i int) (int, verdict) {
	var lit string
	var val fastScalar
	switch d[i] {
	case 't':
		lit, val = "true", fastScalar{kind: kindBoolean, b: true}
	case 'f':
		lit, val = "false", fastScalar{kind: kindBoolean}
	default:
		lit, val = "null", fastScalar{kind: kindNull}
	}
	end := i + len(lit)
	if end > len(d) || string(d[i:end]) != lit {
		return i, verdictUnsure
	}
	if n == nil {
		return end, verdictValid
	}
	if !n.admitsKind(val.kind, false) {
		return end, verdictInvalid
	}
	for _, set := range n.enums {
		if !slices.ContainsFunc(set, func(e fastScalar) bool { return e.kind == val.kind && e.b == val.b }) {
			return end, verdictInvalid
		}
	}
	return end, verdictValid
}

// checkNumber checks the number at d[i] against n: type (integer by
// value), enum and const, bounds.
func checkNumber(n *fastNode, d []byte, i int) (int, verdict) {
	end, _, fault := jsonlex.Number(d, i)
	if fault != jsonlex.NoFault {
		return end, verdictUnsure
	}
	if n == nil {
		return end, verdictValid
	}
	x, ok := parseDecimal(d[i:end])
	if !ok {
		return end, verdictUnsure
	}
	if !n.admitsKind(kindNumber, x.isInteger()) {
		return end, verdictInvalid
	}
	for _, set := range n.enums {
		if !slices.ContainsFunc(set, func(e fastScalar) bool { return e.kind == kindNumber && cmpDecimal(x, e.num) == 0 }) {
			return end, verdictInvalid
		}
	}
	for _, b := range n.bounds {
		if !b.ok[cmpDecimal(x, b.limit)+1] {
			return end, verdictInvalid
		}
	}
	return end, verdictValid
}
