package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/messages"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Bounds of argument validation. The cap bounds the cost of the schema
// check, which runs on the caller's goroutine before the tool; the issue
// bounds keep a refusal small in the model's context.
const (
	// MaxArgumentBytes caps a call's arguments, serialized compactly
	// (whitespace between tokens does not count). Larger arguments are
	// refused as arguments_too_large without being parsed.
	MaxArgumentBytes = 16 << 10
	// MaxIssues is how many problems a refusal lists; Truncated says when
	// there were more.
	MaxIssues = 5
	// MaxIssuePathBytes and MaxIssueReasonBytes bound one issue, an
	// ellipsis included.
	MaxIssuePathBytes   = 128
	MaxIssueReasonBytes = 200
)

// RootPath is an issue's path when the problem is the arguments as a whole.
// The JSON pointer of the root is the empty string, which a model reads
// badly.
const RootPath = "(root)"

// Argument refusals, wrapped by *ArgumentError. They live here rather than
// in errors.go only because this change does not own that file.
var (
	// ErrInvalidArguments: the arguments are not JSON, not an object, or do
	// not match the tool's schema.
	ErrInvalidArguments = errors.New("agent: invalid arguments")
	// ErrArgumentsTooLarge: the serialized arguments are over
	// MaxArgumentBytes; they were not parsed.
	ErrArgumentsTooLarge = errors.New("agent: arguments too large")
)

// Issue is one problem with a call's arguments.
type Issue struct {
	// Path is a JSON pointer into the arguments ("/items/3/sku"), or
	// RootPath. At most MaxIssuePathBytes.
	Path string `json:"path"`
	// Reason is the validator's message, which may quote the offending
	// value. At most MaxIssueReasonBytes.
	Reason string `json:"reason"`
}

// ArgumentError says why a call's arguments were refused before its tool
// ran. It wraps ErrInvalidArguments or ErrArgumentsTooLarge.
//
// Its Error text leaves the issues out: reasons quote argument values, and
// arguments are never logged.
type ArgumentError struct {
	// Kind is KindInvalidArguments or KindArgumentsTooLarge.
	Kind string
	// Detail is one sentence for the model.
	Detail string
	// Issues are at most MaxIssues problems, in instance order.
	Issues []Issue
	// Truncated says more issues were found than Issues holds.
	Truncated bool
}

// Error implements error.
func (e *ArgumentError) Error() string {
	s := e.Kind + ": " + e.Detail
	if n := len(e.Issues); n > 0 {
		s += " (" + strconv.Itoa(n) + " issues"
		if e.Truncated {
			s += " and more"
		}
		s += ")"
	}
	return s
}

// Unwrap makes errors.Is(err, ErrInvalidArguments) or
// errors.Is(err, ErrArgumentsTooLarge) hold.
func (e *ArgumentError) Unwrap() error {
	if e.Kind == KindArgumentsTooLarge {
		return ErrArgumentsTooLarge
	}
	return ErrInvalidArguments
}

