package providers

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Type is the type of a vendor option's value, as an agent file writes it.
type Type uint8

// The option types. An enum or URL option is a TypeString (a set of rates
// a TypeInt) with its check in the row.
const (
	TypeString Type = iota + 1
	TypeInt
	TypeFloat
	TypeBool
	TypeDuration
	TypeStrings
	TypeInts
	// TypeEnv is the NAME of an environment variable that holds a key.
	TypeEnv
)

// String names the type as the docs do.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeInt:
		return "integer"
	case TypeFloat:
		return "number"
	case TypeBool:
		return "boolean"
	case TypeDuration:
		return "duration"
	case TypeStrings:
		return "list of strings"
	case TypeInts:
		return "list of integers"
	case TypeEnv:
		return "variable name"
	}
	return "unknown"
}

// Value is an option's value; the field of its Type holds it.
type Value struct {
	String   string // TypeString; TypeEnv: the variable's name ("": no key)
	Int      int64
	Float    float64
	Bool     bool
	Duration time.Duration
	Strings  []string
	Ints     []int64
}

// KeyRule says how a vendor's key variable defaults.
type KeyRule uint8

// The key rules.
const (
	// NoKey: the vendor takes no key (an engine on this machine).
	NoKey KeyRule = iota
	// KeyAlways: the adapter always sends a key; api_key_env defaults to
	// the vendor's variable and cannot be empty.
	KeyAlways
	// KeyUnlessURL: the key variable defaults to the vendor's only while
	// the endpoint option is left at the vendor's; with another endpoint
	// no key is sent unless api_key_env names one (a key is never sent to
	// another host by default). An empty api_key_env means no key.
	KeyUnlessURL
)

// Option is one row of a vendor's option table: an option of its Config
// that belongs in an agent file, its bounds, default and doc line, and
// the setter that writes a checked value into the Config.
type Option struct {
	// Name is the option's name in a file (snake_case).
	Name string
	Type Type
	// Bounded: Min and Max bound an int or float (each item of a
	// TypeInts).
	Bounded  bool
	Min, Max float64
	// MinDuration and MaxDuration bound a duration (always bounded).
	MinDuration, MaxDuration time.Duration
	// Enum lists the values a string may take; Values the values an int
	// may take; Schemes make a string a URL of one of these schemes.
	Enum    []string
	Values  []int64
	Schemes []string
	// Required: the vendor cannot work without it.
	Required bool
	// Default is the value the adapter takes when the option is left out
	// (nil: the service's own), Example a value shown in the docs instead
	// of it, both of the Go type of Type (string, int, float64, bool,
	// time.Duration, []int).
	Default, Example any
	// Doc is the line the docs show beside the option.
	Doc string
	// Aside: the docs show the option commented out (it replaces another
	// one).
	Aside bool

	set func(cfg any, v Value) error
}

// WithDefault records the adapter's default.
func (o Option) WithDefault(v any) Option { o.Default = v; return o }

// WithExample records the value the docs show.
func (o Option) WithExample(v any) Option { o.Example = v; return o }

// WithDoc records the docs' line.
func (o Option) WithDoc(doc string) Option { o.Doc = doc; return o }

// AsAside shows the option commented out in the docs.
func (o Option) AsAside() Option { o.Aside = true; return o }

// AsRequired makes the option required.
func (o Option) AsRequired() Option { o.Required = true; return o }

// Check tells whether v is a value the option takes. The error wraps
// ErrOption.
func (o Option) Check(v Value) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrOption, o.Name, fmt.Sprintf(format, args...))
	}
	inRange := func(x float64) bool { return !o.Bounded || x >= o.Min && x <= o.Max }
	switch o.Type {
	case TypeString:
		switch {
		case len(o.Enum) > 0:
			if !slices.Contains(o.Enum, v.String) {
				return bad("%q is not one of %s", v.String, strings.Join(o.Enum, ", "))
			}
		case len(o.Schemes) > 0:
			if msg := CheckURL(v.String, o.Schemes); msg != "" {
				return bad("%s", msg)
			}
		case strings.TrimSpace(v.String) == "":
			return bad("is empty")
		}
	case TypeEnv:
		if v.String != "" && !IsEnvName(v.String) {
			return bad("is not an environment variable name")
		}
	case TypeInt:
		if len(o.Values) > 0 && !slices.Contains(o.Values, v.Int) {
			return bad("%d is not one of %v", v.Int, o.Values)
		}
		if !inRange(float64(v.Int)) {
			return bad("%d is out of range %v..%v", v.Int, o.Min, o.Max)
		}
	case TypeFloat:
		if math.IsNaN(v.Float) || !inRange(v.Float) {
			return bad("%v is out of range %v..%v", v.Float, o.Min, o.Max)
		}
	case TypeDuration:
		if v.Duration < o.MinDuration || v.Duration > o.MaxDuration {
			return bad("%v is out of range %v..%v", v.Duration, o.MinDuration, o.MaxDuration)
		}
	case TypeInts:
		for _, x := range v.Ints {
			if !inRange(float64(x)) {
				return bad("%d is out of range %v..%v", x, o.Min, o.Max)
			}
		}
	case TypeBool, TypeStrings:
	default:
		return bad("unknown type %d", o.Type)
	}
	return nil
}

