package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Registry holds the tools one call may offer, keyed by name. It is safe for
// concurrent use: the tools actor looks tools up from the goroutines that
// run calls while the call's own tools may still be registered.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]registered
}

type registered struct {
	tool Tool
	spec Spec // normalised once at Register; the tool's Spec is not read again
}

// NewRegistry makes a registry holding tools. It fails on the first tool
// Register rejects.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]registered, len(tools))}
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds t under its spec's name, with the spec's defaults filled
// in. A rejected tool is not added, and a duplicate keeps the first tool.
// Errors wrap ErrInvalidSpec or ErrDuplicateTool.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrInvalidSpec)
	}
	spec, err := normalizeSpec(t.Spec())
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[spec.Name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicateTool, spec.Name)
	}
	if r.tools == nil {
		r.tools = make(map[string]registered)
	}
	r.tools[spec.Name] = registered{tool: t, spec: spec}
	return nil
}

// Lookup returns the tool registered under name and its normalised spec.
func (r *Registry) Lookup(name string) (Tool, Spec, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok {
		return nil, Spec{}, false
	}
	return e.tool, cloneSpec(e.spec), true
}

// Specs returns the normalised specs in name order, so two requests with the
// same tools are byte-identical (provider prompt caches depend on it).
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Spec, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, cloneSpec(e.spec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Len is the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// cloneSpec copies Parameters so a caller that edits a returned spec does
// not change the registry.
func cloneSpec(s Spec) Spec {
	s.Parameters = slices.Clone(s.Parameters)
	return s
}

// normalizeSpec checks s and fills its defaults.
func normalizeSpec(s Spec) (Spec, error) {
	if err := checkToolName(s.Name); err != nil {
		return Spec{}, err
	}
	if s.Effect != ReadOnly && s.Effect != SideEffect {
		return Spec{}, fmt.Errorf("%w: %q: effect not declared (ReadOnly or SideEffect)", ErrInvalidSpec, s.Name)
	}
	if s.Timeout < 0 {
		return Spec{}, fmt.Errorf("%w: %q: negative timeout %v", ErrInvalidSpec, s.Name, s.Timeout)
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.FillerAfter == 0 {
		s.FillerAfter = DefaultFillerAfter
	}
	params, err := checkParameters(s.Parameters)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: %q: %v", ErrInvalidSpec, s.Name, err)
	}
	s.Parameters = params
	return s, nil
}

// checkToolName enforces the name rule every provider accepts: 1 to 64
// ASCII letters, digits, '_' or '-'.
func checkToolName(name string) error {
	if name == "" || len(name) > MaxToolNameBytes {
		return fmt.Errorf("%w: name must be 1 to %d bytes, got %d", ErrInvalidSpec, MaxToolNameBytes, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: name %q: byte %d is not an ASCII letter, digit, '_' or '-'", ErrInvalidSpec, name, i)
		}
	}
	return nil
}

// checkParameters returns a compact copy of an object schema, or
// {"type":"object"} when p is empty. It checks the shape only; validating
// arguments against the schema is the tool engine's job.
func checkParameters(p json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(p)) == 0 {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(p, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("parameters must be a JSON object schema")
	}
	var typ string
	if err := json.Unmarshal(fields["type"], &typ); err != nil || typ != "object" {
		return nil, fmt.Errorf(`parameters must have "type": "object"`)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		return nil, fmt.Errorf("parameters: %v", err)
	}
	return json.RawMessage(b.Bytes()), nil
}

// Subset returns a registry holding only the named tools, for narrowing what
// one response may call (an agent's tools.set) without registering again.
// An unknown name is an error wrapping ErrUnknownTool; a repeated name is
// kept once.
func (r *Registry) Subset(names ...string) (*Registry, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sub := &Registry{tools: make(map[string]registered, len(names))}
	for _, name := range names {
		e, ok := r.tools[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
		}
		sub.tools[name] = e
	}
	return sub, nil
}
