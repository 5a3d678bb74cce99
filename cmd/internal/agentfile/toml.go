package agentfile

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlReader builds the tree of a TOML document.
type tomlReader struct {
	p     unstable.Parser
	data  []byte
	diag  func(pos Pos, path, msg, hint string)
	nodes int
	lines lineIndex
	deep  bool // the nesting diagnostic was given
}

// readTOML reads data into a tree; syntax errors and duplicate keys or
// tables go to diag. ok is false when the document could not be read to
// its end (the tree then holds what came before the error).
func readTOML(data []byte, diag func(pos Pos, path, msg, hint string)) (root *node, ok bool) {
	r := &tomlReader{data: data, diag: diag, lines: newLineIndex(data)}
	r.p.Reset(data)
	root = &node{kind: kTable, pos: Pos{1, 1}}
	current, currentPath := root, ""
	bad := 0 // diagnostics from the tree itself
	count := func(pos Pos, path, msg, hint string) { bad++; diag(pos, path, msg, hint) }
	r.diag = count
	for r.p.NextExpression() {
		e := r.p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			r.keyValue(current, e, currentPath, 0)
		case unstable.Table:
			current, currentPath = r.header(root, e, false)
		case unstable.ArrayTable:
			current, currentPath = r.header(root, e, true)
		}
	}
	if err := r.p.Error(); err != nil {
		var perr *unstable.ParserError
		pos := r.end()
		msg := err.Error()
		if errors.As(err, &perr) {
			pos = r.at(perr.Highlight)
			msg = perr.Message
		}
		diag(pos, "", "syntax error: "+msg, r.syntaxHint(msg, pos))
		return root, false
	}
	if bad == 0 {
		// The full decoder knows TOML's every rule; what the tree above
		// let through (a table reopened in a way it did not foresee) is
		// still reported, at the decoder's position.
		var v map[string]any
		if err := toml.Unmarshal(data, &v); err != nil {
			var de *toml.DecodeError
			pos := r.end()
			if errors.As(err, &de) {
				row, col := de.Position()
				pos = r.clamp(Pos{row, col})
			}
			diag(pos, "", "invalid TOML: "+err.Error(), "define each table and key once: merge the two parts into one table")
			return root, false
		}
	}
	return root, true
}

// at is the position of a slice of the input (its start); the end of the
// input when it is not one.
func (r *tomlReader) at(b []byte) Pos {
	off := cap(r.data) - cap(b)
	if b == nil || off < 0 || off > len(r.data) {
		return r.end()
	}
	return r.offset(off)
}

// offset is the position of a byte offset.
func (r *tomlReader) offset(off int) Pos {
	return r.lines.pos(off)
}

// end is the position of the input's last byte (1:1 when empty).
func (r *tomlReader) end() Pos {
	if len(r.data) == 0 {
		return Pos{1, 1}
	}
	return r.offset(len(r.data) - 1)
}

// clamp keeps a position from elsewhere inside the input.
func (r *tomlReader) clamp(p Pos) Pos {
	if !r.lines.inside(p) {
		return r.end()
	}
	return p
}

// rangePos is the position of a node's raw range.
func (r *tomlReader) rangePos(rg unstable.Range) Pos {
	if int(rg.Offset) > len(r.data) {
		return r.end()
	}
	return r.offset(int(rg.Offset))
}

// keyParts are the parts of a dotted key with their positions.
type keyPart struct {
	name string
	pos  Pos
	end  int // offset just past the part
}

func (r *tomlReader) keyParts(it unstable.Iterator) []keyPart {
	var parts []keyPart
	for it.Next() {
		k := it.Node()
		parts = append(parts, keyPart{name: string(k.Data), pos: r.rangePos(k.Raw), end: int(k.Raw.Offset + k.Raw.Length)})
	}
	return parts
}

// join names a key path.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// header opens the table of a [header] or [[header]], from the root, and
// names its path.
func (r *tomlReader) header(root *node, e *unstable.Node, array bool) (*node, string) {
	t, path := r.open(root, e, array)
	if t == nil {
		return &node{kind: kTable}, path // reported: its keys go nowhere
	}
	return t, path
}

