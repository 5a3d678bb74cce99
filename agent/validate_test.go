package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
)

// orderSchema is a typical tool schema: required fields, a bound string, an
// integer, an enum and an array of objects through a local $ref.
const orderSchema = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "maxLength": 40},
		"party": {"type": "integer", "minimum": 1, "maximum": 12},
		"time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
		"seating": {"enum": ["inside", "terrace"]},
		"items": {"type": "array", "maxItems": 20, "items": {"$ref": "#/$defs/item"}}
	},
	"required": ["name", "party"],
	"additionalProperties": false,
	"$defs": {
		"item": {
			"type": "object",
			"properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"}, "qty": {"type": "integer"}},
			"required": ["sku"]
		}
	}
}`

// openSchema accepts any object, for the size cases.
const openSchema = `{"type":"object"}`

// registryWith registers one ReadOnly tool "t" with schema p.
func registryWith(t testing.TB, p string) *Registry {
	t.Helper()
	r, err := NewRegistry(specTool(ro("t", p)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// argsOfSize returns {"pad":"xxx..."} of exactly n bytes (n >= 10).
func argsOfSize(n int) string {
	return `{"pad":"` + strings.Repeat("x", n-10) + `"}`
}

func TestValidateArguments(t *testing.T) {
	tests := []struct {
		name          string
		schema        string // default orderSchema
		args          string
		wantErr       error // nil, ErrInvalidArguments or ErrArgumentsTooLarge
		wantDetail    string
		wantIssues    []Issue // exact, when set
		wantTruncated bool
	}{
		{name: "valid minimal", args: `{"name":"Kaya","party":2}`},
		{name: "valid with nested items through a local $ref", args: `{"name":"Kaya","party":2,"time":"19:30","seating":"terrace","items":[{"sku":"ABC-1","qty":2}]}`},
		{name: "integral float is an integer", args: `{"name":"Kaya","party":2.0}`},
		{name: "empty arguments stand for {}", schema: openSchema, args: " \n"},
		{
			name: "empty arguments still meet required", args: "",
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{RootPath, "missing properties 'name', 'party'"}},
		},
		{
			name: "missing required", args: `{"name":"Kaya"}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{RootPath, "missing property 'party'"}},
		},
		{
			name: "wrong type", args: `{"name":"Kaya","party":"two"}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{"/party", "got string, want integer"}},
		},
		{
			// Catches additionalProperties names in map order: the issue
			// text would change from run to run.
			name: "extra properties, sorted", args: `{"name":"Kaya","party":2,"zz":1,"aa":1,"mm":1}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{RootPath, "additional properties 'aa', 'mm', 'zz' not allowed"}},
		},
		{
			name: "nested through a local $ref", args: `{"name":"Kaya","party":2,"items":[{"sku":"ABC-1"},{"qty":1}]}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{"/items/1", "missing property 'sku'"}},
		},
		{
			name: "pattern", args: `{"name":"Kaya","party":2,"time":"7pm"}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{"/time", "'7pm' does not match pattern '^[0-2][0-9]:[0-5][0-9]$'"}},
		},
		{
			name: "not JSON", args: `{"name":`,
			wantErr: ErrInvalidArguments, wantDetail: "not valid JSON",
		},
		{
			name: "trailing data after the object", args: `{"name":"Kaya","party":2} {}`,
			wantErr: ErrInvalidArguments, wantDetail: "not valid JSON",
		},
		{
			name: "an array", args: `["Kaya"]`,
			wantErr: ErrInvalidArguments, wantDetail: "JSON object",
			wantIssues: []Issue{{RootPath, "got array, want object"}},
		},
		{
			name: "null", args: `null`,
			wantErr: ErrInvalidArguments, wantDetail: "JSON object",
			wantIssues: []Issue{{RootPath, "got null, want object"}},
		},
		{
			// Catches sorting indexes as strings ("10" before "2") and a
			// missing cut at MaxIssues.
			name:    "more than five issues: the first five in instance order, truncated",
			schema:  `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`,
			args:    `{"a":[0,1,"2",3,"4",5,6,7,8,9,"10","11","12","13"]}`,
			wantErr: ErrInvalidArguments,
			wantIssues: []Issue{
				{"/a/2", "got string, want integer"},
				{"/a/4", "got string, want integer"},
				{"/a/10", "got string, want integer"},
				{"/a/11", "got string, want integer"},
				{"/a/12", "got string, want integer"},
			},
			wantTruncated: true,
		},
		{
			// Catches keeping the first five failures in the validator's
			// walk order: allOf reports /b before /a.
			name:    "issues found later in the walk but earlier in the instance come first",
			schema:  `{"type":"object","allOf":[{"properties":{"b":{"items":{"type":"integer"}}}},{"properties":{"a":{"items":{"type":"integer"}}}}]}`,
			args:    `{"b":["0","1","2","3","4"],"a":["0","1"]}`,
			wantErr: ErrInvalidArguments,
			wantIssues: []Issue{
				{"/a/0", "got string, want integer"},
				{"/a/1", "got string, want integer"},
				{"/b/0", "got string, want integer"},
				{"/b/1", "got string, want integer"},
				{"/b/2", "got string, want integer"},
			},
			wantTruncated: true,
		},
		{
			// Catches `>=` for `>` in the truncated flag.
			name:    "exactly five issues: not truncated",
			schema:  `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}`,
			args:    `{"a":["0","1","2","3","4"]}`,
			wantErr: ErrInvalidArguments,
			wantIssues: []Issue{
				{"/a/0", "got string, want integer"},
				{"/a/1", "got string, want integer"},
				{"/a/2", "got string, want integer"},
				{"/a/3", "got string, want integer"},
				{"/a/4", "got string, want integer"},
			},
		},
		{
			// Catches an unescaped pointer: "/" in a key would read as two
			// levels.
			name:       "path is an escaped JSON pointer",
			schema:     `{"type":"object","additionalProperties":{"type":"integer"}}`,
			args:       `{"a/b~c":"x"}`,
			wantErr:    ErrInvalidArguments,
			wantIssues: []Issue{{"/a~1b~0c", "got string, want integer"}},
		},

		// The cap. Catches an off-by-one at the cap and counting the raw
		// bytes instead of the serialized ones.
		{name: "exactly at the cap runs", schema: openSchema, args: argsOfSize(MaxArgumentBytes)},
		{
			name: "one byte over the cap is too large", schema: openSchema, args: argsOfSize(MaxArgumentBytes + 1),
			wantErr: ErrArgumentsTooLarge, wantDetail: "16384 bytes",
		},
		{
			name: "whitespace between tokens does not count", schema: openSchema,
			args: "{\n  \"pad\" :\t\"" + strings.Repeat("x", MaxArgumentBytes-10) + "\"\r\n}" + strings.Repeat(" ", 100),
		},
		{
			// Catches a compactor that strips spaces inside strings.
			name: "spaces inside strings count", schema: openSchema,
			args:    `{"pad":"` + strings.Repeat(" ", MaxArgumentBytes-9) + `"}`,
			wantErr: ErrArgumentsTooLarge,
		},
		{
			// Catches a compactor that ends a string at an escaped quote:
			// the spaces after it would not count.
			name: "an escaped quote does not end the string", schema: openSchema,
			args:    `{"pad":"\"` + strings.Repeat(" ", MaxArgumentBytes-11) + `"}`,
			wantErr: ErrArgumentsTooLarge,
		},
		{
			// Catches parsing before the cap: a huge broken value is refused
			// as too large, never parsed.
			name: "over the cap and not JSON is too large", schema: openSchema,
			args:    `{"pad":` + strings.Repeat("[", 200<<10),
			wantErr: ErrArgumentsTooLarge,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := tt.schema
			if schema == "" {
				schema = orderSchema
			}
			r := registryWith(t, schema)
			err := r.ValidateArguments("t", json.RawMessage(tt.args))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("ValidateArguments() = %v, want %v", err, tt.wantErr)
			}
			if err == nil {
				return
			}
			var aerr *ArgumentError
			if !errors.As(err, &aerr) {
				t.Fatalf("ValidateArguments() = %T, want *ArgumentError", err)
			}
			if !strings.Contains(aerr.Detail, tt.wantDetail) {
				t.Fatalf("Detail = %q, want it to contain %q", aerr.Detail, tt.wantDetail)
			}
			if tt.wantIssues != nil && fmt.Sprint(aerr.Issues) != fmt.Sprint(tt.wantIssues) {
				t.Fatalf("Issues = %q\nwant     %q", aerr.Issues, tt.wantIssues)
			}
			if aerr.Truncated != tt.wantTruncated {
				t.Fatalf("Truncated = %v, want %v", aerr.Truncated, tt.wantTruncated)
			}
			if tt.wantErr == ErrInvalidArguments && len(aerr.Issues) == 0 {
				t.Fatal("an invalid_arguments refusal without issues")
			}
			if tt.wantErr == ErrArgumentsTooLarge && (aerr.Kind != KindArgumentsTooLarge || len(aerr.Issues) != 0) {
				t.Fatalf("too large = %+v", aerr)
			}
		})
	}
}

