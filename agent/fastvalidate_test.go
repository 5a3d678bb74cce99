package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The fast path's schemas under test, beside orderSchema.
const (
	// kitchenSchema uses every keyword of the subset.
	kitchenSchema = `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"title": "everything", "description": "the subset", "$comment": "x",
		"properties": {
			"s": {"type": "string", "minLength": 2, "maxLength": 3},
			"p": {"type": "string", "pattern": "^é+$"},
			"i": {"type": "integer", "minimum": -5, "exclusiveMaximum": 1e2},
			"n": {"type": ["number", "null"], "exclusiveMinimum": 0.5, "maximum": 2.5},
			"e": {"enum": [1, "one", null, true, "a\"é"]},
			"c": {"const": 1.50},
			"a": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}, "uniqueItems": false},
			"o": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"],
				"additionalProperties": {"type": "string"}, "minProperties": 2, "maxProperties": 3},
			"f": {"type": "string", "format": "email", "default": "a@b.c", "examples": ["x"]},
			"t": true,
			"never": false
		},
		"required": ["s"],
		"additionalProperties": false
	}`
	// treeSchema is recursive through #/$defs/ and through "#".
	treeSchema = `{
		"type": "object",
		"properties": {"tree": {"$ref": "#/$defs/node"}, "again": {"$ref": "#"}},
		"$defs": {"node": {"type": "object", "properties": {
			"v": {"type": "integer"},
			"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}
		}, "required": ["v"], "additionalProperties": false}}
	}`
	// countSchema counts members of names it does not know.
	countSchema = `{"type": "object", "minProperties": 2, "maxProperties": 3}`
	// requiredOnlySchema requires a name that additionalProperties forbids.
	requiredOnlySchema = `{"type": "object", "required": ["x"], "additionalProperties": false}`
	// refBesideSchema has a $ref beside other keywords: both apply.
	refBesideSchema = `{"type": "object", "properties": {"r": {"$ref": "#/$defs/short", "pattern": "^a"}},
		"$defs": {"short": {"type": "string", "maxLength": 3}}}`
)

// fastCase is one argument document for one schema. givesUp marks the
// cases the fast path must not answer valid by design (malformed JSON, a
// repeated known name, invalid UTF-8, huge exponents, ...): it may say
// unsure, or invalid when a failure comes first. Every other case must get
// a definite answer, and it must be the library's.
type fastCase struct {
	schema, args string
	givesUp      bool
}

