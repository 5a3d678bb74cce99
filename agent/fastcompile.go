package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/agent/jsonlex"
)

// Compiling a parameter schema for the fast path (see fastvalidate.go for
// the subset). The schema has already compiled in the library, so its
// keywords have the types the meta-schema demands; anything unexpected is
// still refused here rather than assumed.

// draft2020URL is the only $schema the fast path accepts: the registry's
// default draft.
const draft2020URL = "https://json-schema.org/draft/2020-12/schema"

// errFastSubset says why a schema is outside the fast path's subset.
type errFastSubset struct {
	at, why string
	err     error // the cause, if any
}

func (e *errFastSubset) Error() string {
	s := "fast validator: " + e.at + ": " + e.why
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func (e *errFastSubset) Unwrap() error { return e.err }

func unsupported(at, format string, args ...any) error {
	return &errFastSubset{at: at, why: fmt.Sprintf(format, args...)}
}

// compileFast compiles the parameter schema doc (as jsonschema.UnmarshalJSON
// parsed it, and as the library compiled it without error) for the fast
// path. It fails, with an *errFastSubset, when doc uses anything outside
// the subset; the tool is then validated by the library alone.
func compileFast(doc any) (*fastValidator, error) {
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, unsupported("#", "not an object schema")
	}
	c := fastCompiler{root: root, defs: map[string]*fastNode{}, rootNode: newFastNode()}
	if err := c.fill(c.rootNode, root, "#"); err != nil {
		return nil, err
	}
	// A chain of $ref that comes back to itself without descending into
	// the value would loop; the library reports it as a cycle.
	for name, n := range c.defs {
		if !refChainEnds(n, len(c.defs)+1) {
			return nil, unsupported("#/$defs/"+name, "a $ref cycle")
		}
	}
	if !refChainEnds(c.rootNode, len(c.defs)+1) {
		return nil, unsupported("#", "a $ref cycle")
	}
	return &fastValidator{root: c.rootNode}, nil
}

// refChainEnds says whether n's $ref chain ends within hops steps.
func refChainEnds(n *fastNode, hops int) bool {
	for range hops {
		if n = n.ref; n == nil {
			return true
		}
	}
	return false
}

// fastCompiler holds the state of one compileFast.
type fastCompiler struct {
	root     map[string]any
	rootNode *fastNode
	defs     map[string]*fastNode // compiled #/$defs/ targets, by name
}

// node compiles the subschema v found at at.
func (c *fastCompiler) node(v any, at string) (*fastNode, error) {
	n := newFastNode()
	if err := c.build(n, v, at); err != nil {
		return nil, err
	}
	if n.onlyRef() {
		return n.ref, nil
	}
	return n, nil
}

// build compiles the subschema v into n.
func (c *fastCompiler) build(n *fastNode, v any, at string) error {
	switch v := v.(type) {
	case bool:
		n.never = !v
		return nil
	case map[string]any:
		return c.fill(n, v, at)
	default:
		return unsupported(at, "a schema of type %T", v)
	}
}

// fill compiles the keywords of the object schema obj into n.
func (c *fastCompiler) fill(n *fastNode, obj map[string]any, at string) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same schema always gives the same reason
	var required []string
	for _, k := range keys {
		v := obj[k]
		kat := at + "/" + k
		var err error
		switch k {
		case "title", "description", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly", "$defs":
			// Annotations; referenced $defs are compiled from their $ref.
		case "format":
			// An annotation in draft 2020-12 unless the compiler asserts
			// formats, which the registry's does not.
		case "$schema":
			if s, _ := v.(string); at != "#" || s != draft2020URL {
				err = unsupported(kat, "a $schema other than draft 2020-12 at the root")
			}
		case "$ref":
			n.ref, err = c.ref(v, kat)
		case "type":
			n.types, err = typesOf(v, kat)
		case "enum":
			var set []fastScalar
			if set, err = scalarsOf(v, kat); err == nil {
				n.enums = append(n.enums, set)
			}
		case "const":
			var set []fastScalar
			if set, err = scalarsOf([]any{v}, kat); err == nil {
				n.enums = append(n.enums, set)
			}
		case "minLength":
			n.minLen, err = countOf(v, kat)
		case "maxLength":
			n.maxLen, err = countOf(v, kat)
		case "pattern":
			s, ok := v.(string)
			if !ok {
				err = unsupported(kat, "not a string")
				break
			}
			// The library's default engine: regexp.Compile, MatchString.
			if n.pattern, err = regexp.Compile(s); err != nil {
				err = &errFastSubset{at: kat, why: "pattern does not compile", err: err}
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			var b fastBound
			if b, err = boundOf(k, v, kat); err == nil {
				n.bounds = append(n.bounds, b)
			}
		case "minItems":
			n.minItems, err = countOf(v, kat)
		case "maxItems":
			n.maxItems, err = countOf(v, kat)
		case "uniqueItems":
			if b, ok := v.(bool); !ok || b {
				err = unsupported(kat, "uniqueItems true")
			}
		case "items":
			n.items, err = c.node(v, kat)
		case "minProperties":
			n.minProps, err = countOf(v, kat)
		case "maxProperties":
			n.maxProps, err = countOf(v, kat)
		case "additionalProperties":
			n.additional, err = c.node(v, kat)
		case "properties":
			err = c.properties(n, v, kat)
		case "required":
			required, err = stringsOf(v, kat)
		default:
			err = unsupported(kat, "keyword outside the subset")
		}
		if err != nil {
			return err
		}
	}
	for _, name := range required {
		i, ok := n.index[name]
		if !ok {
			if len(n.fields) == maxFastFields {
				return unsupported(at, "more than %d names", maxFastFields)
			}
			if n.index == nil {
				n.index = map[string]int{}
			}
			i = len(n.fields)
			n.index[name] = i
			n.fields = append(n.fields, fastField{})
		}
		n.required |= 1 << i
	}
	return nil
}