func TestValidateArgumentsUnknownTool(t *testing.T) {
	r := registryWith(t, openSchema)
	if err := r.ValidateArguments("nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("ValidateArguments(unknown) = %v", err)
	}
}

// The bounds of one issue. Catches a path or reason that is not cut, cut
// past its bound once the ellipsis is added, or cut inside a character.
func TestIssueBounds(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		args     string
		wantPath string // exact
		reason   func(t *testing.T, reason string)
	}{
		{
			name:     "long ASCII key cut to 128 bytes",
			schema:   `{"type":"object","additionalProperties":{"type":"integer"}}`,
			args:     `{"` + strings.Repeat("k", 300) + `":"x"}`,
			wantPath: "/" + strings.Repeat("k", MaxIssuePathBytes-1-len(ellipsis)) + ellipsis,
		},
		{
			// "é" is 2 bytes: 124 bytes of room after "/" hold 62 of them.
			name:     "multi-byte key cut on a character boundary",
			schema:   `{"type":"object","additionalProperties":{"type":"integer"}}`,
			args:     `{"` + strings.Repeat("é", 200) + `":"x"}`,
			wantPath: "/" + strings.Repeat("é", 62) + ellipsis,
		},
		{
			// Catches a deep location built whole before the cut: the
			// pointer is cut to its bound whatever the depth.
			name:     "deep path cut",
			schema:   `{"type":"object","additionalProperties":{"$ref":"#/$defs/n"},"$defs":{"n":{"type":"object","additionalProperties":{"$ref":"#/$defs/n"}}}}`,
			args:     strings.Repeat(`{"abcdefghij":`, 40) + "1" + strings.Repeat("}", 40),
			wantPath: strings.Repeat("/abcdefghij", 11) + "/abc" + ellipsis, // 121 + 4 + 3 bytes
		},
		{
			name:     "reason quoting a long multi-byte value cut to 200 bytes",
			schema:   `{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$"}}}`,
			args:     `{"s":"` + strings.Repeat("€", 1000) + `"}`,
			wantPath: "/s",
			reason: func(t *testing.T, reason string) {
				if !strings.HasPrefix(reason, "'€€") || !strings.HasSuffix(reason, ellipsis) || len(reason) > MaxIssueReasonBytes || len(reason) < MaxIssueReasonBytes-3 {
					t.Fatalf("reason %q (%d bytes)", reason, len(reason))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := registryWith(t, tt.schema).ValidateArguments("t", json.RawMessage(tt.args))
			var aerr *ArgumentError
			if !errors.As(err, &aerr) || len(aerr.Issues) != 1 {
				t.Fatalf("ValidateArguments() = %v", err)
			}
			is := aerr.Issues[0]
			if is.Path != tt.wantPath {
				t.Fatalf("Path = %q (%d bytes)\nwant   %q (%d bytes)", is.Path, len(is.Path), tt.wantPath, len(tt.wantPath))
			}
			if len(is.Path) > MaxIssuePathBytes || len(is.Reason) > MaxIssueReasonBytes || !utf8.ValidString(is.Path) || !utf8.ValidString(is.Reason) {
				t.Fatalf("issue out of bounds or not UTF-8: %q", is)
			}
			if tt.reason != nil {
				tt.reason(t, is.Reason)
			}
		})
	}
}

