package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// typicalArgs is a booking the model would send against orderSchema.
const typicalArgs = `{"name":"Kaya Lindqvist","party":4,"time":"19:30","seating":"terrace","items":[{"sku":"WIN-12","qty":1},{"sku":"CAK-3","qty":2}]}`

// patternSchema is the hostile case's schema: every item must match a
// regular expression.
const patternSchema = `{"type":"object","properties":{"codes":{"type":"array","items":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"}}}}`

// hostileArgs is an array just under the cap whose every item fails the
// pattern: the most issues the validator can be made to build within it.
func hostileArgs() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"codes":[`)
	for b.Len() < MaxArgumentBytes-8 {
		if b.Len() > len(`{"codes":[`) {
			b.WriteByte(',')
		}
		b.WriteString(`"a"`)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// baseline is what validation cannot do without: parse the arguments and
// run the library's validator on them.
func baseline(schema *jsonschema.Schema, raw []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return schema.Validate(v)
}

// librarySchema is orderSchema with one keyword outside the fast path's
// subset (multipleOf), so its tool is validated by the library alone.
var librarySchema = strings.Replace(orderSchema, `"maximum": 12}`, `"maximum": 12, "multipleOf": 1}`, 1)

// Catches the valid path building anything of its own (issues, an error
// value, a copy of the arguments): through the fast validator it allocates
// nothing at all, and for a schema outside the fast path's subset exactly
// what parsing and the library's validator do. Mutation seen failing: a
// bytes.Clone of the arguments before the fast check (1 alloc), and
// compileParameters dropping the fast validator (118 allocs).
func TestValidFastPathAllocatesOnlyForTheValidator(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	raw := json.RawMessage(typicalArgs)

	fast, _ := registryWith(t, orderSchema).entry("t")
	if fast.fast == nil {
		t.Fatal("orderSchema has no fast validator")
	}
	if got := testing.AllocsPerRun(200, func() {
		if _, aerr := validateArguments(fast.schema, fast.fast, raw); aerr != nil {
			t.Fatal(aerr)
		}
	}); got != 0 {
		t.Errorf("fast valid path: %v allocs, want 0", got)
	}

	lib, _ := registryWith(t, librarySchema).entry("t")
	if lib.fast != nil {
		t.Fatal("a schema with multipleOf has a fast validator")
	}
	if err := baseline(lib.schema, raw); err != nil {
		t.Fatal(err)
	}
	want := testing.AllocsPerRun(200, func() { _ = baseline(lib.schema, raw) })
	got := testing.AllocsPerRun(200, func() {
		if _, aerr := validateArguments(lib.schema, lib.fast, raw); aerr != nil {
			t.Fatal(aerr)
		}
	})
	if got > want {
		t.Errorf("library valid path: %v allocs, the parser and validator alone %v", got, want)
	}
}

// Catches the cap check allocating (a copy or a compaction buffer).
func TestOverCapAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	raw := []byte(argsOfSize(200 << 10))
	if n := testing.AllocsPerRun(20, func() { overCap(raw, MaxArgumentBytes) }); n != 0 {
		t.Fatalf("overCap: %v allocs", n)
	}
}

func BenchmarkValidateArguments(b *testing.B) {
	order, _ := registryWith(b, orderSchema).entry("t")
	library, _ := registryWith(b, librarySchema).entry("t")
	lookup, _ := registryWith(b, `{"type":"object","properties":{"order_id":{"type":"string","pattern":"^[A-Z]-[0-9]{4}$"}},"required":["order_id"],"additionalProperties":false}`).entry("t")
	pattern, _ := registryWith(b, patternSchema).entry("t")
	if order.fast == nil || lookup.fast == nil || pattern.fast == nil || library.fast != nil {
		b.Fatal("the fast validators are not the expected ones")
	}
	cases := []struct {
		name      string
		e         registered
		raw       json.RawMessage
		wantValid bool
		baseline  bool // the library alone, for comparison
	}{
		{name: "small lookup valid", e: lookup, raw: json.RawMessage(`{"order_id":"A-1234"}`), wantValid: true},
		{name: "typical valid", e: order, raw: json.RawMessage(typicalArgs), wantValid: true},
		{name: "typical valid, library path", e: library, raw: json.RawMessage(typicalArgs), wantValid: true},
		{name: "typical valid, parser and validator only", e: order, raw: json.RawMessage(typicalArgs), wantValid: true, baseline: true},
		{name: "typical invalid", e: order, raw: json.RawMessage(`{"name":"Kaya","party":"four","time":"7pm","zz":1}`)},
		{name: "hostile 16KiB pattern array", e: pattern, raw: hostileArgs()},
		{name: "over the cap 256KiB", e: order, raw: json.RawMessage(argsOfSize(256 << 10))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.raw)))
			for b.Loop() {
				if c.baseline {
					if err := baseline(c.e.schema, c.raw); err != nil {
						b.Fatal(err)
					}
					continue
				}
				_, aerr := validateArguments(c.e.schema, c.e.fast, c.raw)
				if (aerr == nil) != c.wantValid {
					b.Fatalf("validateArguments() = %v", aerr)
				}
			}
		})
	}
}

// BenchmarkOverCap is this package's own share of the valid path: the cap
// check on typical arguments and on a value far over the cap.
func BenchmarkOverCap(b *testing.B) {
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"typical", []byte(typicalArgs)},
		{"256KiB string", []byte(argsOfSize(256 << 10))},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				overCap(c.raw, MaxArgumentBytes)
			}
		})
	}
}