func fastCases() []fastCase {
	k, o := kitchenSchema, orderSchema
	return []fastCase{
		// orderSchema, the typical tool.
		{schema: o, args: typicalArgs},
		{schema: o, args: ``},
		{schema: o, args: " \n\t "},
		{schema: o, args: `{"name":"Kaya","party":2}`},
		{schema: o, args: " {\n \"name\" : \"Kaya\" ,\t\"party\" : 2 } \n"},
		{schema: o, args: `{"name":"Kaya"}`},                      // required
		{schema: o, args: `{"party":2}`},                          // required
		{schema: o, args: `{"name":"Kaya","party":2,"zz":1}`},     // additionalProperties false
		{schema: o, args: `{"name":"Kaya","party":"2"}`},          // type
		{schema: o, args: `{"name":"Kaya","party":null}`},         // type
		{schema: o, args: `{"name":null,"party":2}`},              // type
		{schema: o, args: `{"name":"Kaya","party":2.0}`},          // 2.0 is an integer
		{schema: o, args: `{"name":"Kaya","party":2.5}`},          // not an integer
		{schema: o, args: `{"name":"Kaya","party":1e1}`},          // 10
		{schema: o, args: `{"name":"Kaya","party":1.2e1}`},        // 12, the maximum
		{schema: o, args: `{"name":"Kaya","party":1.3e1}`},        // 13
		{schema: o, args: `{"name":"Kaya","party":120e-1}`},       // 12
		{schema: o, args: `{"name":"Kaya","party":0.12E+2}`},      // 12
		{schema: o, args: `{"name":"Kaya","party":12.000000001}`}, // over, not an integer
		{schema: o, args: `{"name":"Kaya","party":0}`},            // under the minimum
		{schema: o, args: `{"name":"Kaya","party":-0}`},           // under the minimum
		{schema: o, args: `{"name":"Kaya","party":1E400}`},        // an integer, over
		{schema: o, args: `{"name":"Kaya","party":99999999999999999999999999}`},
		{schema: o, args: `{"name":"Kaya","party":1e999999}`, givesUp: true},  // past maxFastExponent
		{schema: o, args: `{"name":"Kaya","party":1e9999999}`, givesUp: true}, // math/big refuses it: the library panics
		{schema: o, args: `{"name":"` + strings.Repeat("é", 40) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat("é", 41) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat(`\u00e9`, 40) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat(`\u00e9`, 41) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat(`\ud83d\ude00`, 40) + `","party":2}`}, // 40 runes
		{schema: o, args: `{"name":"` + strings.Repeat(`\ud83d\ude00`, 41) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat(`\ud83d`, 40) + `","party":2}`}, // lone halves: one U+FFFD each
		{schema: o, args: `{"name":"` + strings.Repeat(`\ude00`, 41) + `","party":2}`},
		{schema: o, args: `{"name":"` + strings.Repeat(`\ud83dx`, 20) + `","party":2}`}, // 40 runes
		{schema: o, args: `{"name":"` + strings.Repeat(`\ud83dx`, 21) + `","party":2}`}, // 42 runes
		{schema: o, args: `{"name":"\ud83d\u0041","party":2}`},                          // a half, then A
		{schema: o, args: `{"name":"a\"b\\c\/d\b\f\n\r\t","party":2}`},
		{schema: o, args: `{"name":"Kaya","party":2,"time":"19:30"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"time":"19:3"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"time":"1\u0039:30"}`}, // escape inside a pattern
		{schema: o, args: `{"name":"Kaya","party":2,"time":"1\u0039:3x"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"seating":"inside"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"seating":"insid\u0065"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"seating":"outside"}`},
		{schema: o, args: `{"name":"Kaya","party":2,"seating":1}`},
		{schema: o, args: `{"name":"Kaya","party":2,"seating":["inside"]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[{"sku":"AB-1"}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[{"qty":1}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[{"sku":"ABC-1","qty":1.5}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[{"sku":"ABC-1","extra":{"deep":[1,{"x":null}]}}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[` + strings.Repeat(`{"sku":"ABC-1"},`, 19) + `{"sku":"ABC-1"}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[` + strings.Repeat(`{"sku":"ABC-1"},`, 20) + `{"sku":"ABC-1"}]}`},
		{schema: o, args: `{"name":"Kaya","party":2,"items":{}}`},
		{schema: o, args: `{"n\u0061me":"Kaya","party":2}`},                           // an escaped key
		{schema: o, args: `{"name":"Kaya","party":2,"name":"Lin"}`, givesUp: true},    // a duplicate
		{schema: o, args: `{"name":"Kaya","party":"x","party":2}`, givesUp: true},     // a duplicate the library forgives
		{schema: o, args: `{"name":"Kaya","party":2,"n\u0061me":"x"}`, givesUp: true}, // a duplicate through an escape
		{schema: o, args: "{\"name\":\"K\xffya\",\"party\":2}", givesUp: true},        // invalid UTF-8
		{schema: o, args: "{\"name\":\"K\x01ya\",\"party\":2}", givesUp: true},        // a control character
		{schema: o, args: `{"name":"Kaya","party":2`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2,}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":02}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2.}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":+2}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2} x`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2}{}`, givesUp: true},
		{schema: o, args: `{"name":"\x","party":2}`, givesUp: true},
		{schema: o, args: `{"name":"a\'b","party":2}`, givesUp: true}, // encoding/json's scanner refuses \'
		{schema: o, args: `{"name":"\u12","party":2}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[tru]}`, givesUp: true},
		{schema: o, args: `{"name":"Kaya","party":2,"items":[nul]}`, givesUp: true},
		{schema: o, args: `[]`, givesUp: true},
		{schema: o, args: `null`, givesUp: true},
		{schema: o, args: `"x"`, givesUp: true},

		// kitchenSchema: each keyword at its edges.
		{schema: k, args: `{"s":"ab"}`},
		{schema: k, args: `{"s":"a"}`},
		{schema: k, args: `{"s":"abc"}`},
		{schema: k, args: `{"s":"abcd"}`},
		{schema: k, args: `{"s":"\u00e9\u00e9\u00e9"}`},
		{schema: k, args: `{"s":"\ud83d\ude00\ud83d\ude00"}`},
		{schema: k, args: `{"s":"\ud83d\ude00"}`},
		{schema: k, args: `{"s":"ab","p":"ééé"}`},
		{schema: k, args: `{"s":"ab","p":"\u00e9"}`},
		{schema: k, args: `{"s":"ab","p":"e\u0301"}`},
		{schema: k, args: `{"s":"ab","p":""}`},
		{schema: k, args: `{"s":"ab","i":-5}`},
		{schema: k, args: `{"s":"ab","i":-6}`},
		{schema: k, args: `{"s":"ab","i":-5.0}`},
		{schema: k, args: `{"s":"ab","i":-0.5e1}`},
		{schema: k, args: `{"s":"ab","i":99}`},
		{schema: k, args: `{"s":"ab","i":100}`},
		{schema: k, args: `{"s":"ab","i":1E2}`},
		{schema: k, args: `{"s":"ab","i":99.0000}`},
		{schema: k, args: `{"s":"ab","i":-0}`},
		{schema: k, args: `{"s":"ab","i":-0.0e-5}`},
		{schema: k, args: `{"s":"ab","i":0e99999}`},
		{schema: k, args: `{"s":"ab","n":null}`},
		{schema: k, args: `{"s":"ab","n":0.5}`},
		{schema: k, args: `{"s":"ab","n":0.50000000000000000001}`},
		{schema: k, args: `{"s":"ab","n":2.5}`},
		{schema: k, args: `{"s":"ab","n":2.5000000000000000001}`},
		{schema: k, args: `{"s":"ab","n":25e-1}`},
		{schema: k, args: `{"s":"ab","n":1}`},
		{schema: k, args: `{"s":"ab","n":"1"}`},
		{schema: k, args: `{"s":"ab","n":true}`},
		{schema: k, args: `{"s":"ab","e":1}`},
		{schema: k, args: `{"s":"ab","e":1.0}`},
		{schema: k, args: `{"s":"ab","e":10e-1}`},
		{schema: k, args: `{"s":"ab","e":2}`},
		{schema: k, args: `{"s":"ab","e":"one"}`},
		{schema: k, args: `{"s":"ab","e":"on\u0065"}`},
		{schema: k, args: `{"s":"ab","e":"a\"\u00e9"}`},
		{schema: k, args: `{"s":"ab","e":"a\"é"}`},
		{schema: k, args: `{"s":"ab","e":"two"}`},
		{schema: k, args: `{"s":"ab","e":null}`},
		{schema: k, args: `{"s":"ab","e":true}`},
		{schema: k, args: `{"s":"ab","e":false}`},
		{schema: k, args: `{"s":"ab","e":{}}`},
		{schema: k, args: `{"s":"ab","e":[1]}`},
		{schema: k, args: `{"s":"ab","c":1.5}`},
		{schema: k, args: `{"s":"ab","c":15e-1}`},
		{schema: k, args: `{"s":"ab","c":1.51}`},
		{schema: k, args: `{"s":"ab","c":"1.5"}`},
		{schema: k, args: `{"s":"ab","a":[1]}`},
		{schema: k, args: `{"s":"ab","a":[1,2]}`},
		{schema: k, args: `{"s":"ab","a":[1,2,3]}`},
		{schema: k, args: `{"s":"ab","a":[]}`},
		{schema: k, args: `{"s":"ab","a":[1,2.5]}`},
		{schema: k, args: `{"s":"ab","a":[1,1]}`},
		{schema: k, args: `{"s":"ab","o":{"x":true,"y":"s"}}`},
		{schema: k, args: `{"s":"ab","o":{"x":true}}`},
		{schema: k, args: `{"s":"ab","o":{"y":"s","z":"t"}}`},
		{schema: k, args: `{"s":"ab","o":{"x":true,"y":"s","z":"t"}}`},
		{schema: k, args: `{"s":"ab","o":{"x":true,"y":"s","z":"t","w":"u"}}`},
		{schema: k, args: `{"s":"ab","o":{"x":true,"y":1}}`},
		{schema: k, args: `{"s":"ab","o":{"x":1,"y":"s"}}`},
		{schema: k, args: `{"s":"ab","o":{"x":true,"y":"s","y":"t"}}`}, // two distinct names, as the library counts
		{schema: k, args: `{"s":"ab","f":"not an email"}`},             // format is an annotation
		{schema: k, args: `{"s":"ab","t":{"anything":[1,"x",null]}}`},
		{schema: k, args: `{"s":"ab","never":null}`},
		{schema: k, args: `{"s":"ab","zz":null}`},
		{schema: k, args: `{"s":"ab","s":"abcd"}`, givesUp: true},

		// treeSchema: recursion.
		{schema: treeSchema, args: `{}`},
		{schema: treeSchema, args: `{"tree":{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4}]}]}}`},
		{schema: treeSchema, args: `{"tree":{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"w":4}]}]}}`},
		{schema: treeSchema, args: `{"tree":{"v":1,"kids":[{"v":2.5}]}}`},
		{schema: treeSchema, args: `{"again":{"again":{"tree":{"v":1}}}}`},
		{schema: treeSchema, args: `{"again":{"again":{"tree":{"v":"1"}}}}`},
		{schema: treeSchema, args: `{"again":{"again":[]}}`},
		{schema: treeSchema, args: `{"tree":` + strings.Repeat(`{"v":1,"kids":[`, 40) + `{"v":1}` + strings.Repeat(`]}`, 40) + `}`},
		{schema: treeSchema, args: `{"tree":` + strings.Repeat(`{"v":1,"kids":[`, 200) + `{"v":1}` + strings.Repeat(`]}`, 200) + `}`, givesUp: true},

		// countSchema: members of unknown names, which may repeat.
		{schema: countSchema, args: `{}`},
		{schema: countSchema, args: `{"a":1}`},
		{schema: countSchema, args: `{"a":1,"b":2}`},
		{schema: countSchema, args: `{"a":1,"b":2,"c":3}`},
		{schema: countSchema, args: `{"a":1,"b":2,"c":3,"d":4}`},
		{schema: countSchema, args: `{"a":1,"a":2}`},             // one distinct name
		{schema: countSchema, args: `{"a":1,"b":2,"c":3,"c":4}`}, // three distinct names
		{schema: countSchema, args: `{"a":1,"b":2,"c":3,"d":4,"d":4}`},
		{schema: countSchema, args: `{"a":1,"\u0061":2}`, givesUp: true}, // names with escapes are not compared

		// requiredOnlySchema: a required name that is not a property.
		{schema: requiredOnlySchema, args: `{}`},
		{schema: requiredOnlySchema, args: `{"x":1}`},

		// refBesideSchema: $ref and pattern both apply.
		{schema: refBesideSchema, args: `{"r":"abc"}`},
		{schema: refBesideSchema, args: `{"r":"abcd"}`},
		{schema: refBesideSchema, args: `{"r":"bc"}`},
		{schema: refBesideSchema, args: `{"r":1}`},

		// openSchema: anything that is an object.
		{schema: openSchema, args: `{}`},
		{schema: openSchema, args: `{"a":[1,{"b":[true,false,null,"x",-1.5e-3]}],"c":{}}`},
		{schema: openSchema, args: `{"a":1,"a":2}`},
	}
}

