package agentfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// yamlLine finds the line yaml.v3 gives in its error messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlReader builds the tree of a YAML document.
type yamlReader struct {
	lines lineIndex
	diag  func(pos Pos, path, msg, hint string)
	nodes int
	deep  bool // the nesting diagnostic was given
}

// readYAML reads the first document of data into a tree; syntax errors,
// duplicate keys and what the tree cannot hold go to diag. ok is false
// when the document could not be read.
func readYAML(data []byte, diag func(pos Pos, path, msg, hint string)) (root *node, ok bool) {
	r := &yamlReader{lines: newLineIndex(data), diag: diag}
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
	if root.kind == kNull {
		root = &node{kind: kTable, pos: root.pos}
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

// syntax reports a parse error at the line the message names.
func (r *yamlReader) syntax(err error) {
	msg := err.Error()
	pos := r.lines.pos(r.lines.size - 1)
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if line, e := strconv.Atoi(m[1]); e == nil {
			pos = r.clamp(Pos{line, 1})
		}
		msg = m[2]
	}
	r.diag(pos, "", "syntax error: "+msg, "")
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
			r.diag(pos, "", fmt.Sprintf("values nested more than %d levels deep", maxDepth), "")
		}
		return &node{kind: kOther, pos: pos}
	}
	if r.nodes > maxNodes {
		if r.nodes == maxNodes+1 {
			r.diag(pos, path, "too many values (aliases expand to more than the file can hold)", "")
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
				r.diag(kpos, path, "a key must be a plain name", "")
				continue
			}
			if k.Tag == "!!merge" {
				r.diag(kpos, path, "merge keys (<<) are not supported", "write the settings out")
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
		r.diag(pos, path, "integer out of range", "")
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return &node{kind: kFloat, pos: pos, f: f}
		}
		r.diag(pos, path, "number out of range", "")
	}
	return &node{kind: kOther, pos: pos, str: n.Value}
}