// Catches issues that depend on map iteration order in the validator: two
// runs over the same arguments must give the same refusal.
func TestIssuesAreDeterministic(t *testing.T) {
	r := registryWith(t, orderSchema)
	args := json.RawMessage(`{"party":"x","time":"late","seating":"roof","extra":1,"more":2,"items":[{},{"sku":"bad"}]}`)
	first := r.ValidateArguments("t", args).(*ArgumentError)
	if len(first.Issues) != MaxIssues || !first.Truncated {
		t.Fatalf("issues = %q truncated %v", first.Issues, first.Truncated)
	}
	for range 50 {
		got := r.ValidateArguments("t", args).(*ArgumentError)
		if fmt.Sprint(got.Issues) != fmt.Sprint(first.Issues) {
			t.Fatalf("issues changed between runs:\n%q\n%q", first.Issues, got.Issues)
		}
	}
}

func TestArgumentErrorContent(t *testing.T) {
	type body struct {
		Error     string  `json:"error"`
		Tool      string  `json:"tool"`
		Detail    string  `json:"detail"`
		Issues    []Issue `json:"issues"`
		Truncated *bool   `json:"truncated"`
	}
	tests := []struct {
		name       string
		err        *ArgumentError
		tool       string
		wantIssues int
		wantFields bool // issues and truncated present
	}{
		{
			name:       "invalid arguments add issues and truncated",
			err:        &ArgumentError{Kind: KindInvalidArguments, Detail: "d", Issues: []Issue{{"/a", "bad <b>"}}, Truncated: true},
			tool:       "t",
			wantIssues: 1, wantFields: true,
		},
		{
			// Catches a hand-built error slipping past the bounds.
			name: "hand-built issues are bounded again",
			err: &ArgumentError{Kind: KindInvalidArguments, Detail: strings.Repeat("d", 2000),
				Issues: []Issue{{strings.Repeat("/p", 500), strings.Repeat("r", 500)}}},
			tool:       strings.Repeat("n", 100),
			wantIssues: 1, wantFields: true,
		},
		{
			name:       "too large has the plain body",
			err:        &ArgumentError{Kind: KindArgumentsTooLarge, Detail: "big"},
			tool:       "t",
			wantFields: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := tt.err.Content(tt.tool)
			var b body
			dec := json.NewDecoder(strings.NewReader(content))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&b); err != nil {
				t.Fatalf("Content() = %s: %v", content, err)
			}
			if b.Error != tt.err.Kind || len(b.Tool) > MaxErrorToolBytes || len(b.Detail) > MaxErrorDetailBytes {
				t.Fatalf("Content() = %s", content)
			}
			if (b.Truncated != nil) != tt.wantFields || len(b.Issues) != tt.wantIssues {
				t.Fatalf("Content() = %s, want issues and truncated: %v", content, tt.wantFields)
			}
			if tt.wantFields && *b.Truncated != tt.err.Truncated {
				t.Fatalf("truncated = %v", *b.Truncated)
			}
			for _, is := range b.Issues {
				if len(is.Path) > MaxIssuePathBytes || len(is.Reason) > MaxIssueReasonBytes {
					t.Fatalf("issue out of bounds: %d/%d bytes", len(is.Path), len(is.Reason))
				}
			}
			if strings.Contains(content, `\u003c`) {
				t.Fatalf("Content() escapes HTML: %s", content)
			}
		})
	}
	// An empty issue list is [] for the model, not null.
	if c := (&ArgumentError{Kind: KindInvalidArguments, Detail: "d"}).Content("t"); !strings.Contains(c, `"issues":[]`) {
		t.Fatalf("Content() = %s", c)
	}
	res := (&ArgumentError{Kind: KindInvalidArguments, Detail: "d"}).Result(messages.ToolCall{ID: "t1.0", Name: "t"})
	if !res.IsError || res.CallID != "t1.0" || res.Name != "t" {
		t.Fatalf("Result() = %+v", res)
	}
}

