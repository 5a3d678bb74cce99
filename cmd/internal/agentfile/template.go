package agentfile

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxVariableName bounds a placeholder's name, in bytes.
const maxVariableName = 64

// A placeholder {{name}} in the prompt, the greeting or
// outbound.greeting is replaced by a call's variable of that name (the
// per-call variables of POST /operator/calls). The name is ASCII
// letters, digits and '_', not starting with a digit, at most 64 bytes;
// there is no escape and no expression. A "{{" that does not start such
// a placeholder is refused where it is written, so a typo is never
// spoken as braces.

// placeholder is a well-formed {{name}} of a text: at is the byte offset
// of its "{{", end the offset just past its "}}".
type placeholder struct {
	at, end int
	name    string
}

// badPlaceholder is a "{{" that starts no well-formed placeholder: at is
// its byte offset; msg and hint say why and what to write.
type badPlaceholder struct {
	at        int
	msg, hint string
}

// scanTemplate finds the placeholders of text and the malformed ones, in
// order. A placeholder runs from a "{{" to the first "}}" after it.
func scanTemplate(text string) (ps []placeholder, bad []badPlaceholder) {
	for i := 0; ; {
		j := strings.Index(text[i:], "{{")
		if j < 0 {
			return ps, bad
		}
		at := i + j
		k := strings.Index(text[at+2:], "}}")
		if k < 0 {
			bad = append(bad, badPlaceholder{at: at, msg: `"{{" is not closed`, hint: `a placeholder is {{name}}, closed by "}}"; there is no escape: reword the text without "{{"`})
			return ps, bad
		}
		name := text[at+2 : at+2+k]
		end := at + 2 + k + 2
		if msg, hint := checkVariableName(name); msg != "" {
			bad = append(bad, badPlaceholder{at: at, msg: msg, hint: hint})
		} else {
			ps = append(ps, placeholder{at: at, end: end, name: name})
		}
		i = end
	}
}

// checkVariableName says what is wrong with a placeholder's name, and
// what to write ("" when it is good).
func checkVariableName(name string) (msg, hint string) {
	const rule = "a name is letters, digits and '_', not starting with a digit, e.g. {{first_name}}"
	switch {
	case name == "":
		return `empty placeholder "{{}}"`, "name the variable, e.g. {{first_name}}, or remove the braces"
	case len(name) > maxVariableName:
		return fmt.Sprintf("placeholder name of %d bytes, over %d", len(name), maxVariableName), "a variable's name is a word or two, e.g. {{first_name}}"
	case validVariableName(name):
		return "", ""
	case validVariableName(strings.TrimSpace(name)):
		return "placeholder " + showValue("{{"+name+"}}") + " has spaces around its name", "write {{" + strings.TrimSpace(name) + "}}, without spaces"
	}
	return "placeholder " + showValue("{{"+name+"}}") + " has a bad name", rule
}

