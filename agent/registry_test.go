package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// specTool makes a tool answering "ok" with spec s.
func specTool(s Spec) Tool {
	return NewFuncTool(s, func(context.Context, json.RawMessage, CallInfo) (Output, error) {
		return Output{Content: "ok"}, nil
	})
}

// ro and se are NewSpec specs with parameters p ("" for none).
func ro(name, p string) Spec {
	s := NewSpec(name, "", ReadOnly)
	s.Parameters = json.RawMessage(p)
	return s
}

func se(name, p string) Spec {
	s := NewSpec(name, "", SideEffect)
	s.Parameters = json.RawMessage(p)
	return s
}

// with returns s changed by edit, for table cases.
func with(s Spec, edit func(*Spec)) Spec {
	edit(&s)
	return s
}

func TestNewSpecDefaults(t *testing.T) {
	s := NewSpec("lookup_order", "Find an order.", ReadOnly)
	if s.Name != "lookup_order" || s.Description != "Find an order." || s.Effect != ReadOnly ||
		s.Timeout != 5*time.Second || s.FillerAfter != 700*time.Millisecond ||
		s.Confirm || s.Repeatable || s.Parameters != nil {
		t.Fatalf("NewSpec() = %+v", s)
	}
}

func TestRegister(t *testing.T) {
	// A schema file on disk: a loader that read files would compile a
	// $ref to it, so the refusal below is the loader's, not a missing file.
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"type":"string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fileRef := `{"type":"object","properties":{"a":{"$ref":"file://` + filepath.ToSlash(other) + `"}}}`

	tests := []struct {
		name    string
		spec    Spec
		wantErr error // the specific reason; every one also wraps ErrInvalidSpec
		check   func(t *testing.T, s Spec)
	}{
		{
			name: "NewSpec defaults kept, empty parameters become an object schema",
			spec: ro("lookup_order", ""),
			check: func(t *testing.T, s Spec) {
				if s.Timeout != DefaultTimeout || s.FillerAfter != DefaultFillerAfter || string(s.Parameters) != `{"type":"object"}` {
					t.Fatalf("spec = %+v", s)
				}
			},
		},
		{
			// Catches dropping the FillerAfter default for hand-built specs.
			name: "zero filler delay means the default",
			spec: Spec{Name: "x", Effect: ReadOnly, Timeout: time.Second},
			check: func(t *testing.T, s Spec) {
				if s.FillerAfter != DefaultFillerAfter {
					t.Fatalf("FillerAfter = %v", s.FillerAfter)
				}
			},
		},
		{
			name: "explicit values kept, schema compacted",
			spec: Spec{Name: "book-slot", Effect: SideEffect, Timeout: 2 * time.Second, FillerAfter: -1, Confirm: true, Repeatable: true,
				Parameters: json.RawMessage(`{ "type": "object", "properties": {"slot": {"type": "string"}} }`)},
			check: func(t *testing.T, s Spec) {
				if s.Timeout != 2*time.Second || s.FillerAfter != -1 || !s.Confirm || !s.Repeatable ||
					string(s.Parameters) != `{"type":"object","properties":{"slot":{"type":"string"}}}` {
					t.Fatalf("spec = %+v params %s", s, s.Parameters)
				}
			},
		},

		// Names. Catches a rule wider or narrower than the providers' subset.
		{name: "64-byte name accepted", spec: ro(strings.Repeat("a", 64), "")},
		{name: "letters digits _ and - accepted", spec: ro("Book_table-2", "")},
		{name: "65-byte name rejected", spec: ro(strings.Repeat("a", 65), ""), wantErr: ErrInvalidToolName},
		{name: "empty name rejected", spec: ro("", ""), wantErr: ErrInvalidToolName},
		{name: "non-ASCII name rejected", spec: ro("réserver", ""), wantErr: ErrInvalidToolName},
		{name: "space in name rejected", spec: ro("look up", ""), wantErr: ErrInvalidToolName},
		{name: "dot in name rejected", spec: ro("a.b", ""), wantErr: ErrInvalidToolName},
		// Catches dropping the reserved-name check: a tool could pose as
		// the confirmation of a held call.
		{name: "confirm_pending is reserved", spec: se(ConfirmPendingTool, ""), wantErr: ErrReservedToolName},
		{name: "a name containing confirm_pending is not reserved", spec: se("confirm_pending_2", "")},

		{name: "undeclared effect rejected", spec: with(ro("x", ""), func(s *Spec) { s.Effect = 0 }), wantErr: ErrUndeclaredEffect},

		// Timeouts. Catches `< 0` for `<= 0`: a hand-built spec without a
		// timeout would time out at once.
		{name: "zero timeout rejected", spec: Spec{Name: "x", Effect: ReadOnly}, wantErr: ErrInvalidTimeout},
		{name: "negative timeout rejected", spec: with(ro("x", ""), func(s *Spec) { s.Timeout = -time.Second }), wantErr: ErrInvalidTimeout},
		{name: "1ns timeout accepted", spec: with(ro("x", ""), func(s *Spec) { s.Timeout = time.Nanosecond })},

		// Catches a missing or inverted effect check on confirm/repeatable.
		{name: "confirm on ReadOnly rejected", spec: with(ro("x", ""), func(s *Spec) { s.Confirm = true }), wantErr: ErrConfirmNeedsSideEffect},
		{name: "confirm on SideEffect accepted", spec: with(se("x", ""), func(s *Spec) { s.Confirm = true })},
		{name: "repeatable on ReadOnly rejected", spec: with(ro("x", ""), func(s *Spec) { s.Repeatable = true }), wantErr: ErrRepeatableNeedsSideEffect},
		{name: "repeatable on SideEffect accepted", spec: with(se("x", ""), func(s *Spec) { s.Repeatable = true })},

		// Schemas.
		{name: "parameters an array", spec: ro("x", `[]`), wantErr: ErrInvalidSchema},
		{name: "parameters null", spec: ro("x", `null`), wantErr: ErrInvalidSchema},
		{name: "parameters without type", spec: ro("x", `{"properties":{}}`), wantErr: ErrInvalidSchema},
		{name: "parameters of another type", spec: ro("x", `{"type":"string"}`), wantErr: ErrInvalidSchema},
		{name: "parameters with a type list", spec: ro("x", `{"type":["object"]}`), wantErr: ErrInvalidSchema},
		{name: "parameters not JSON", spec: ro("x", `{type:object}`), wantErr: ErrInvalidSchema},
		{name: "parameters with trailing data", spec: ro("x", `{"type":"object"} {}`), wantErr: ErrInvalidSchema},
		// Catches compiling without the meta-schema check.
		{name: "keyword of the wrong type", spec: ro("x", `{"type":"object","minProperties":"two"}`), wantErr: ErrInvalidSchema},
		{name: "dangling local $ref", spec: ro("x", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`), wantErr: ErrInvalidSchema},
		// Catches a loader that fetches: none of these may leave the process.
		{name: "remote https $ref refused", spec: ro("x", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`), wantErr: ErrInvalidSchema},
		{name: "remote http $ref refused", spec: ro("x", `{"type":"object","properties":{"a":{"$ref":"http://example.com/a.json"}}}`), wantErr: ErrInvalidSchema},
		{name: "file $ref refused though the file exists", spec: ro("x", fileRef), wantErr: ErrInvalidSchema},
		{name: "relative $ref refused", spec: ro("x", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`), wantErr: ErrInvalidSchema},
		{name: "unknown remote $schema refused", spec: ro("x", `{"$schema":"https://example.com/meta","type":"object"}`), wantErr: ErrInvalidSchema},
		{name: "local $ref accepted", spec: ro("x", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`)},
		{name: "draft 2020-12 $schema accepted offline", spec: ro("x", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := NewRegistry()
			err := r.Register(specTool(tt.spec))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Register() = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidSpec) {
				t.Fatalf("Register() = %v, does not wrap ErrInvalidSpec", err)
			}
			_, s, ok := r.Lookup(tt.spec.Name)
			if ok != (tt.wantErr == nil) || r.Len() != map[bool]int{true: 1, false: 0}[ok] {
				t.Fatalf("Lookup() ok = %v, Len %d after Register() = %v", ok, r.Len(), err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// Catches a zero-timeout refusal that does not tell the author the fix.
func TestRegisterZeroTimeoutSaysHow(t *testing.T) {
	r, _ := NewRegistry()
	err := r.Register(specTool(Spec{Name: "x", Effect: ReadOnly}))
	if err == nil || !strings.Contains(err.Error(), "NewSpec") || !strings.Contains(err.Error(), "Timeout") {
		t.Fatalf("Register(zero timeout) = %v, want a hint to NewSpec or Timeout", err)
	}
}

// Catches a remote-$ref refusal that does not say why (an author would
// look for a network problem).
func TestRegisterRemoteRefSaysOffline(t *testing.T) {
	r, _ := NewRegistry()
	err := r.Register(specTool(ro("x", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)))
	if err == nil || !strings.Contains(err.Error(), "remote $ref refused") {
		t.Fatalf("Register(remote $ref) = %v", err)
	}
}

// Catches a duplicate replacing the first tool.
func TestRegisterDuplicateKeepsFirst(t *testing.T) {
	first := NewFuncTool(with(ro("x", ""), func(s *Spec) { s.Description = "first" }), nil)
	second := NewFuncTool(with(se("x", ""), func(s *Spec) { s.Description = "second" }), nil)
	r, err := NewRegistry(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(second); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("Register(duplicate) = %v, want ErrDuplicateTool", err)
	}
	if _, s, _ := r.Lookup("x"); s.Description != "first" || r.Len() != 1 {
		t.Fatalf("Lookup(x) = %+v, Len %d", s, r.Len())
	}
	if _, err := NewRegistry(first, second); !errors.Is(err, ErrDuplicateTool) {
		t.Fatalf("NewRegistry(duplicates) = %v, want ErrDuplicateTool", err)
	}
	if err := r.Register(nil); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("Register(nil) = %v, want ErrInvalidSpec", err)
	}
}

func TestSpecsInNameOrder(t *testing.T) {
	r, err := NewRegistry(specTool(ro("zeta", "")), specTool(ro("Alpha", "")), specTool(se("beta", "")))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Specs() {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "Alpha,beta,zeta" {
		t.Fatalf("Specs() names = %s", got)
	}
	// Catches Specs sharing the registry's schema bytes.
	r.Specs()[0].Parameters[0] = 'X'
	if _, s, _ := r.Lookup("Alpha"); string(s.Parameters) != `{"type":"object"}` {
		t.Fatalf("editing a returned spec changed the registry: %s", s.Parameters)
	}
}

func TestSubset(t *testing.T) {
	r, err := NewRegistry(specTool(ro("a", "")), specTool(ro("b", `{"type":"object","required":["q"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		names   []string
		want    int
		wantErr error
	}{
		{name: "one tool", names: []string{"b"}, want: 1},
		{name: "none", want: 0},
		{name: "repeated name kept once", names: []string{"a", "a"}, want: 1},
		{name: "unknown name", names: []string{"a", "c"}, wantErr: ErrUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := r.Subset(tt.names...)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Subset() = %v, want %v", err, tt.wantErr)
			}
			if err == nil && sub.Len() != tt.want {
				t.Fatalf("Subset().Len() = %d, want %d", sub.Len(), tt.want)
			}
		})
	}
	// Catches a subset that drops the compiled schema: its calls would
	// skip validation.
	sub, err := r.Subset("b")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.ValidateArguments("b", json.RawMessage(`{}`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("Subset().ValidateArguments(missing q) = %v, want ErrInvalidArguments", err)
	}
}

func TestEffectString(t *testing.T) {
	tests := []struct {
		name string
		e    Effect
		want string
	}{
		{name: "read only", e: ReadOnly, want: "read_only"},
		{name: "side effect", e: SideEffect, want: "side_effect"},
		{name: "zero", e: 0, want: "undeclared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.e.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
