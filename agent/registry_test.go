package agent

import (
	"context"
	"encoding/json"
	"errors"
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

func TestRegister(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantErr error
		check   func(t *testing.T, s Spec)
	}{
		{
			name: "defaults filled",
			spec: Spec{Name: "lookup_order", Effect: ReadOnly},
			check: func(t *testing.T, s Spec) {
				if s.Timeout != DefaultTimeout || s.FillerAfter != DefaultFillerAfter || string(s.Parameters) != `{"type":"object"}` {
					t.Fatalf("spec = %+v", s)
				}
			},
		},
		{
			name: "explicit values kept, schema compacted",
			spec: Spec{Name: "book-slot", Effect: SideEffect, Timeout: 2 * time.Second, FillerAfter: -1,
				Parameters: json.RawMessage(`{ "type": "object", "properties": {"slot": {"type": "string"}} }`)},
			check: func(t *testing.T, s Spec) {
				if s.Timeout != 2*time.Second || s.FillerAfter != -1 || string(s.Parameters) != `{"type":"object","properties":{"slot":{"type":"string"}}}` {
					t.Fatalf("spec = %+v params %s", s, s.Parameters)
				}
			},
		},
		{name: "64-byte name accepted", spec: Spec{Name: strings.Repeat("a", 64), Effect: ReadOnly}},
		{name: "65-byte name rejected", spec: Spec{Name: strings.Repeat("a", 65), Effect: ReadOnly}, wantErr: ErrInvalidSpec},
		{name: "empty name rejected", spec: Spec{Effect: ReadOnly}, wantErr: ErrInvalidSpec},
		{name: "non-ASCII name rejected", spec: Spec{Name: "réserver", Effect: ReadOnly}, wantErr: ErrInvalidSpec},
		{name: "space in name rejected", spec: Spec{Name: "look up", Effect: ReadOnly}, wantErr: ErrInvalidSpec},
		{name: "dot in name rejected", spec: Spec{Name: "a.b", Effect: ReadOnly}, wantErr: ErrInvalidSpec},
		{name: "undeclared effect rejected", spec: Spec{Name: "x"}, wantErr: ErrInvalidSpec},
		{name: "negative timeout rejected", spec: Spec{Name: "x", Effect: ReadOnly, Timeout: -time.Second}, wantErr: ErrInvalidSpec},
		{name: "parameters not an object", spec: Spec{Name: "x", Effect: ReadOnly, Parameters: json.RawMessage(`[]`)}, wantErr: ErrInvalidSpec},
		{name: "parameters null", spec: Spec{Name: "x", Effect: ReadOnly, Parameters: json.RawMessage(`null`)}, wantErr: ErrInvalidSpec},
		{name: "parameters without type", spec: Spec{Name: "x", Effect: ReadOnly, Parameters: json.RawMessage(`{"properties":{}}`)}, wantErr: ErrInvalidSpec},
		{name: "parameters of another type", spec: Spec{Name: "x", Effect: ReadOnly, Parameters: json.RawMessage(`{"type":"string"}`)}, wantErr: ErrInvalidSpec},
		{name: "parameters not JSON", spec: Spec{Name: "x", Effect: ReadOnly, Parameters: json.RawMessage(`{type:object}`)}, wantErr: ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := NewRegistry()
			err := r.Register(specTool(tt.spec))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Register() = %v, want %v", err, tt.wantErr)
			}
			_, s, ok := r.Lookup(tt.spec.Name)
			if ok != (tt.wantErr == nil) {
				t.Fatalf("Lookup() ok = %v after Register() = %v", ok, err)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// Catches a duplicate replacing the first tool.
func TestRegisterDuplicateKeepsFirst(t *testing.T) {
	first := NewFuncTool(Spec{Name: "x", Effect: ReadOnly, Description: "first"}, nil)
	second := NewFuncTool(Spec{Name: "x", Effect: SideEffect, Description: "second"}, nil)
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
	r, err := NewRegistry(
		specTool(Spec{Name: "zeta", Effect: ReadOnly}),
		specTool(Spec{Name: "Alpha", Effect: ReadOnly}),
		specTool(Spec{Name: "beta", Effect: SideEffect}),
	)
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
	r, err := NewRegistry(specTool(Spec{Name: "a", Effect: ReadOnly}), specTool(Spec{Name: "b", Effect: ReadOnly}))
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