// properties compiles the properties keyword into n's fields.
func (c *fastCompiler) properties(n *fastNode, v any, at string) error {
	props, ok := v.(map[string]any)
	if !ok {
		return unsupported(at, "not an object")
	}
	if len(props) > maxFastFields {
		return unsupported(at, "more than %d properties", maxFastFields)
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	n.index = make(map[string]int, len(props))
	for _, name := range names {
		s, err := c.node(props[name], at+"/"+name)
		if err != nil {
			return err
		}
		n.index[name] = len(n.fields)
		n.fields = append(n.fields, fastField{schema: s, inProps: true})
	}
	return nil
}

// ref resolves a $ref of the subset: "#" or "#/$defs/name".
func (c *fastCompiler) ref(v any, at string) (*fastNode, error) {
	s, _ := v.(string)
	if s == "#" {
		return c.rootNode, nil
	}
	name, ok := strings.CutPrefix(s, "#/$defs/")
	if !ok || name == "" || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) >= 0 {
		return nil, unsupported(at, "a $ref other than \"#\" or \"#/$defs/name\" (name of letters, digits, '_', '-', '.')")
	}
	if n, ok := c.defs[name]; ok {
		return n, nil
	}
	defs, _ := c.root["$defs"].(map[string]any)
	target, ok := defs[name]
	if !ok {
		return nil, unsupported(at, "$ref to a missing definition")
	}
	n := newFastNode()
	c.defs[name] = n // before building: a recursive schema refers to itself
	if err := c.build(n, target, "#/$defs/"+name); err != nil {
		return nil, err
	}
	return n, nil
}

// typesOf reads the type keyword.
func typesOf(v any, at string) (typeSet, error) {
	names, ok := v.([]any)
	if !ok {
		names = []any{v}
	}
	var set typeSet
	for _, name := range names {
		s, _ := name.(string)
		var k schemaType
		switch s {
		case "null":
			k = kindNull
		case "boolean":
			k = kindBoolean
		case "number":
			k = kindNumber
		case "integer":
			k = kindInteger
		case "string":
			k = kindString
		case "array":
			k = kindArray
		case "object":
			k = kindObject
		default:
			return 0, unsupported(at, "type %v", name)
		}
		set |= 1 << k
	}
	if set == 0 {
		// "type": [] is refused by the meta-schema; keep it out anyway.
		return 0, unsupported(at, "an empty type list")
	}
	return set, nil
}

// scalarsOf reads the values of an enum (or a const, as a list of one).
func scalarsOf(v any, at string) ([]fastScalar, error) {
	vals, ok := v.([]any)
	if !ok {
		return nil, unsupported(at, "not an array")
	}
	set := make([]fastScalar, 0, len(vals))
	for _, val := range vals {
		var s fastScalar
		switch val := val.(type) {
		case nil:
			s.kind = kindNull
		case bool:
			s.kind, s.b = kindBoolean, val
		case string:
			s.kind, s.s = kindString, val
		case json.Number:
			s.kind = kindNumber
			d, err := numberOf(string(val), at)
			if err != nil {
				return nil, err
			}
			s.num = d
		default:
			return nil, unsupported(at, "a value of type %T (only scalars)", val)
		}
		set = append(set, s)
	}
	return set, nil
}

// numberOf reads a number of the schema exactly.
func numberOf(text, at string) (decimal, error) {
	b := []byte(text)
	if end, _, fault := jsonlex.Number(b, 0); fault != jsonlex.NoFault || end != len(b) {
		return decimal{}, unsupported(at, "number %q", text)
	}
	d, ok := parseDecimal(b)
	if !ok {
		return decimal{}, unsupported(at, "number %q: exponent too large", text)
	}
	return d, nil
}

// boundOf reads minimum, maximum, exclusiveMinimum or exclusiveMaximum.
func boundOf(k string, v any, at string) (fastBound, error) {
	num, ok := v.(json.Number)
	if !ok {
		return fastBound{}, unsupported(at, "not a number")
	}
	d, err := numberOf(string(num), at)
	if err != nil {
		return fastBound{}, err
	}
	b := fastBound{limit: d}
	switch k { // ok[0]: below the limit, ok[1]: equal, ok[2]: above
	case "minimum":
		b.ok = [3]bool{false, true, true}
	case "maximum":
		b.ok = [3]bool{true, true, false}
	case "exclusiveMinimum":
		b.ok = [3]bool{false, false, true}
	default: // exclusiveMaximum
		b.ok = [3]bool{true, false, false}
	}
	return b, nil
}

// countOf reads minLength, maxItems and the like: a small non-negative
// integer (2.0 counts, as for the library).
func countOf(v any, at string) (int, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, unsupported(at, "not a number")
	}
	d, err := numberOf(string(num), at)
	if err != nil {
		return 0, err
	}
	if d.neg || !d.isInteger() || d.point > 9 {
		return 0, unsupported(at, "not an integer from 0 to %d", maxFastCount)
	}
	n := 0
	for k := range d.point {
		n = n*10 + int(d.digit(k)-'0')
	}
	if n > maxFastCount {
		return 0, unsupported(at, "not an integer from 0 to %d", maxFastCount)
	}
	return n, nil
}

// stringsOf reads the required keyword.
func stringsOf(v any, at string) ([]string, error) {
	vals, ok := v.([]any)
	if !ok {
		return nil, unsupported(at, "not an array")
	}
	out := make([]string, 0, len(vals))
	for _, val := range vals {
		s, ok := val.(string)
		if !ok {
			return nil, unsupported(at, "not an array of strings")
		}
		out = append(out, s)
	}
	return out, nil
}