// validVariableName: ASCII letters, digits and '_', not starting with a
// digit, 1 to 64 bytes.
func validVariableName(s string) bool {
	if s == "" || len(s) > maxVariableName || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Expand replaces each {{name}} of text by vars[name]. Values are
// inserted verbatim: a value holding "{{x}}" is not expanded again. A
// name without a variable is an error wrapping ErrMissingVariable that
// names every missing one (never a value); a malformed placeholder (a
// text the file's check did not read) wraps ErrPlaceholder. A text
// without placeholders comes back as it is.
func Expand(text string, vars map[string]string) (string, error) {
	ps, bad := scanTemplate(text)
	if len(bad) > 0 {
		return "", fmt.Errorf("%w: at byte %d: %s", ErrPlaceholder, bad[0].at, bad[0].msg)
	}
	if len(ps) == 0 {
		return text, nil
	}
	var missing []string
	seen := map[string]bool{}
	var b strings.Builder
	last := 0
	for _, p := range ps {
		v, ok := vars[p.name]
		if !ok {
			if !seen[p.name] {
				seen[p.name] = true
				missing = append(missing, p.name)
			}
			continue
		}
		b.WriteString(text[last:p.at])
		b.WriteString(v)
		last = p.end
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: %s", ErrMissingVariable, strings.Join(missing, ", "))
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// Variables are the names of the placeholders of the prompt, the
// greeting and outbound.greeting: sorted, each once; nil when there is
// none. A call's variables must hold at least these for Expand to
// succeed on all three.
func (f *File) Variables() []string {
	var out []string
	for _, text := range []string{f.Prompt.V, f.Greeting.V, f.Outbound.Greeting.V} {
		ps, _ := scanTemplate(text)
		for _, p := range ps {
			out = append(out, p.name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxPlaceholderReports bounds the malformed placeholders reported of
// one text: the first few say what to fix.
const maxPlaceholderReports = 10

// placeholders reports the malformed placeholders of a text setting (the
// first maxPlaceholderReports), each at its "{{" in the source.
func (w *walker) placeholders(v Value[string], path string) {
	if !v.Set {
		return
	}
	_, bad := scanTemplate(v.V)
	loc := w.locate(v)
	for i, b := range bad {
		if i == maxPlaceholderReports {
			break
		}
		w.at(loc.at(b.at), path, b.msg, b.hint)
	}
}

// textLocator finds the "{{" of a string value's text in the source:
// the same "{{" counted from the value's own position, where the source
// reads as the text does. Asked in increasing order, it reads the text
// and the source once.
type textLocator struct {
	w *walker
	v Value[string]
	// src is the source from the value's position (nil: not found).
	src []byte
	// seenText "{{" of the text are before byte text of it, and seenSrc
	// of the source before src[off:]; exhausted: src has no more.
	text, seenText int
	off, seenSrc   int
	exhausted      bool
}

// locate starts a textLocator for v.
func (w *walker) locate(v Value[string]) *textLocator {
	l := &textLocator{w: w, v: v}
	if start, ok := w.offsetOf(v.Pos); ok {
		l.src = w.data[start:]
	}
	return l
}

// at is the position of the "{{" at byte at of the text (at not below
// the previous call's), or the value's position when the source does
// not read as the text there (an escape or a YAML fold wrote it
// otherwise).
func (l *textLocator) at(at int) Pos {
	if l.src == nil || l.exhausted || at < l.text {
		return l.v.Pos
	}
	l.seenText += strings.Count(l.v.V[l.text:at], "{{")
	l.text = at
	// The source's next "{{" until as many were passed as in the text.
	for {
		j := bytes.Index(l.src[l.off:], []byte("{{"))
		if j < 0 {
			l.exhausted = true
			return l.v.Pos
		}
		if l.seenSrc == l.seenText {
			l.off += j
			break
		}
		l.off += j + 2
		l.seenSrc++
	}
	// The source must read as the text: "{{" and the name's characters.
	want := l.v.V[at:]
	n := 2
	for n < len(want) && n < 2+maxVariableName+2 && (want[n] == '_' || want[n] == '}' || want[n] >= '0' && want[n] <= '9' || want[n] >= 'a' && want[n] <= 'z' || want[n] >= 'A' && want[n] <= 'Z') {
		n++
	}
	if !bytes.HasPrefix(l.src[l.off:], []byte(want[:n])) {
		return l.v.Pos
	}
	return l.w.posOf(len(l.w.data) - len(l.src) + l.off)
}

// offsetOf is the byte offset of a position (columns count bytes in
// TOML, characters in YAML).
func (w *walker) offsetOf(p Pos) (int, bool) {
	if !w.lines.inside(p) {
		return 0, false
	}
	off := w.lines.starts[p.Line-1]
	if w.format != YAML {
		return off + p.Col - 1, true
	}
	for c := 1; c < p.Col; c++ {
		if off >= len(w.data) || w.data[off] == '\n' {
			return 0, false
		}
		_, size := utf8.DecodeRune(w.data[off:])
		off += size
	}
	return off, true
}

// posOf is the position of a byte offset, in the format's columns.
func (w *walker) posOf(off int) Pos {
	p := w.lines.pos(off)
	if w.format == YAML {
		p.Col = utf8.RuneCount(w.data[w.lines.starts[p.Line-1]:off]) + 1
	}
	return p
}