// open finds or makes a header's table; nil when it cannot be one.
func (r *tomlReader) open(root *node, e *unstable.Node, array bool) (*node, string) {
	parts := r.keyParts(e.Key())
	t := root
	path := ""
	for i, part := range parts {
		path = join(path, part.name)
		last := i == len(parts)-1
		ent := t.get(part.name)
		if ent == nil {
			n := &node{kind: kTable, pos: part.pos}
			if last && array {
				n = &node{kind: kArray, pos: part.pos, arrayTable: true}
				elem := &node{kind: kTable, pos: part.pos, explicit: true}
				n.items = append(n.items, elem)
				t.add(part.name, part.pos, n)
				return elem, path
			}
			n.explicit = last
			t.add(part.name, part.pos, n)
			t = n
			continue
		}
		v := ent.val
		switch {
		case v.kind == kArray && v.arrayTable:
			if last && array {
				elem := &node{kind: kTable, pos: part.pos, explicit: true}
				v.items = append(v.items, elem)
				return elem, path
			}
			if last {
				r.diag(part.pos, path, "defined twice: first as an array of tables at "+ent.keyPos.String(), "keep one of the two: an agent file has no [[arrays of tables]]")
				return nil, path
			}
			t = v.items[len(v.items)-1]
		case v.kind == kTable && !v.closed:
			if last && (array || v.explicit || v.dotted) {
				r.diag(part.pos, path, "defined twice: first at "+ent.keyPos.String(), "merge the two tables into one")
				return nil, path
			}
			if last {
				v.explicit = true
			}
			t = v
		default:
			r.diag(part.pos, path, "defined twice: first at "+ent.keyPos.String(), "keep one of the two")
			return nil, path
		}
	}
	return t, path
}

// keyValue adds key = value to table t, whose path is prefix.
func (r *tomlReader) keyValue(t *node, e *unstable.Node, prefix string, depth int) {
	parts := r.keyParts(e.Key())
	if len(parts) == 0 {
		return
	}
	path := prefix
	for i, part := range parts {
		path = join(path, part.name)
		ent := t.get(part.name)
		if i == len(parts)-1 {
			if ent != nil {
				r.diag(part.pos, path, "defined twice: first at "+ent.keyPos.String(), "keep one of the two")
				return
			}
			val := r.value(e.Value(), r.valueStart(part.end), path, depth)
			t.add(part.name, part.pos, val)
			return
		}
		if ent == nil {
			n := &node{kind: kTable, pos: part.pos, dotted: true}
			t.add(part.name, part.pos, n)
			t = n
			continue
		}
		if ent.val.kind != kTable || !ent.val.dotted || ent.val.closed {
			r.diag(part.pos, path, "defined twice: first at "+ent.keyPos.String(), "merge the two into one table")
			return
		}
		t = ent.val
	}
}

// valueStart is the position of the value after the key ending at off:
// past the '=' and the blanks around it. Arrays carry no range of their
// own in the unstable parser.
func (r *tomlReader) valueStart(off int) Pos {
	i := off
	for i < len(r.data) && (r.data[i] == ' ' || r.data[i] == '\t') {
		i++
	}
	if i < len(r.data) && r.data[i] == '=' {
		i++
	}
	for i < len(r.data) && (r.data[i] == ' ' || r.data[i] == '\t') {
		i++
	}
	if i >= len(r.data) {
		return r.end()
	}
	return r.offset(i)
}

// value converts a value node; at is its position when the node has no
// range of its own (arrays).
func (r *tomlReader) value(v *unstable.Node, at Pos, path string, depth int) *node {
	r.nodes++
	if !v.Valid() || r.nodes > maxNodes {
		return &node{kind: kOther, pos: at}
	}
	if depth > maxDepth {
		if !r.deep {
			r.deep = true
			r.diag(at, "", fmt.Sprintf("values nested more than %d levels deep", maxDepth), nestedHint)
		}
		return &node{kind: kOther, pos: at}
	}
	switch v.Kind {
	case unstable.String:
		return &node{kind: kString, pos: r.rangePos(v.Raw), str: string(v.Data)}
	case unstable.Bool:
		return &node{kind: kBool, pos: r.rangePos(v.Raw), b: string(v.Data) == "true"}
	case unstable.Integer:
		pos := r.rangePos(v.Raw)
		i, err := strconv.ParseInt(strings.ReplaceAll(string(v.Data), "_", ""), 0, 64)
		if err != nil {
			r.diag(pos, path, "integer out of range", intRangeHint)
			return &node{kind: kOther, pos: pos, str: string(v.Data)}
		}
		return &node{kind: kInt, pos: pos, i: i}
	case unstable.Float:
		pos := r.rangePos(v.Raw)
		s := strings.ReplaceAll(string(v.Data), "_", "")
		var f float64
		switch strings.TrimLeft(s, "+-") {
		case "inf":
			f = math.Inf(1)
			if s[0] == '-' {
				f = math.Inf(-1)
			}
		case "nan":
			f = math.NaN()
		default:
			var err error
			if f, err = strconv.ParseFloat(s, 64); err != nil {
				r.diag(pos, path, "number out of range", floatRangeHint)
				return &node{kind: kOther, pos: pos, str: s}
			}
		}
		return &node{kind: kFloat, pos: pos, f: f}
	case unstable.Array:
		arr := &node{kind: kArray, pos: at}
		it := v.Children()
		for i := 0; it.Next(); i++ {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			arr.items = append(arr.items, r.value(c, at, path+"["+strconv.Itoa(i)+"]", depth+1))
		}
		return arr
	case unstable.InlineTable:
		t := &node{kind: kTable, pos: r.rangePos(v.Raw), explicit: true}
		it := v.Children()
		for it.Next() {
			if c := it.Node(); c.Kind == unstable.KeyValue {
				r.keyValue(t, c, path, depth+1)
			}
		}
		markClosed(t)
		return t
	}
	return &node{kind: kOther, pos: r.rangePos(v.Raw), str: string(v.Data)}
}

