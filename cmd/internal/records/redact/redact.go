package redact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The built-in kinds, as Config.Kinds names them and the counts report them.
const (
	KindPhone = "phone"
	KindEmail = "email"
	KindCard  = "card"
	KindIBAN  = "iban"
	KindDOB   = "dob"
)

// Kinds lists the built-in kinds, the default of Config.Kinds.
var Kinds = []string{KindPhone, KindEmail, KindCard, KindIBAN, KindDOB}

// Pattern is a deployment's own kind of personal data: every match of
// Regexp (Go syntax, RE2) becomes "[Name]".
type Pattern struct {
	Name   string `json:"name" toml:"name"`
	Regexp string `json:"regexp" toml:"regexp"`
}

// Config chooses what is redacted.
type Config struct {
	// Kinds are the built-in kinds applied; nil or empty: all of them.
	Kinds []string
	// Patterns are applied first, before the built-in kinds, so a
	// deployment's pattern (an account number shape, say) wins over the
	// phone rule on the same digits.
	Patterns []Pattern
}

var patternName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// Validate checks the kinds and compiles the patterns.
func (c Config) Validate() error {
	_, err := c.compile()
	return err
}

func (c Config) compile() ([]compiled, error) {
	seen := map[string]bool{}
	for _, k := range c.Kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("%w: unknown kind %q (the kinds are %s)", ErrInvalidConfig, k, strings.Join(Kinds, ", "))
		}
		if seen[k] {
			return nil, fmt.Errorf("%w: kind %q is listed twice", ErrInvalidConfig, k)
		}
		seen[k] = true
	}
	names := map[string]bool{}
	var out []compiled
	for i, p := range c.Patterns {
		if !patternName.MatchString(p.Name) {
			return nil, fmt.Errorf("%w: pattern %d: name %q must be 1-32 of a-z, 0-9, _ and -, starting with a letter (it becomes the replacement [name])", ErrInvalidConfig, i+1, p.Name)
		}
		if slices.Contains(Kinds, p.Name) || names[p.Name] {
			return nil, fmt.Errorf("%w: pattern %q: the name is already a kind or another pattern's; give it its own", ErrInvalidConfig, p.Name)
		}
		names[p.Name] = true
		if p.Regexp == "" {
			return nil, fmt.Errorf("%w: pattern %q has no regexp", ErrInvalidConfig, p.Name)
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("%w: pattern %q does not compile: %v", ErrInvalidConfig, p.Name, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("%w: pattern %q matches the empty string; make it match at least one character", ErrInvalidConfig, p.Name)
		}
		out = append(out, compiled{name: p.Name, re: re, repl: "[" + p.Name + "]"})
	}
	return out, nil
}

type compiled struct {
	name string
	re   *regexp.Regexp
	repl string
}

// Redactor replaces personal data in text and JSON. It holds no mutable
// state: one Redactor serves every call of a node concurrently.
type Redactor struct {
	phone, email, card, iban, dob bool
	patterns                      []compiled
}

// New builds a Redactor (ErrInvalidConfig).
func New(cfg Config) (*Redactor, error) {
	pats, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = Kinds
	}
	return &Redactor{
		phone:    slices.Contains(kinds, KindPhone),
		email:    slices.Contains(kinds, KindEmail),
		card:     slices.Contains(kinds, KindCard),
		iban:     slices.Contains(kinds, KindIBAN),
		dob:      slices.Contains(kinds, KindDOB),
		patterns: pats,
	}, nil
}

// counts is the tally of one String or JSON call; nil until something is
// replaced, so text without personal data costs no map.
type counts map[string]int

func (c *counts) add(kind string, n int) {
	if n == 0 {
		return
	}
	if *c == nil {
		*c = map[string]int{}
	}
	(*c)[kind] += n
}

// String returns s with every match replaced by "[kind]" ("call me at
// [phone]") and the number of replacements by kind (nil: none). The
// order is the configured patterns, then email, IBAN, date of birth,
// card and phone: each later kind sees the earlier ones' replacements.
func (r *Redactor) String(s string) (string, map[string]int) {
	var c counts
	r.redact(&s, &c)
	return s, c
}

func (r *Redactor) redact(s *string, c *counts) {
	var n int
	for _, p := range r.patterns {
		*s, n = replaceAll(*s, p.re, p.repl)
		c.add(p.name, n)
	}
	if r.email {
		*s, n = redactEmail(*s)
		c.add(KindEmail, n)
	}
	if r.iban {
		*s, n = redactIBAN(*s)
		c.add(KindIBAN, n)
	}
	if r.dob {
		*s, n = redactDOB(*s)
		c.add(KindDOB, n)
	}
	if r.card || r.phone {
		var nc, np int
		*s, nc, np = redactDigits(*s, r.card, r.phone)
		c.add(KindCard, nc)
		c.add(KindPhone, np)
		*s, nc, np = redactSpokenDigits(*s, r.card, r.phone)
		c.add(KindCard, nc)
		c.add(KindPhone, np)
	}
}

// replaceAll replaces every non-empty match of re in s with repl.
func replaceAll(s string, re *regexp.Regexp, repl string) (string, int) {
	locs := re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last, n := 0, 0
	for _, l := range locs {
		if l[0] == l[1] {
			continue
		}
		b.WriteString(s[last:l[0]])
		b.WriteString(repl)
		last = l[1]
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// spans collects the byte ranges of s to replace, in order and not
// overlapping, and writes the result once.
type spans struct {
	s     string
	b     strings.Builder
	last  int
	count int
}

func (p *spans) replace(from, to int, repl string) {
	if p.count == 0 {
		p.b.Grow(len(p.s))
	}
	p.b.WriteString(p.s[p.last:from])
	p.b.WriteString(repl)
	p.last = to
	p.count++
}

func (p *spans) result() (string, int) {
	if p.count == 0 {
		return p.s, 0
	}
	p.b.WriteString(p.s[p.last:])
	return p.b.String(), p.count
}