// Catches argument values leaking into logs through the error text.
func TestArgumentErrorTextHasNoValues(t *testing.T) {
	err := registryWith(t, orderSchema).ValidateArguments("t", json.RawMessage(`{"name":"Kaya","party":2,"time":"+33 6 12 34 56 78"}`))
	var aerr *ArgumentError
	if !errors.As(err, &aerr) || !strings.Contains(aerr.Issues[0].Reason, "+33") {
		t.Fatalf("ValidateArguments() = %v, want a reason quoting the value", err)
	}
	if strings.Contains(err.Error(), "+33") {
		t.Fatalf("Error() = %v", err)
	}
}

// Catches the cap counting the compact form wrongly: for valid JSON,
// overCap agrees with the length json.Compact gives.
func FuzzOverCap(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": 1}`, "{\n\t\"a b\" : [1, 2, \"x \\\" y\"]\r\n}", `"\\"`, `[ ]`, `{"k":"\u00e9 "}`} {
		f.Add([]byte(s), 4)
	}
	f.Fuzz(func(t *testing.T, raw []byte, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			if overCap(raw, max) && len(raw) <= max {
				t.Fatalf("overCap(%q, %d) refused input no longer than the cap", raw, max)
			}
			return
		}
		if got, want := overCap(raw, max), b.Len() > max; got != want {
			t.Fatalf("overCap(%q, %d) = %v, compact length %d", raw, max, got, b.Len())
		}
	})
}

