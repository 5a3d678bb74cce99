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

// Catches the valid path building anything of its own (issues, an error
// value, a copy of the arguments): it allocates exactly what parsing and
// the validator do.
func TestValidFastPathAllocatesOnlyForTheValidator(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	r := registryWith(t, orderSchema)
	e, _ := r.entry("t")
	raw := json.RawMessage(typicalArgs)
	if err := baseline(e.schema, raw); err != nil {
		t.Fatal(err)
	}
	want := testing.AllocsPerRun(200, func() { _ = baseline(e.schema, raw) })
	got := testing.AllocsPerRun(200, func() {
		if _, aerr := validateArguments(e.schema, raw); aerr != nil {
			t.Fatal(aerr)
		}
	})
	if got > want {
		t.Fatalf("valid path: %v allocs, the parser and validator alone %v", got, want)
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
	r := registryWith(b, orderSchema)
	order, _ := r.entry("t")
	l := registryWith(b, `{"type":"object","properties":{"order_id":{"type":"string","pattern":"^[A-Z]-[0-9]{4}$"}},"required":["order_id"],"additionalProperties":false}`)
	lookup, _ := l.entry("t")
	p := registryWith(b, patternSchema)
	pattern, _ := p.entry("t")
	cases := []struct {
		name      string
		schema    *jsonschema.Schema
		raw       json.RawMessage
		wantValid bool
		baseline  bool // the library alone, for comparison
	}{
		{name: "small lookup valid", schema: lookup.schema, raw: json.RawMessage(`{"order_id":"A-1234"}`), wantValid: true},
		{name: "typical valid", schema: order.schema, raw: json.RawMessage(typicalArgs), wantValid: true},
		{name: "typical valid, parser and validator only", schema: order.schema, raw: json.RawMessage(typicalArgs), wantValid: true, baseline: true},
		{name: "typical invalid", schema: order.schema, raw: json.RawMessage(`{"name":"Kaya","party":"four","time":"7pm","zz":1}`)},
		{name: "hostile 16KiB pattern array", schema: pattern.schema, raw: hostileArgs()},
		{name: "over the cap 256KiB", schema: order.schema, raw: json.RawMessage(argsOfSize(256 << 10))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.raw)))
			for b.Loop() {
				if c.baseline {
					if err := baseline(c.schema, c.raw); err != nil {
						b.Fatal(err)
					}
					continue
				}
				_, aerr := validateArguments(c.schema, c.raw)
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
