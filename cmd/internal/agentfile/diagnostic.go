package agentfile

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Pos is a place in a file: 1-based line and column (columns count bytes
// in TOML, characters in YAML). The zero Pos is no place (a file that
// could not be read).
type Pos struct{ Line, Col int }

// String is "line:col".
func (p Pos) String() string { return strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Col) }

// Diagnostic is one problem of a file.
type Diagnostic struct {
	File      string
	Line, Col int
	// Path names the setting, as in "llm.temperature" or
	// "tools.enabled[1]"; empty for the file as a whole.
	Path string
	Msg  string
	// Hint says what to do, showing a setting in the file's own syntax
	// (Format.Setting). Every diagnostic of this package has one; one
	// made with File.Diag may not.
	Hint string
}

// Pos is the diagnostic's position.
func (d Diagnostic) Pos() Pos { return Pos{d.Line, d.Col} }

// String is "file:line:col: path: msg (hint: hint)", leaving out what is
// empty.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
	}
	b.WriteString(": ")
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	if d.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Diagnostics are a file's problems.
type Diagnostics []Diagnostic

// Sort orders the diagnostics by file and position (stable: two at one
// place keep their order).
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// Err is nil when there is no diagnostic, else an error wrapping
// ErrInvalid that lists them all, one per line, sorted.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	sorted := slices.Clone(ds)
	sorted.Sort()
	lines := make([]string, len(sorted))
	for i, d := range sorted {
		lines[i] = d.String()
	}
	return fmt.Errorf("%w: %d problem(s):\n%s", ErrInvalid, len(ds), strings.Join(lines, "\n"))
}

// String is the diagnostics one per line, in their order.
func (ds Diagnostics) String() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}