// Content is the body of the error result the model reads: ErrorContent's
// {"error", "tool", "detail"}, plus "issues" and "truncated" for invalid
// arguments. Every field is bounded as in ErrorContent and Issue.
func (e *ArgumentError) Content(tool string) string {
	if e.Kind != KindInvalidArguments {
		return ErrorContent(e.Kind, tool, e.Detail)
	}
	issues := make([]Issue, len(e.Issues))
	for i, is := range e.Issues {
		// Bound again: an ArgumentError may be built by hand.
		issues[i] = Issue{Path: truncateUTF8(is.Path, MaxIssuePathBytes), Reason: truncateUTF8(is.Reason, MaxIssueReasonBytes)}
	}
	body := struct {
		Error     string  `json:"error"`
		Tool      string  `json:"tool"`
		Detail    string  `json:"detail"`
		Issues    []Issue `json:"issues"`
		Truncated bool    `json:"truncated"`
	}{e.Kind, truncateUTF8(tool, MaxErrorToolBytes), truncateUTF8(e.Detail, MaxErrorDetailBytes), issues, e.Truncated}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		// Strings and a bool, valid UTF-8: Encode cannot fail.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Result is the tool result refusing call.
func (e *ArgumentError) Result(call messages.ToolCall) messages.ToolResult {
	return messages.ToolResult{CallID: call.ID, Name: call.Name, Content: e.Content(call.Name), IsError: true}
}

// ValidateArguments checks raw against the parameters of the tool named
// name, as RunCall does before running it: first the MaxArgumentBytes cap,
// then JSON, then the schema. It returns nil, an *ArgumentError, or an
// error wrapping ErrUnknownTool. Empty arguments stand for {}.
//
// Valid arguments of a tool whose schema has a fast validator cost one scan
// and no allocation; others cost one parse and the library validator's own
// allocations. The issues are built only for invalid ones.
func (r *Registry) ValidateArguments(name string, raw json.RawMessage) error {
	e, ok := r.entry(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	if _, aerr := validateArguments(e.schema, e.fast, raw); aerr != nil {
		return aerr
	}
	return nil
}

// validateArguments returns the trimmed arguments ({} when empty) or why
// they are refused. fast, when not nil, is schema compiled for the fast
// path (fastvalidate.go): when it says valid, that is the answer; anything
// else goes through the library, which words every refusal.
func validateArguments(schema *jsonschema.Schema, fast *fastValidator, raw json.RawMessage) (json.RawMessage, *ArgumentError) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		trimmed = json.RawMessage("{}")
	}
	if overCap(trimmed, MaxArgumentBytes) {
		return nil, &ArgumentError{
			Kind:   KindArgumentsTooLarge,
			Detail: fmt.Sprintf("the arguments are over %d bytes; they were not checked and the tool did not run: send smaller arguments", MaxArgumentBytes),
		}
	}
	if fast != nil && fast.check(trimmed) == verdictValid {
		return trimmed, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, &ArgumentError{
			Kind:   KindInvalidArguments,
			Detail: "arguments are not valid JSON",
			Issues: []Issue{{Path: RootPath, Reason: truncateUTF8(err.Error(), MaxIssueReasonBytes)}},
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, &ArgumentError{
			Kind:   KindInvalidArguments,
			Detail: "arguments must be a JSON object",
			Issues: []Issue{{Path: RootPath, Reason: "got " + jsonTypeName(v) + ", want object"}},
		}
	}
	if schema == nil {
		return trimmed, nil
	}
	err, broke := validateGuarded(schema, v)
	if broke {
		// The library's own failure (seen: a number beyond math/big's
		// range, 1e9999999, against minimum/maximum dereferences nil).
		// The model's output must not crash the call: refuse it.
		return nil, &ArgumentError{
			Kind:   KindInvalidArguments,
			Detail: "the arguments could not be checked: a value is out of the range the validator handles; send plain values",
			Issues: []Issue{{Path: RootPath, Reason: "the schema validator failed on these arguments (a number with a huge exponent?)"}},
		}
	}
	if err == nil {
		return trimmed, nil
	}
	aerr := &ArgumentError{
		Kind:   KindInvalidArguments,
		Detail: "the arguments do not match the tool's parameters: fix the issues and call again",
	}
	var verr *jsonschema.ValidationError
	if errors.As(err, &verr) {
		aerr.Issues, aerr.Truncated = issuesOf(verr)
	}
	if len(aerr.Issues) == 0 {
		// Not a ValidationError (the library's contract says it always
		// is); still refuse, with its text.
		aerr.Issues = []Issue{{Path: RootPath, Reason: truncateUTF8(err.Error(), MaxIssueReasonBytes)}}
	}
	return nil, aerr
}

// validateGuarded runs the library's validator and reports a panic of it
// as broke instead of letting it take down the caller (the tools actor).
func validateGuarded(schema *jsonschema.Schema, v any) (err error, broke bool) {
	defer func() {
		if recover() != nil {
			err, broke = nil, true
		}
	}()
	return schema.Validate(v), false
}

// overCap reports whether the compact serialization of raw is longer than
// max bytes. It streams the significant bytes into a capWriter, which
// stops at the cap, so a 256 KiB value costs a scan to the cap, not a copy.
func overCap(raw []byte, max int) bool {
	w := capWriter{max: max}
	return writeCompact(&w, raw) != nil
}

// errOverCap is capWriter's refusal; it never leaves this file.
var errOverCap = errors.New("over the argument cap")

// capWriter counts the bytes written to it and fails the write that would
// pass max. It keeps nothing: only the size matters.
type capWriter struct {
	n, max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.n; len(p) > room {
		w.n = w.max
		return room, errOverCap
	}
	w.n += len(p)
	return len(p), nil
}

// writeCompact writes raw to w without the whitespace between JSON tokens
// (what json.Compact keeps), stopping at w's first error. raw need not be
// valid JSON: it is parsed only once it fits. A run of significant bytes is
// flushed before it can outgrow w's room, so a huge value without
// whitespace is refused after max bytes, not after a scan of all of it.
func writeCompact(w *capWriter, raw []byte) error {
	start := 0 // start of the pending run of significant bytes
	inString, escaped := false, false
	for i, c := range raw {
		if i-start > w.max-w.n {
			if _, err := w.Write(raw[start:i]); err != nil {
				return err
			}
			start = i
		}
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if _, err := w.Write(raw[start:i]); err != nil {
				return err
			}
			start = i + 1
		}
	}
	_, err := w.Write(raw[start:])
	return err
}

