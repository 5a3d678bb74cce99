package docstest

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Facts are what the code has, for Check.
type Facts struct {
	Code   *Code
	Config Config
	// ServeFlags are the flags of `brisvox serve`, every one of which the
	// docs must name.
	ServeFlags []string
	// Tree holds the module's paths (slash-separated, relative to its
	// root); a cited path whose first directory is one of Tops must be
	// in it. Nil: paths are not checked.
	Tree map[string]bool
	Tops map[string]bool
}

// Problem is one thing the docs and the code disagree on.
type Problem struct {
	// Where is file:line in a doc, or the code's site for a name the
	// docs miss.
	Where string
	What  string
}

func (p Problem) String() string { return p.Where + ": " + p.What }

// Check holds the citations to the facts, both ways for metrics, agent-file
// keys and serve flags. The problems come sorted.
func Check(cites []Citation, f Facts) []Problem {
	var out []Problem
	bad := func(c Citation, format string, args ...any) {
		out = append(out, Problem{Where: c.Where(), What: fmt.Sprintf("`%s`: ", c.Span) + fmt.Sprintf(format, args...)})
	}
	keys := f.Config.Keys()
	for _, c := range cites {
		switch c.Kind {
		case KindMetric:
			checkMetric(c, f.Code, bad)
		case KindFlag:
			if _, ok := f.Code.Flags[c.Name]; !ok {
				bad(c, "no command has a flag --%s", c.Name)
			}
		case KindTable:
			// A bracketed word the code writes as it is ("[redacted]")
			// is not a table.
			if _, ok := f.Config.Tables[c.Name]; !ok && !f.Code.Names[c.Span] {
				bad(c, "the agent file has no table [%s]", c.Name)
			}
		case KindKey:
			if _, ok := keys[c.Name]; !ok {
				bad(c, "no table of the agent file has a key %s", c.Name)
			}
		case KindTableKey:
			checkTableKey(c, f.Config, bad)
		case KindCounter:
			if !isCounter(c, f.Code) {
				bad(c, "cited as a counter, but nothing counts it%s", alike(c.Name, f.Code.Counters))
			}
		case KindGo:
			checkGo(c, f.Code, bad)
		case KindPath:
			checkPath(c, f, bad)
		case KindTest:
			if !f.Code.hasFunc(c.Name, c.Prefix) {
				bad(c, "no test, benchmark or fuzz target of that name")
			}
		case KindName:
			if !f.Code.knows(c.Name) && !isCounter(c, f.Code) {
				bad(c, "the code names nothing so%s", alike(c.Name, f.Code.Counters))
			}
		}
	}
	out = append(out, reverse(cites, f)...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Where != out[j].Where {
			return out[i].Where < out[j].Where
		}
		return out[i].What < out[j].What
	})
	return out
}

func checkMetric(c Citation, code *Code, bad func(Citation, string, ...any)) {
	if c.Prefix {
		for m := range code.Metrics {
			if strings.HasPrefix(m, c.Name) {
				return
			}
		}
		bad(c, "no metric starts so")
		return
	}
	m, ok := code.Metrics[c.Name]
	if !ok {
		bad(c, "no such metric is registered%s", alike(c.Name, metricNames(code)))
		return
	}
	if m.Labels == nil {
		return
	}
	for _, l := range c.Labels {
		if l != "agent" && !slices.Contains(m.Labels, l) {
			bad(c, "%s has no label %s (it has %s)", c.Name, l, strings.Join(append([]string{"agent"}, m.Labels...), ", "))
		}
	}
}

func metricNames(code *Code) map[string]string {
	out := map[string]string{}
	for n, m := range code.Metrics {
		out[n] = m.Where
	}
	return out
}

func checkTableKey(c Citation, cfg Config, bad func(Citation, string, ...any)) {
	i := strings.LastIndexByte(c.Name, '.')
	t, ok := cfg.Table(c.Name[:i])
	if !ok {
		return // not a table: a Go selector or a file, say
	}
	if !slices.Contains(cfg.Tables[t], c.Name[i+1:]) {
		bad(c, "the agent file's [%s] has no key %s", t, c.Name[i+1:])
	}
}

