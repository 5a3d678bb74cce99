package docstest

import (
	"regexp"
	"strconv"
	"strings"
)

// Kind is what a citation names.
type Kind uint8

// The kinds of citation, told apart by the span's form (see the package
// doc).
const (
	// KindOther is any other span: not checked, but it names what it
	// holds for the reverse checks (a key cited as `model`).
	KindOther Kind = iota
	// KindName is a snake_case name the code must know.
	KindName
	// KindCounter is a name cited as a counter.
	KindCounter
	// KindMetric is a Prometheus metric, brisvox_...
	KindMetric
	// KindFlag is a command-line flag, --name.
	KindFlag
	// KindTable is an agent-file table, [table.sub].
	KindTable
	// KindKey is an agent-file key written as a setting, key = value.
	KindKey
	// KindTableKey is an agent-file key under its table, table.key.
	KindTableKey
	// KindPath is a path of the module's tree: a directory or file
	// under one of its top-level directories (a * matches as in a glob).
	KindPath
	// KindTest is a test, benchmark or fuzz target by its name
	// (TestX, BenchmarkX/sub, FuzzX).
	KindTest
	// KindGo is a Go name of a package of the module, pkg.Name (and
	// its fields or methods: pkg.Type.Field).
	KindGo
)

// String names the kind as the problems do.
func (k Kind) String() string {
	switch k {
	case KindName:
		return "name"
	case KindCounter:
		return "counter"
	case KindMetric:
		return "metric"
	case KindFlag:
		return "flag"
	case KindTable:
		return "agent-file table"
	case KindKey, KindTableKey:
		return "agent-file key"
	case KindGo:
		return "Go name"
	case KindPath:
		return "path"
	case KindTest:
		return "test"
	}
	return "unknown"
}

// Citation is one name a doc cites in backquotes.
type Citation struct {
	File string
	Line int
	// Span is the backquoted text, newlines made spaces.
	Span string
	Kind Kind
	// Name is what is cited: the metric, flag (without dashes), table
	// path, key, table.key or counter.
	Name string
	// Prefix: the name ended with * and stands for every name it starts.
	Prefix bool
	// Labels are a metric's labels as cited ({a,b}); nil when none.
	Labels []string
}

// Where is the citation's place, file:line.
func (c Citation) Where() string { return c.File + ":" + strconv.Itoa(c.Line) }

var (
	metricRe  = regexp.MustCompile(`brisvox_[a-z0-9_]*(\*)?(\{[a-z_, ]*\})?`)
	flagRe    = regexp.MustCompile(`(?:^|[\s(\[])--([a-z][a-z0-9-]*[a-z0-9])`)
	tableRe   = regexp.MustCompile(`^\[([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*)\]$`)
	settingRe = regexp.MustCompile(`^([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*) = \S`)
	// commandRe: a span that is a command line of ours, whose flags are
	// checked (a lone --flag is too); other programs' flags are not.
	commandRe  = regexp.MustCompile(`^(?:brisvox(?:-[a-z]+)? |(?:serve|check|sign|vad|sim|demo) -|go tool task [a-z:-]+ -- |--[a-z][a-z0-9-]*(?: [^-\s]\S*)?$)`)
	dottedRe   = regexp.MustCompile(`^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$`)
	snakeRe    = regexp.MustCompile(`^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$`)
	prefixRe   = regexp.MustCompile(`^[a-z][a-z0-9_]*_\*$`)
	wordRe     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	testRe     = regexp.MustCompile(`^((?:Test|Benchmark|Fuzz)[A-Z0-9][A-Za-z0-9_]*)(?:[/*(].*)?$`)
	pathRe     = regexp.MustCompile(`^(?:\./)?([a-z][a-z0-9_-]*(?:/[A-Za-z0-9_.*<>-]+)+)/?(?:\.\.\.)?$`)
	goNameRe   = regexp.MustCompile(`^[*&]?([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Z][A-Za-z0-9_]*)*)(?:\(.*\)|\{.*\}|\[.*\])?$`)
	fileExtRe  = regexp.MustCompile(`\.(go|md|toml|yaml|yml|json|wav|onnx|so|pcap|sh|txt|html|js|c|h)$`)
	countWords = map[string]bool{"count": true, "counts": true, "counted": true, "counting": true, "counter": true, "counters": true}
	// fillers may stand between a count word and the first span it
	// names ("counting it under a `stale_*` counter").
	fillers = map[string]bool{"it": true, "under": true, "a": true, "an": true, "the": true, "its": true, "as": true, "in": true, "and": true, "or": true, "too": true}
)

// Cite reads the citations of one Markdown file. Fenced code blocks are
// skipped; a code span does not cross a blank line or a table row.
func Cite(file, text string) []Citation {
	var out []Citation
	for _, b := range blocks(text) {
		out = append(out, citeBlock(file, b)...)
	}
	return append(out, fencedKeys(file, text)...)
}

// block is a paragraph (or one table row) of a Markdown file outside
// fenced code, with the line its text starts on.
type block struct {
	line int
	text string
}

// fencedKeyRe is a setting of an agent file in a fenced example,
// commented out or not.
var fencedKeyRe = regexp.MustCompile(`^\s*(?:#\s*)?([a-z][a-z0-9_]*)\s*[=:]`)

// fencedKeys are the keys the fenced examples set, as KindOther
// citations: they count for the reverse check of the keys and are not
// checked themselves (agentfile's TestDocs parses the examples).
func fencedKeys(file, text string) []Citation {
	var out []Citation
	fenced := false
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if m := fencedKeyRe.FindStringSubmatch(l); fenced && m != nil {
			out = append(out, Citation{File: file, Line: i + 1, Span: m[1], Kind: KindOther, Name: m[1]})
		}
	}
	return out
}