// libraryOutcome runs the library path alone (no fast validator); a panic
// of the library counts as a refusal.
func libraryOutcome(e registered, raw []byte) (args json.RawMessage, aerr *ArgumentError, panicked bool) {
	defer func() {
		if recover() != nil {
			args, aerr, panicked = nil, nil, true
		}
	}()
	args, aerr = validateArguments(e.schema, nil, raw)
	return args, aerr, false
}

// fastVerdict is what the fast path says about raw, trimmed as
// validateArguments trims it.
func fastVerdict(e registered, raw []byte) verdict {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	return e.fast.check(trimmed)
}

// hasDuplicateKeys says whether some object in raw (valid JSON) names a
// member twice, after decoding the names.
func hasDuplicateKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.expectKey {
			if k, ok := tok.(string); ok {
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expectKey = false
				continue
			}
		}
		if top != nil && top.keys != nil {
			top.expectKey = true // after this value, a key
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].keys != nil {
				stack[len(stack)-1].expectKey = true
			}
		}
	}
}

// checkAgreement compares the fast path with the library on raw. Whatever
// the fast path says: valid must be the library's valid, and invalid the
// library's refusal unless a duplicate key lets the library keep a later
// value. The whole of validateArguments, fast path and all, must return
// what the library path alone does. It returns the fast verdict.
func checkAgreement(t testing.TB, e registered, raw []byte) verdict {
	t.Helper()
	libArgs, libErr, libPanicked := libraryOutcome(e, raw)
	libValid := libErr == nil && !libPanicked
	v := fastVerdict(e, raw)
	switch {
	case v == verdictValid && !libValid:
		t.Fatalf("fast path says valid, the library refuses (panicked %v): %v\nargs %q", libPanicked, libErr, raw)
	case v == verdictInvalid && libValid && !hasDuplicateKeys(raw):
		t.Fatalf("fast path says invalid, the library accepts\nargs %q", raw)
	}
	if libPanicked {
		return v
	}
	gotArgs, gotErr := validateArguments(e.schema, e.fast, raw)
	if !bytes.Equal(gotArgs, libArgs) || !reflect.DeepEqual(gotErr, libErr) {
		t.Fatalf("validateArguments with the fast path = %q, %+v; the library alone %q, %+v\nargs %q", gotArgs, gotErr, libArgs, libErr, raw)
	}
	return v
}