// Catches state shared between validations of one compiled schema (the
// registry validates calls from many goroutines): run under -race.
func TestValidateConcurrently(t *testing.T) {
	r := registryWith(t, orderSchema)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				args := `{"name":"Kaya","party":2}`
				if i%2 == 1 {
					args = `{"party":"x","zz":1,"aa":2}`
				}
				err := r.ValidateArguments("t", json.RawMessage(args))
				if (err == nil) != (i%2 == 0) {
					errs <- fmt.Errorf("goroutine %d: ValidateArguments() = %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestValidatorPanicIsARefusal: the schema library dereferences nil when a
// number is beyond math/big's range (1e9999999) and the schema bounds it
// (minimum, maximum, exclusive bounds on type number); the call is
// refused invalid_arguments instead of crashing the tools actor. Found by
// the fast path's differential fuzzing. (Mutation seen failing: no
// recover in validateGuarded — the test panics.)
func TestValidatorPanicIsARefusal(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"party":{"type":"number","minimum":1,"maximum":20}}}`,
		`{"type":"object","properties":{"party":{"type":"number","exclusiveMaximum":20}}}`,
		`{"type":"object","properties":{"party":{"minimum":1}}}`,
		`{"type":"object","properties":{"party":{"type":"number","multipleOf":2}}}`,
	}
	for _, sch := range schemas {
		for _, args := range []string{`{"party":1e9999999}`, `{"party":-1e999999999}`} {
			r := registryWith(t, sch)
			err := r.ValidateArguments("t", json.RawMessage(args))
			var aerr *ArgumentError
			if !errors.As(err, &aerr) || aerr.Kind != KindInvalidArguments {
				t.Errorf("%s with %s: %v, want invalid_arguments", sch, args, err)
			}
		}
	}
}