// markClosed closes an inline table and the tables its dotted keys made.
func markClosed(t *node) {
	t.closed = true
	for _, e := range t.entries {
		if e.val.kind == kTable && e.val.dotted {
			markClosed(e.val)
		}
	}
}

// syntaxHint says what a syntax error at pos usually means, with the
// line's own key where it has one.
func (r *tomlReader) syntaxHint(msg string, pos Pos) string {
	key, val := r.lineKey(pos.Line)
	example := func(v any) string {
		if key == "" {
			return TOML.Setting("voice", "slt")
		}
		return TOML.Setting(key, v)
	}
	switch {
	case strings.Contains(msg, "strings must be quoted"), strings.Contains(msg, "at start of value"), strings.Contains(msg, "expected keyword"):
		if strings.EqualFold(val, "true") || strings.EqualFold(val, "false") {
			return "true and false are written in lower case, e.g. " + example(strings.EqualFold(val, "true"))
		}
		if val == "" || looksSecret(val) || len(val) > 40 || strings.ContainsAny(val, "\"'") {
			val = "..."
		}
		return "strings and durations go in double quotes, e.g. " + example(val)
	case strings.Contains(msg, "cannot have new lines"), strings.Contains(msg, "not terminated"):
		return `close the string with " on the same line; a text of several lines goes in triple quotes """..."""`
	case strings.Contains(msg, "expected '=' after key"):
		return "TOML sets a value with '=' (a YAML file is named .yaml), e.g. " + example("...")
	case strings.Contains(msg, "to close table name"), strings.Contains(msg, "to close array table name"):
		return "close the table name with ], e.g. [llm]"
	case strings.Contains(msg, "array"):
		return "close the list with ] and separate its items with commas, e.g. " + TOML.Setting(cmp.Or(key, "enabled"), []string{"get_time", "end_call"})
	case strings.Contains(msg, "inline table"):
		return "an inline table is closed with } on the same line, e.g. pcm = {rate = 16000}"
	case strings.Contains(msg, "escape"):
		return `in "double quotes" a backslash starts an escape: write \\ for one, or use 'single quotes' (a literal string)`
	case strings.Contains(msg, "expected newline"):
		return "one setting per line; a comment starts with #"
	case strings.Contains(msg, "start of key"):
		return "a key is a name of letters, digits, _ and -, e.g. " + TOML.Setting("voice", "slt")
	case strings.Contains(msg, "underscore"), strings.Contains(msg, "number"), strings.Contains(msg, "digit"):
		return "write the number plainly, e.g. " + TOML.Setting(cmp.Or(key, "rate"), 16000)
	}
	return `a TOML line is a table name such as [tts], a setting such as voice = "slt" (strings in double quotes), or a comment starting with #`
}

// lineKey is the key and raw value of a "key = value" line ("" if the
// line is not one).
func (r *tomlReader) lineKey(line int) (key, val string) {
	if line < 1 || line > len(r.lines.starts) {
		return "", ""
	}
	start := r.lines.starts[line-1]
	end := len(r.data)
	if line < len(r.lines.starts) {
		end = r.lines.starts[line] - 1
	}
	text := string(r.data[start:end])
	k, v, ok := strings.Cut(text, "=")
	if !ok {
		k, v, ok = strings.Cut(text, ":")
	}
	k = strings.TrimSpace(k)
	if !ok || k == "" || !validKey(k) {
		return "", ""
	}
	v, _, _ = strings.Cut(v, "#")
	return k, strings.TrimSpace(v)
}

// validKey tells whether s is a bare key of a setting.
func validKey(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return len(s) <= 64
}