func blocks(text string) []block {
	var out []block
	var cur []string
	start, fenced := 0, false
	flush := func() {
		if len(cur) > 0 {
			out = append(out, block{start, strings.Join(cur, "\n")})
		}
		cur = nil
	}
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			fenced = !fenced
		case fenced:
		case t == "":
			flush()
		case strings.HasPrefix(t, "|"):
			flush()
			out = append(out, block{i + 1, l})
		default:
			if len(cur) == 0 {
				start = i + 1
			}
			cur = append(cur, l)
		}
	}
	flush()
	return out
}

// item is a span or a word or a punctuation mark of a block, in order.
type item struct {
	span  bool
	text  string
	line  int
	count bool // a span in counter context
}

func items(b block) []item {
	var out []item
	s, line := b.text, b.line
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == '`':
			n := run(s, i)
			end := closing(s, i+n, n)
			if end < 0 {
				i += n
				continue
			}
			body := s[i+n : end]
			out = append(out, item{span: true, text: strings.TrimSpace(strings.ReplaceAll(body, "\n", " ")), line: line})
			line += strings.Count(body, "\n")
			i = end + n
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			out = append(out, item{text: strings.ToLower(s[i:j]), line: line})
			i = j
		case c == ' ' || c == '\t':
			i++
		default:
			out = append(out, item{text: string(c), line: line})
			i++
		}
	}
	return out
}

func run(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closing finds the backtick run of exactly n that closes a span opened
// before from, or -1.
func closing(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '\'' || c == '-'
}

// markCounters marks the spans a count word names: after it, past a few
// fillers, a list of spans to the end of the clause; or a span right
// before "counter(s)".
func markCounters(its []item) {
	for i, it := range its {
		if it.span || !countWords[it.text] {
			continue
		}
		if (it.text == "counter" || it.text == "counters") && i > 0 && its[i-1].span {
			its[i-1].count = true
		}
		seen, skipped := false, 0
		for j := i + 1; j < len(its); j++ {
			n := its[j]
			switch {
			case n.span:
				its[j].count, seen = true, true
				continue
			case n.text == "," || n.text == "(" || n.text == ":" || n.text == "and" || n.text == "or":
				continue
			case !seen && fillers[n.text] && skipped < 3:
				skipped++
				continue
			}
			break
		}
	}
}

func citeBlock(file string, b block) []Citation {
	its := items(b)
	markCounters(its)
	var out []Citation
	for _, it := range its {
		if it.span {
			out = append(out, classify(file, it)...)
		}
	}
	return out
}

// classify turns one span into its citations.
func classify(file string, it item) []Citation {
	s := it.text
	mk := func(k Kind, name string) Citation {
		return Citation{File: file, Line: it.line, Span: s, Kind: k, Name: name}
	}
	var out []Citation
	for _, m := range metricRe.FindAllStringSubmatch(s, -1) {
		c := mk(KindMetric, strings.TrimSuffix(strings.SplitN(m[0], "{", 2)[0], "*"))
		c.Prefix = m[1] == "*"
		if m[2] != "" {
			for _, l := range strings.Split(strings.Trim(m[2], "{}"), ",") {
				c.Labels = append(c.Labels, strings.TrimSpace(l))
			}
		}
		out = append(out, c)
	}
	if len(out) > 0 {
		return out
	}
	if commandRe.MatchString(s) {
		for _, m := range flagRe.FindAllStringSubmatch(s, -1) {
			out = append(out, mk(KindFlag, m[1]))
		}
	}
	if len(out) > 0 {
		return out
	}
	if m := testRe.FindStringSubmatch(s); m != nil {
		c := mk(KindTest, m[1])
		c.Prefix = strings.HasPrefix(s[len(m[1]):], "*")
		return []Citation{c}
	}
	if m := pathRe.FindStringSubmatch(s); m != nil && !strings.Contains(s, "<") {
		p := strings.TrimSuffix(strings.TrimSuffix(m[1], "/..."), "/")
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return []Citation{mk(KindPath, p)}
		}
		dir, last := p[:i], p[i+1:]
		if g := goNameRe.FindStringSubmatch(last); g != nil {
			// A Go name of a package by its path: actors/vad.Scorer.
			return []Citation{mk(KindPath, dir+"/"+g[1]), mk(KindGo, g[1]+"."+g[2])}
		}
		return []Citation{mk(KindPath, p)}
	}
	if m := goNameRe.FindStringSubmatch(s); m != nil {
		return []Citation{mk(KindGo, m[1]+"."+m[2])}
	}
	if m := tableRe.FindStringSubmatch(s); m != nil {
		return []Citation{mk(KindTable, m[1])}
	}
	if m := settingRe.FindStringSubmatch(s); m != nil {
		if strings.Contains(m[1], ".") {
			return []Citation{mk(KindTableKey, m[1])}
		}
		return []Citation{mk(KindKey, m[1])}
	}
	if dottedRe.MatchString(s) && !fileExtRe.MatchString(s) {
		return []Citation{mk(KindTableKey, s)}
	}
	switch {
	case it.count && prefixRe.MatchString(s):
		c := mk(KindCounter, strings.TrimSuffix(s, "*"))
		c.Prefix = true
		return []Citation{c}
	case it.count && wordRe.MatchString(s):
		return []Citation{mk(KindCounter, s)}
	case prefixRe.MatchString(s):
		c := mk(KindName, strings.TrimSuffix(s, "*"))
		c.Prefix = true
		return []Citation{c}
	case snakeRe.MatchString(s):
		return []Citation{mk(KindName, s)}
	}
	return []Citation{mk(KindOther, s)}
}
