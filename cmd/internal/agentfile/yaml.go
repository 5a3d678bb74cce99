package agentfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlLine finds the line yaml.v3 gives in its error messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlReader builds the tree of a YAML document.
type yamlReader struct {
	data  []byte
	lines lineIndex
	diag  func(pos Pos, path, msg, hint string)
	nodes int
	deep  bool // the nesting diagnostic was given
}

// readYAML reads the first document of data into a tree; syntax errors,
// duplicate keys and what the tree cannot hold go to diag. ok is false
// when the document could not be read.
func readYAML(data []byte, diag func(pos Pos, path, msg, hint string)) (root *node, ok bool) {
	r := &yamlReader{data: data, lines: newLineIndex(data), diag: diag}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := r.decode(dec, &doc)
	if errors.Is(err, io.EOF) {
		return &node{kind: kTable, pos: Pos{1, 1}}, true
	}
	if err != nil {
		r.syntax(err)
		return &node{kind: kTable, pos: Pos{1, 1}}, false
	}
	var extra yaml.Node
	switch err := r.decode(dec, &extra); {
	case err == nil:
		diag(r.clamp(Pos{extra.Line, extra.Column}), "", "a second document: an agent file holds one", "remove the line '---' and what follows it")
	case !errors.Is(err, io.EOF):
		r.syntax(err)
	}
	root = r.value(&doc, "", 0)
	switch root.kind {
	case kNull:
		root = &node{kind: kTable, pos: root.pos}
	case kTable:
	default:
		diag(root.pos, "", "the file holds "+root.kind.what()+", not settings",
			"a YAML setting is key: value, one a line, e.g. "+YAML.Setting("prompt", "You are the phone assistant of ..."))
		return &node{kind: kTable, pos: root.pos}, false
	}
	return root, true
}

// decode is dec.Decode with a panic of the decoder turned into an error:
// bad input must never end the process.
func (r *yamlReader) decode(dec *yaml.Decoder, v *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml: the parser failed: %v", p)
		}
	}()
	return dec.Decode(v)
}

// syntax reports a parse error at the line the message names (yaml.v3
// leaves the line out when it is the first), with a hint by its kind.
func (r *yamlReader) syntax(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	pos := Pos{1, 1}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		if line, e := strconv.Atoi(m[1]); e == nil {
			pos = r.clamp(Pos{line, 1})
		}
		msg = m[2]
	}
	if tab, ok := r.tabNear(pos.Line); ok && (strings.Contains(msg, "tab") || strings.Contains(msg, "cannot start any token")) {
		r.diag(tab, "", "syntax error: a tab ("+msg+")", "YAML indents with spaces, never tabs: replace the tab with spaces")
		return
	}
	hint := yamlSyntaxHint(msg)
	if strings.Contains(msg, "mapping values are not allowed") {
		if key, val := r.lineKey(pos.Line); key != "" && val != "" && !looksSecret(val) && len(val) <= 40 {
			hint = "a value holding ': ' goes in quotes, e.g. " + YAML.Setting(key, val)
		}
	}
	r.diag(pos, "", "syntax error: "+msg, hint)
}

// lineKey is the key and value of a "key: value" line ("" if the line is
// not one).
func (r *yamlReader) lineKey(line int) (key, val string) {
	if line < 1 || line > len(r.lines.starts) {
		return "", ""
	}
	start := r.lines.starts[line-1]
	end := len(r.data)
	if line < len(r.lines.starts) {
		end = r.lines.starts[line] - 1
	}
	k, v, ok := strings.Cut(string(r.data[start:end]), ": ")
	k = strings.TrimSpace(k)
	if !ok || !validKey(k) || k == "" {
		return "", ""
	}
	return k, strings.TrimSpace(v)
}

// tabNear is the first tab in the leading blanks of the line given, the
// next or the one before (yaml.v3 names a neighbour at times).
func (r *yamlReader) tabNear(line int) (Pos, bool) {
	for _, l := range []int{line, line + 1, line - 1} {
		if l < 1 || l > len(r.lines.starts) {
			continue
		}
		start := r.lines.starts[l-1]
		for i := start; i < len(r.data) && r.data[i] != '\n'; i++ {
			if r.data[i] == '\t' {
				return r.lines.pos(i), true
			}
			if r.data[i] != ' ' && r.data[i] != '-' {
				break
			}
		}
	}
	return Pos{}, false
}