// Apply checks v and writes it into cfg, a pointer to the vendor's
// Config. The error wraps ErrOption.
func (o Option) Apply(cfg any, v Value) error {
	if err := o.Check(v); err != nil {
		return err
	}
	if o.set == nil {
		return fmt.Errorf("%w: %s has no setter", ErrOption, o.Name)
	}
	return o.set(cfg, v)
}

// Options is a vendor's option table: its name in an agent file, how its
// key variable defaults, its warm-up probes and its options in the order
// the docs list them.
type Options struct {
	// Vendor is the provider's name in an agent file ("cartesia").
	Vendor string
	// Key is how the key variable defaults; KeyEnv is the default
	// variable, URLOption and DefaultURL the endpoint option and its
	// default (filled in when not written).
	Key        KeyRule
	KeyEnv     string
	URLOption  string
	DefaultURL string
	// Warm are the warm-up probes the adapter offers, the first the
	// default ("none" always last).
	Warm []string
	List []Option
}

// Lookup is the option of that name.
func (t Options) Lookup(name string) (Option, bool) {
	for _, o := range t.List {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// Check tells whether v is a value the named option takes: its row's
// check, and the key rule (a vendor that always sends a key takes no
// empty key variable). The error wraps ErrOption.
func (t Options) Check(name string, v Value) error {
	o, ok := t.Lookup(name)
	if !ok {
		return fmt.Errorf("%w: %s has no option %s", ErrOption, t.Vendor, name)
	}
	if o.Type == TypeEnv && t.Key == KeyAlways && v.String == "" {
		return fmt.Errorf("%w: %s: %s needs a key variable", ErrOption, name, t.Vendor)
	}
	return o.Check(v)
}

// Apply checks the named values and writes them into cfg, a pointer to
// the vendor's Config, in the table's order. A name the table does not
// have is refused. The error wraps ErrOption.
func (t Options) Apply(cfg any, values map[string]Value) error {
	for name, v := range values {
		if err := t.Check(name, v); err != nil {
			return err
		}
	}
	for _, o := range t.List {
		if v, ok := values[o.Name]; ok {
			if err := o.Apply(cfg, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Of makes the rows of the option table of config type C: each
// constructor takes the setter that writes the checked value into a *C.
type Of[C any] struct{}

func (Of[C]) row(name string, t Type, set func(*C, Value)) Option {
	return Option{Name: name, Type: t, set: func(cfg any, v Value) error {
		c, ok := cfg.(*C)
		if !ok {
			return fmt.Errorf("%w: %s sets a %T, not a %T", ErrOption, name, (*C)(nil), cfg)
		}
		set(c, v)
		return nil
	}}
}

// String is a non-empty string.
func (of Of[C]) String(name string, set func(*C, string)) Option {
	return of.row(name, TypeString, func(c *C, v Value) { set(c, v.String) })
}

// Enum is a string that is one of vals.
func (of Of[C]) Enum(name string, vals []string, set func(*C, string)) Option {
	o := of.String(name, set)
	o.Enum = vals
	return o
}

// URL is an endpoint of one of schemes, without credentials, query or
// fragment.
func (of Of[C]) URL(name string, schemes []string, set func(*C, string)) Option {
	o := of.String(name, set)
	o.Schemes = schemes
	return o
}

// Env is the name of the environment variable that holds the key.
func (of Of[C]) Env(name string, set func(*C, string)) Option {
	return of.row(name, TypeEnv, func(c *C, v Value) { set(c, v.String) })
}

// Bool is true or false.
func (of Of[C]) Bool(name string, set func(*C, bool)) Option {
	return of.row(name, TypeBool, func(c *C, v Value) { set(c, v.Bool) })
}

// Int is an integer within lo..hi.
func (of Of[C]) Int(name string, lo, hi int, set func(*C, int)) Option {
	o := of.row(name, TypeInt, func(c *C, v Value) { set(c, int(v.Int)) })
	o.Bounded, o.Min, o.Max = true, float64(lo), float64(hi)
	return o
}

// OneOfInt is an integer that is one of vals (sample rates).
func (of Of[C]) OneOfInt(name string, vals []int, set func(*C, int)) Option {
	o := of.row(name, TypeInt, func(c *C, v Value) { set(c, int(v.Int)) })
	for _, x := range vals {
		o.Values = append(o.Values, int64(x))
	}
	return o
}

// Float is a number within lo..hi.
func (of Of[C]) Float(name string, lo, hi float64, set func(*C, float64)) Option {
	o := of.row(name, TypeFloat, func(c *C, v Value) { set(c, v.Float) })
	o.Bounded, o.Min, o.Max = true, lo, hi
	return o
}

// Duration is a duration within lo..hi.
func (of Of[C]) Duration(name string, lo, hi time.Duration, set func(*C, time.Duration)) Option {
	o := of.row(name, TypeDuration, func(c *C, v Value) { set(c, v.Duration) })
	o.MinDuration, o.MaxDuration = lo, hi
	return o
}

// Ints is a list of integers, each within lo..hi.
func (of Of[C]) Ints(name string, lo, hi int, set func(*C, []int)) Option {
	o := of.row(name, TypeInts, func(c *C, v Value) {
		out := make([]int, len(v.Ints))
		for i, x := range v.Ints {
			out[i] = int(x)
		}
		set(c, out)
	})
	o.Bounded, o.Min, o.Max = true, float64(lo), float64(hi)
	return o
}

// Strings is a list of strings.
func (of Of[C]) Strings(name string, set func(*C, []string)) Option {
	return of.row(name, TypeStrings, func(c *C, v Value) { set(c, slices.Clone(v.Strings)) })
}

// Timeout is an I/O bound of an adapter, 0 to MaxTimeout, with its
// default.
func (of Of[C]) Timeout(name string, def time.Duration, set func(*C, time.Duration)) Option {
	return of.Duration(name, 0, MaxTimeout, set).WithDefault(def)
}

// Bounds the vendors' tables share.
const (
	// MaxTimeout bounds an I/O timeout in a file.
	MaxTimeout = 5 * time.Minute
	// MaxTokens bounds a token count.
	MaxTokens = 1_000_000
	// MaxBuffer bounds a queue or channel size.
	MaxBuffer = 1 << 16
	// MaxBytes bounds a message or buffer size in bytes.
	MaxBytes = 64 << 20
)

// The warm-up probes, by what an adapter's Warm does (first: the
// default).

// WarmHTTP: an HTTP LLM GETs its model list or sends a one-token request.
func WarmHTTP() []string { return []string{"models", "request", "none"} }

// WarmConnect: a websocket adapter opens a connection.
func WarmConnect() []string { return []string{"connect", "none"} }

// WarmLoad: a local engine loads its model.
func WarmLoad() []string { return []string{"load", "none"} }

// WarmModels: an HTTP adapter GETs its model list.
func WarmModels() []string { return []string{"models", "none"} }

// WarmNothing: nothing to open.
func WarmNothing() []string { return []string{"none"} }

// IsEnvName tells whether s is an UPPER_SNAKE_CASE variable name.
func IsEnvName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// CheckURL checks an endpoint: one of schemes, a host, no credentials,
// query or fragment. It returns a message, or "" when it is fine.
func CheckURL(s string, schemes []string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	host, _, _ := strings.Cut(rest, "/")
	switch {
	case !ok || !slices.Contains(schemes, scheme):
		return "want a " + strings.Join(schemes, " or ") + " URL"
	case host == "" || strings.ContainsAny(host, " \t"):
		return "the URL has no host"
	case strings.Contains(host, "@"):
		return "the URL carries credentials (the value is not shown): name a key variable with api_key_env instead"
	case strings.ContainsAny(rest, "?#"):
		return "the URL must carry no query or fragment"
	}
	return ""
}
