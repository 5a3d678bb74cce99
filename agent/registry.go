package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The reasons Register refuses a spec. Each wraps ErrInvalidSpec, so a
// caller that only asks "was the spec refused?" keeps working; tests and
// config checks can tell the reasons apart. They live here rather than in
// errors.go only because this change does not own that file.
var (
	// ErrInvalidToolName: not 1 to 64 ASCII letters, digits, '_' or '-'.
	ErrInvalidToolName = fmt.Errorf("%w: invalid name", ErrInvalidSpec)
	// ErrReservedToolName: the name belongs to a built-in tool
	// (ConfirmPendingTool).
	ErrReservedToolName = fmt.Errorf("%w: reserved name", ErrInvalidSpec)
	// ErrUndeclaredEffect: the spec says neither ReadOnly nor SideEffect.
	ErrUndeclaredEffect = fmt.Errorf("%w: effect not declared", ErrInvalidSpec)
	// ErrInvalidTimeout: Timeout is zero or negative.
	ErrInvalidTimeout = fmt.Errorf("%w: timeout not positive", ErrInvalidSpec)
	// ErrConfirmNeedsSideEffect: Confirm on a ReadOnly tool.
	ErrConfirmNeedsSideEffect = fmt.Errorf("%w: confirm needs a SideEffect tool", ErrInvalidSpec)
	// ErrRepeatableNeedsSideEffect: Repeatable on a ReadOnly tool.
	ErrRepeatableNeedsSideEffect = fmt.Errorf("%w: repeatable needs a SideEffect tool", ErrInvalidSpec)
	// ErrInvalidSchema: Parameters is not an object schema, or it does not
	// compile offline (a remote $ref, a keyword of the wrong type).
	ErrInvalidSchema = fmt.Errorf("%w: invalid parameters schema", ErrInvalidSpec)
)

// Registry holds the tools one call may offer, keyed by name. It is safe for
// concurrent use: the tools actor looks tools up from the goroutines that
// run calls while the call's own tools may still be registered.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]registered
}

type registered struct {
	tool   Tool
	spec   Spec               // normalised once at Register; the tool's Spec is not read again
	schema *jsonschema.Schema // Parameters compiled once at Register; read-only afterwards
	fast   *fastValidator     // the same for the fast path; nil when the schema is outside its subset
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

// Register adds t under its spec's name, with its parameters compacted and
// compiled. A rejected tool is not added, and a duplicate keeps the first
// tool. Errors wrap ErrDuplicateTool or ErrInvalidSpec, the latter through
// one of the reasons above (ErrInvalidToolName, ErrInvalidSchema, ...).
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrInvalidSpec)
	}
	// Compile outside the lock: a large schema must not stall lookups.
	e, err := newEntry(t)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[e.spec.Name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicateTool, e.spec.Name)
	}
	if r.tools == nil {
		r.tools = make(map[string]registered)
	}
	r.tools[e.spec.Name] = e
	return nil
}

// Lookup returns the tool registered under name and its normalised spec.
func (r *Registry) Lookup(name string) (Tool, Spec, bool) {
	e, ok := r.entry(name)
	if !ok {
		return nil, Spec{}, false
	}
	return e.tool, cloneSpec(e.spec), true
}

// entry returns the registered entry without copying its spec: for readers
// inside the package that do not hand the spec out.
func (r *Registry) entry(name string) (registered, bool) {
	if r == nil {
		return registered{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e, ok
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

// cloneSpec copies Parameters so a caller that edits a returned spec does
// not change the registry.
func cloneSpec(s Spec) Spec {
	s.Parameters = slices.Clone(s.Parameters)
	return s
}

// newEntry checks t's spec, fills its defaults and compiles its schema.
func newEntry(t Tool) (registered, error) {
	s := t.Spec()
	if err := checkToolName(s.Name); err != nil {
		return registered{}, err
	}
	if s.Name == ConfirmPendingTool {
		return registered{}, fmt.Errorf("%w: %q is the built-in confirmation tool", ErrReservedToolName, s.Name)
	}
	if s.Effect != ReadOnly && s.Effect != SideEffect {
		return registered{}, fmt.Errorf("%w: %q: declare ReadOnly or SideEffect", ErrUndeclaredEffect, s.Name)
	}
	if s.Timeout <= 0 {
		return registered{}, fmt.Errorf("%w: %q: got %v; build the spec with NewSpec (%v) or set Timeout",
			ErrInvalidTimeout, s.Name, s.Timeout, DefaultTimeout)
	}
	if s.Confirm && s.Effect != SideEffect {
		return registered{}, fmt.Errorf("%w: %q is ReadOnly", ErrConfirmNeedsSideEffect, s.Name)
	}
	if s.Repeatable && s.Effect != SideEffect {
		return registered{}, fmt.Errorf("%w: %q is ReadOnly", ErrRepeatableNeedsSideEffect, s.Name)
	}
	if s.FillerAfter == 0 {
		s.FillerAfter = DefaultFillerAfter
	}
	params, schema, fast, err := compileParameters(s.Name, s.Parameters)
	if err != nil {
		return registered{}, fmt.Errorf("%w: %q: %v", ErrInvalidSchema, s.Name, err)
	}
	s.Parameters = params
	return registered{tool: t, spec: s, schema: schema, fast: fast}, nil
}

// checkToolName enforces the name rule every provider accepts: 1 to 64
// ASCII letters, digits, '_' or '-'.
func checkToolName(name string) error {
	if name == "" || len(name) > MaxToolNameBytes {
		return fmt.Errorf("%w: must be 1 to %d bytes, got %d", ErrInvalidToolName, MaxToolNameBytes, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: %q: byte %d is not an ASCII letter, digit, '_' or '-'", ErrInvalidToolName, name, i)
		}
	}
	return nil
}

// emptyParameters is the schema of a tool that declares no arguments.
const emptyParameters = `{"type":"object"}`

// compileParameters returns a compact copy of an object schema (or
// emptyParameters when p is empty), its compiled form, and its fast
// validator when the schema lies in the fast path's subset (nil otherwise:
// that is not an error).
func compileParameters(name string, p json.RawMessage) (json.RawMessage, *jsonschema.Schema, *fastValidator, error) {
	if len(bytes.TrimSpace(p)) == 0 {
		p = json.RawMessage(emptyParameters)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(p))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parameters are not JSON: %v", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, nil, errors.New("parameters must be a JSON object schema")
	}
	if typ, _ := obj["type"].(string); typ != "object" {
		return nil, nil, nil, errors.New(`parameters must have "type": "object"`)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		return nil, nil, nil, err
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(offlineLoader{})
	// A hierarchical URL of a scheme no loader serves: a relative $ref
	// ("other.json") resolves against it and is refused like a remote one.
	loc := "brisvox-tool:///" + name + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, nil, nil, err
	}
	schema, err := c.Compile(loc)
	if err != nil {
		return nil, nil, nil, err
	}
	// Outside the subset the tool simply has no fast path: the library
	// validates every call.
	fast, _ := compileFast(doc)
	return json.RawMessage(b.Bytes()), schema, fast, nil
}

// offlineLoader refuses every URL the compiler asks for. Registration runs
// inside a call's setup: fetching a schema from the network (or reading a
// file named by a remote agent) there would be slow, unbounded and a way for
// a tool declaration to make the server fetch what it names. The draft
// meta-schemas are embedded in the library and never reach the loader.
type offlineLoader struct{}

var _ jsonschema.URLLoader = offlineLoader{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote $ref refused (schemas compile offline; use a local #/$defs/ reference): %s", url)
}