// yamlSyntaxHint says what a yaml.v3 syntax error usually means.
func yamlSyntaxHint(msg string) string {
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		return "a value holding ': ' goes in quotes, e.g. " + YAML.Setting("greeting", "Hello: how can I help?")
	case strings.Contains(msg, "did not find expected key"), strings.Contains(msg, "did not find expected '-'"),
		strings.Contains(msg, "block mapping"), strings.Contains(msg, "block collection"):
		return "check the indent: the keys of one table start in the same column, indented with spaces under the table's name"
	case strings.Contains(msg, "',' or ']'"):
		return "a list is not closed: end it with ] on the same line, e.g. " + YAML.Setting("enabled", []string{"get_time", "end_call"})
	case strings.Contains(msg, "',' or '}'"):
		return "a table written inline is not closed: end it with }, e.g. " + YAML.In("stt", "provider", "deepgram")
	case strings.Contains(msg, "end of stream"), strings.Contains(msg, "quoted scalar"):
		return "a quote or a bracket is not closed: close it on the same value"
	case strings.Contains(msg, "escape"):
		return `in "double quotes" a backslash starts an escape: write \\ for one, or use 'single quotes'`
	case strings.Contains(msg, "could not find expected ':'"):
		return "write each setting as key: value, e.g. " + YAML.Setting("provider", "flite")
	case strings.Contains(msg, "the parser failed"):
		return "the file could not be read as YAML: look at the line for an unclosed quote or bracket"
	}
	return "a YAML setting is key: value, nested keys indented with spaces under their table, e.g. " + YAML.In("stt", "provider", "deepgram")
}

// clamp keeps a position inside the input (yaml.v3 counts a lone '\r' as
// a line break, and may point one past the end).
func (r *yamlReader) clamp(p Pos) Pos {
	if r.lines.inside(p) {
		return p
	}
	if p.Line >= 1 && p.Line <= len(r.lines.starts) {
		return Pos{p.Line, 1}
	}
	return r.lines.pos(r.lines.size - 1)
}

// value converts a node; path names it in diagnostics.
func (r *yamlReader) value(n *yaml.Node, path string, depth int) *node {
	r.nodes++
	pos := r.clamp(Pos{n.Line, n.Column})
	if depth > maxDepth {
		if !r.deep {
			r.deep = true
			r.diag(pos, "", fmt.Sprintf("values nested more than %d levels deep", maxDepth), nestedHint)
		}
		return &node{kind: kOther, pos: pos}
	}
	if r.nodes > maxNodes {
		if r.nodes == maxNodes+1 {
			r.diag(pos, path, "too many values (aliases expand to more than the file can hold)", "write the values out instead of repeating aliases (*name)")
		}
		return &node{kind: kOther, pos: pos}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &node{kind: kNull, pos: pos}
		}
		return r.value(n.Content[0], path, depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return &node{kind: kOther, pos: pos}
		}
		v := r.value(n.Alias, path, depth+1)
		return v
	case yaml.SequenceNode:
		arr := &node{kind: kArray, pos: pos}
		for i, c := range n.Content {
			arr.items = append(arr.items, r.value(c, path+"["+strconv.Itoa(i)+"]", depth+1))
		}
		return arr
	case yaml.MappingNode:
		t := &node{kind: kTable, pos: pos}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kpos := r.clamp(Pos{k.Line, k.Column})
			if k.Kind != yaml.ScalarNode {
				r.diag(kpos, path, "a key must be a plain name", "write the key as a name, e.g. "+YAML.Setting("provider", "flite"))
				continue
			}
			if k.Tag == "!!merge" {
				r.diag(kpos, path, "merge keys (<<) are not supported", "write the settings out, e.g. "+YAML.Setting("provider", "deepgram"))
				continue
			}
			p := join(path, k.Value)
			if prev := t.get(k.Value); prev != nil {
				r.diag(kpos, p, "defined twice: first at "+prev.keyPos.String(), "keep one of the two")
				continue
			}
			t.add(k.Value, kpos, r.value(v, p, depth+1))
		}
		return t
	case yaml.ScalarNode:
		return r.scalar(n, pos, path)
	}
	return &node{kind: kOther, pos: pos}
}

// scalar converts a scalar by its resolved tag.
func (r *yamlReader) scalar(n *yaml.Node, pos Pos, path string) *node {
	switch n.ShortTag() {
	case "!!str":
		return &node{kind: kString, pos: pos, str: n.Value}
	case "!!null":
		return &node{kind: kNull, pos: pos}
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return &node{kind: kBool, pos: pos, b: b}
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return &node{kind: kInt, pos: pos, i: i}
		}
		r.diag(pos, path, "integer out of range", intRangeHint)
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return &node{kind: kFloat, pos: pos, f: f}
		}
		r.diag(pos, path, "number out of range", floatRangeHint)
	}
	return &node{kind: kOther, pos: pos, str: n.Value}
}