// Catches the fast path accepting what the library refuses, refusing what
// it accepts, or giving up where it should answer. Mutations seen failing,
// one at a time: finishObject without the required check ("says valid,
// the library refuses" on {"name":"Kaya"}); checkString with runes >=
// n.maxLen (says invalid on 40 é against maxLength 40); scanString
// counting an escaped surrogate pair as two runes; decimal.isInteger with
// point > digits (1E2 and 120e-1 no longer integers); checkObject without
// the repeated-name check; exclusiveMaximum as inclusive; $ref beside
// other keywords ignored; cmpDecimal comparing the first digit only; an
// enum string with escapes compared undecoded; finishObject counting a
// repeated unknown name twice.
func TestFastValidatorAgreesWithLibrary(t *testing.T) {
	entries := map[string]registered{}
	for i, c := range fastCases() {
		e, ok := entries[c.schema]
		if !ok {
			e, _ = registryWith(t, c.schema).entry("t")
			if e.fast == nil {
				_, err := compileFast(mustDoc(t, c.schema))
				t.Fatalf("case %d: no fast validator: %v", i, err)
			}
			entries[c.schema] = e
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			switch v := checkAgreement(t, e, []byte(c.args)); {
			case c.givesUp && v == verdictValid:
				t.Errorf("fast path says valid, want it to give up\nargs %q", c.args)
			case !c.givesUp && v == verdictUnsure:
				t.Errorf("fast path gives up, want an answer\nargs %q", c.args)
			}
		})
	}
}