func isCounter(c Citation, code *Code) bool {
	if _, ok := code.Counters[c.Name]; ok && !c.Prefix {
		return true
	}
	for p := range code.CounterPrefixes {
		if strings.HasPrefix(c.Name, p) || c.Prefix && strings.HasPrefix(p, c.Name) {
			return true
		}
	}
	if c.Prefix {
		for n := range code.Counters {
			if strings.HasPrefix(n, c.Name) {
				return true
			}
		}
	}
	return false
}

// alike names up to three known names sharing the cited one's first
// word, as a hint.
func alike(name string, known map[string]string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(name, "brisvox_"), "_")
	var out []string
	for n := range known {
		if f, _, _ := strings.Cut(strings.TrimPrefix(n, "brisvox_"), "_"); f == first {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return ""
	}
	sort.Strings(out)
	if len(out) > 3 {
		out = out[:3]
	}
	return " (known alike: " + strings.Join(out, ", ") + ")"
}

// reverse lists the metrics, agent-file keys and serve flags no doc
// names.
func reverse(cites []Citation, f Facts) []Problem {
	metrics, flags, words := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range cites {
		switch c.Kind {
		case KindMetric:
			if !c.Prefix {
				metrics[c.Name] = true
			}
		case KindFlag:
			flags[c.Name] = true
		}
		// Every word of a span may name a key: `model`, `warm`,
		// `webrtc.enabled`, `hangover = "300ms"`, `[transports.sip]`.
		for _, w := range wordsRe.FindAllString(c.Span, -1) {
			words[w] = true
		}
	}
	var out []Problem
	for n, m := range f.Code.Metrics {
		if !metrics[n] {
			out = append(out, Problem{Where: m.Where, What: fmt.Sprintf("metric %s is registered but no doc names it", n)})
		}
	}
	for _, fl := range f.ServeFlags {
		if !flags[fl] {
			out = append(out, Problem{Where: "cmd/brisvox serve", What: fmt.Sprintf("flag --%s is not in the docs", fl)})
		}
	}
	for t, ks := range f.Config.Tables {
		for _, k := range ks {
			if !words[k] {
				out = append(out, Problem{Where: "agent file [" + t + "]", What: fmt.Sprintf("key %s is in no doc", k)})
			}
		}
	}
	return out
}

// knows: the code has the name, or builds it from a fixed start.
func (c *Code) knows(name string) bool {
	if c.Names[name] {
		return true
	}
	for p := range c.NamePrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}

// checkGo holds pkg.Name to a package of the module of that name: Name
// is declared at its top level, and each further part is a field or a
// method of the module (an embedded type's field may come from another
// package). A package name the module does not have (prometheus,
// testing) is not checked.
func checkGo(c Citation, code *Code, bad func(Citation, string, ...any)) {
	parts := strings.Split(c.Name, ".")
	pkg := parts[0]
	decls, ok := code.Decls[pkg]
	if !ok {
		return
	}
	if !decls[parts[1]] {
		var in []string
		for p, d := range code.Decls {
			if d[parts[1]] {
				in = append(in, p)
			}
		}
		sort.Strings(in)
		hint := ""
		if len(in) > 0 {
			hint = " (declared in " + strings.Join(in, ", ") + ")"
		}
		bad(c, "package %s declares no %s%s", pkg, parts[1], hint)
		return
	}
	for _, m := range parts[2:] {
		if !code.Members[pkg][m] && !member(code, m) {
			bad(c, "no field or method %s in the module", m)
		}
	}
}

func member(code *Code, name string) bool {
	for _, m := range code.Members {
		if m[name] {
			return true
		}
	}
	return false
}

// checkPath holds a cited path under one of the module's top-level
// directories to the tree (a * matches within one part).
func checkPath(c Citation, f Facts, bad func(Citation, string, ...any)) {
	top, _, _ := strings.Cut(c.Name, "/")
	if f.Tree == nil || !f.Tops[top] {
		return
	}
	if f.Tree[c.Name] {
		return
	}
	if strings.Contains(c.Name, "*") {
		for p := range f.Tree {
			if ok, _ := path.Match(c.Name, p); ok {
				return
			}
		}
	}
	bad(c, "no such file or directory in the module")
}

// hasFunc: some package declares the function name (or, for a prefix,
// one starting so).
func (c *Code) hasFunc(name string, prefix bool) bool {
	for _, d := range c.Decls {
		if d[name] {
			return true
		}
		if prefix {
			for n := range d {
				if strings.HasPrefix(n, name) {
					return true
				}
			}
		}
	}
	return false
}