// jsonTypeName names the JSON type of a decoded value, for a reason.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// reasonPrinter formats the validator's messages. A Printer holds no state
// between calls (the library itself shares one), so one serves all.
var reasonPrinter = message.NewPrinter(language.English)

// issuesOf flattens a validation error to its leaves (the specific
// failures under the groups and references) and formats the first
// MaxIssues of them in instance order, so the same arguments always give the
// same issues (the library walks some keywords in map order). It keeps only
// those MaxIssues while it walks: a hostile array yields thousands of
// leaves, and sorting them all would cost more than the selection.
func issuesOf(verr *jsonschema.ValidationError) ([]Issue, bool) {
	var first [MaxIssues]*jsonschema.ValidationError // in order, ties in walk order
	n, total := 0, 0
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		total++
		i := n
		for i > 0 && compareLeaves(first[i-1], e) > 0 {
			i--
		}
		if i == MaxIssues {
			return
		}
		if n < MaxIssues {
			n++
		}
		copy(first[i+1:n], first[i:n-1])
		first[i] = e
	}
	walk(verr)
	issues := make([]Issue, n)
	for i, e := range first[:n] {
		// The names in additionalProperties come in map order.
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			slices.Sort(ap.Properties)
		}
		issues[i] = Issue{
			Path:   jsonPointer(e.InstanceLocation, MaxIssuePathBytes),
			Reason: truncateUTF8(e.ErrorKind.LocalizedString(reasonPrinter), MaxIssueReasonBytes),
		}
	}
	return issues, total > n
}

// compareLeaves orders failures by instance location, then by keyword.
func compareLeaves(a, b *jsonschema.ValidationError) int {
	if c := compareLocations(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c
	}
	return slices.Compare(a.ErrorKind.KeywordPath(), b.ErrorKind.KeywordPath())
}

// compareLocations orders instance locations token by token, array indexes
// numerically, a parent before its children.
func compareLocations(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] == b[i] {
			continue
		}
		if isIndex(a[i]) && isIndex(b[i]) && len(a[i]) != len(b[i]) {
			return len(a[i]) - len(b[i])
		}
		return strings.Compare(a[i], b[i])
	}
	return len(a) - len(b)
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}

// jsonPointer renders an instance location as a JSON pointer (RFC 6901:
// "~" as "~0", "/" as "~1"), RootPath for the root, cut to max bytes. It
// stops building once past max, so a deep location costs no more than the
// bound.
func jsonPointer(tokens []string, max int) string {
	if len(tokens) == 0 {
		return RootPath
	}
	var b strings.Builder
	for _, tok := range tokens {
		if b.Len() > max {
			break
		}
		b.WriteByte('/')
		for i := 0; i < len(tok) && b.Len() <= max; i++ {
			switch tok[i] {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(tok[i])
			}
		}
	}
	return truncateUTF8(b.String(), max)
}