func mustDoc(t testing.TB, schema string) any {
	t.Helper()
	var doc any
	dec := json.NewDecoder(strings.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// Catches the subset drifting: a schema in it must get a fast validator
// (or the fast path silently stops running), one with a keyword outside
// it must get none (or the fast path would ignore that keyword and accept
// what the library refuses). Mutation seen failing: treating multipleOf
// as an annotation.
func TestFastValidatorCompilesOnlyTheSubset(t *testing.T) {
	in := []string{
		orderSchema, kitchenSchema, treeSchema, countSchema, requiredOnlySchema, refBesideSchema, openSchema, patternSchema,
		``,
		`{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}`,
		`{"type":"object","properties":{"a":{"enum":[]}}}`,
		`{"type":"object","properties":{"a":{"type":"integer","minimum":1.5,"maximum":1e3}}}`,
		`{"type":"object","properties":{"a":{"type":"string","maxLength":4.0}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":false}}`,
	}
	for _, s := range in {
		if e, _ := registryWith(t, s).entry("t"); e.fast == nil {
			_, err := compileFast(mustDoc(t, orDefault(s, emptyParameters)))
			t.Errorf("no fast validator for %s: %v", s, err)
		}
	}
	out := map[string]string{ // schema: the keyword named in the reason
		`{"type":"object","properties":{"a":{"type":"integer","multipleOf":2}}}`:                                                "multipleOf",
		`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`:                                              "uniqueItems",
		`{"type":"object","allOf":[{"required":["a"]}]}`:                                                                        "allOf",
		`{"type":"object","anyOf":[{"required":["a"]}]}`:                                                                        "anyOf",
		`{"type":"object","properties":{"a":{"not":{"type":"null"}}}}`:                                                          "not",
		`{"type":"object","patternProperties":{"^a":{"type":"string"}}}`:                                                        "patternProperties",
		`{"type":"object","properties":{"a":{"prefixItems":[{"type":"string"}]}}}`:                                              "prefixItems",
		`{"type":"object","properties":{"a":{"enum":[{"x":1}]}}}`:                                                               "enum",
		`{"type":"object","properties":{"a":{"const":[1]}}}`:                                                                    "const",
		`{"type":"object","properties":{"a":{"type":"string","contentEncoding":"base64"}}}`:                                     "contentEncoding",
		`{"type":"object","nullable":true}`:                                                                                     "nullable",
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`:                                                 "$schema",
		`{"type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`:                       "$schema",
		`{"type":"object","$id":"https://example.com/x"}`:                                                                       "$id",
		`{"type":"object","properties":{"a":{"$ref":"#/properties/b"},"b":{}}}`:                                                 "$ref",
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"$ref":"#/$defs/c"},"c":{"$ref":"#/$defs/b"}}}`: "cycle",
		`{"type":"object","properties":{"a":{"type":"integer","maximum":1e2000000}}}`:                                           "maximum",
		`{"type":"object","properties":{"a":{"type":"string","maxLength":99999999999}}}`:                                        "maxLength",
	}
	for s, word := range out {
		r, err := NewRegistry(specTool(ro("t", s)))
		if err != nil {
			continue // the library refuses it too: no validator at all
		}
		if e, _ := r.entry("t"); e.fast != nil {
			t.Errorf("a fast validator for %s", s)
		}
		_, err = compileFast(mustDoc(t, s))
		var sub *errFastSubset
		if !errors.As(err, &sub) || !strings.Contains(err.Error(), word) {
			t.Errorf("compileFast(%s) = %v, want an *errFastSubset naming %q", s, err, word)
		}
	}
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Catches the fast valid path allocating: a decoded copy of a key or a
// string, a boxed number, a closure that escapes.
func TestFastValidPathAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	for _, c := range []struct{ schema, args string }{
		{orderSchema, typicalArgs},
		{orderSchema, `{"n\u0061me":"K\u00e9ya","party":1.2e1,"seating":"insid\u0065"}`},
		{kitchenSchema, `{"s":"ab","i":-5.0,"n":null,"e":"one","c":15e-1,"a":[1,2],"o":{"x":true,"y":"s"},"t":[{}]}`},
		{treeSchema, `{"tree":{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4}]}]}}`},
	} {
		e, _ := registryWith(t, c.schema).entry("t")
		raw := json.RawMessage(c.args)
		if v := fastVerdict(e, raw); v != verdictValid {
			t.Fatalf("%s: fast verdict %d, want valid", c.args, v)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = validateArguments(e.schema, e.fast, raw) }); n != 0 {
			t.Errorf("%s: %v allocs, want 0", c.args, n)
		}
	}
}

// FuzzFastValidatorAgreesWithLibrary checks, for every input and each of a
// few fixed schemas, that the fast path says valid only where the library
// does (and invalid only where it refuses, duplicate keys aside), and that
// validateArguments returns exactly what the library path alone returns.
func FuzzFastValidatorAgreesWithLibrary(f *testing.F) {
	for _, c := range fastCases() {
		f.Add([]byte(c.args))
	}
	f.Add([]byte(`{"s":"ab","o":{"x":true,"y":"s"},"a":[1,2],"e":"a\"\u00e9"}`))
	// Found in 3 s against a mutant whose scanString took \' for an escape
	// (encoding/json's decoder accepts it, its scanner does not).
	f.Add([]byte(`{"":"","\'":""}`))
	schemas := []string{orderSchema, kitchenSchema, treeSchema, countSchema, refBesideSchema}
	entries := make([]registered, len(schemas))
	for i, s := range schemas {
		entries[i], _ = registryWith(f, s).entry("t")
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > MaxArgumentBytes {
			return
		}
		for _, e := range entries {
			checkAgreement(t, e, raw)
		}
	})
}
