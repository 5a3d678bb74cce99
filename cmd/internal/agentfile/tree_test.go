package agentfile

import (
	"fmt"
	"strings"
	"testing"
)

// collect reads data in format into a tree and the diagnostics of the
// reading.
func collect(format Format, data string) (*node, []string, bool) {
	var diags []string
	diag := func(pos Pos, path, msg, hint string) {
		diags = append(diags, fmt.Sprintf("%v %s: %s", pos, path, msg))
	}
	var root *node
	var ok bool
	if format == TOML {
		root, ok = readTOML([]byte(data), diag)
	} else {
		root, ok = readYAML([]byte(data), diag)
	}
	return root, diags, ok
}

// lookup walks a dotted path of table keys and list indexes ("a.b.2").
func lookup(t *testing.T, root *node, path string) (*entry, *node) {
	t.Helper()
	n := root
	var e *entry
	for _, part := range strings.Split(path, ".") {
		var i int
		if _, err := fmt.Sscanf(part, "%d", &i); err == nil && n.kind == kArray {
			n = n.items[i]
			e = nil
			continue
		}
		e = n.get(part)
		if e == nil {
			t.Fatalf("%s: no %q", path, part)
		}
		n = e.val
	}
	return e, n
}

// TestTreePositions pins the line:column of keys and values in both
// formats: every diagnostic's position comes from here.
// Mutation caught: the TOML value position taken from the key (or the
// array position from the KeyValue's start) instead of the value; YAML's
// key and value nodes swapped.
func TestTreePositions(t *testing.T) {
	cases := []struct {
		name   string
		format Format
		src    string
		path   string
		key    Pos // zero: not checked (list items)
		val    Pos
		kind   kind
	}{
		{"toml scalar", TOML, "a = 1\n  b   =   \"x\"\n", "b", Pos{2, 3}, Pos{2, 11}, kString},
		{"toml table key", TOML, "[llm]\nprovider = 'rules'\n", "llm.provider", Pos{2, 1}, Pos{2, 12}, kString},
		{"toml dotted header", TOML, "x = 1\n[transports.pcm]\nrate = 8000\n", "transports.pcm.rate", Pos{3, 1}, Pos{3, 8}, kInt},
		{"toml header table", TOML, "x = 1\n[transports.pcm]\nrate = 8000\n", "transports.pcm", Pos{2, 13}, Pos{2, 13}, kTable},
		{"toml array", TOML, "[tools]\nenabled =  [\"a\", \"b\"]\n", "tools.enabled", Pos{2, 1}, Pos{2, 12}, kArray},
		{"toml array item", TOML, "[tools]\nenabled = [\"a\",\n  \"b\"]\n", "tools.enabled.1", Pos{}, Pos{3, 3}, kString},
		{"toml multiline string", TOML, "prompt = \"\"\"\nhi\n\"\"\"\n", "prompt", Pos{1, 1}, Pos{1, 10}, kString},
		{"toml inline table", TOML, "stt = { provider = \"x\", model = 'm' }\n", "stt.model", Pos{1, 25}, Pos{1, 33}, kString},
		{"toml dotted key", TOML, "vad.engine = \"energy\"\n", "vad.engine", Pos{1, 5}, Pos{1, 14}, kString},
		{"toml float", TOML, "[vad]\nthreshold = 1_000.5\n", "vad.threshold", Pos{2, 1}, Pos{2, 13}, kFloat},
		{"toml hex int", TOML, "n = 0x10\n", "n", Pos{1, 1}, Pos{1, 5}, kInt},
		{"toml bool", TOML, "b = true\n", "b", Pos{1, 1}, Pos{1, 5}, kBool},
		{"toml date", TOML, "d = 1979-05-27\n", "d", Pos{1, 1}, Pos{1, 5}, kOther},
		{"yaml scalar", YAML, "a: 1\nb:    x\n", "b", Pos{2, 1}, Pos{2, 7}, kString},
		{"yaml nested", YAML, "llm:\n  provider: rules\n", "llm.provider", Pos{2, 3}, Pos{2, 13}, kString},
		{"yaml block", YAML, "prompt: |\n  hi\n", "prompt", Pos{1, 1}, Pos{1, 9}, kString},
		{"yaml flow list item", YAML, "tools:\n  enabled: [a,  b]\n", "tools.enabled.1", Pos{}, Pos{2, 17}, kString},
		{"yaml int", YAML, "n: 0x10\n", "n", Pos{1, 1}, Pos{1, 4}, kInt},
		{"yaml float", YAML, "f: 0.5\n", "f", Pos{1, 1}, Pos{1, 4}, kFloat},
		{"yaml null", YAML, "g:\n", "g", Pos{1, 1}, Pos{1, 3}, kNull},
		{"yaml off is a string", YAML, "after: off\n", "after", Pos{1, 1}, Pos{1, 8}, kString},
		{"yaml alias", YAML, "a: &x 5\nb: *x\n", "b", Pos{2, 1}, Pos{1, 4}, kInt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, diags, ok := collect(c.format, c.src)
			if !ok || len(diags) > 0 {
				t.Fatalf("read: ok=%v %v", ok, diags)
			}
			e, n := lookup(t, root, c.path)
			if c.key != (Pos{}) && e.keyPos != c.key {
				t.Errorf("key at %v, want %v", e.keyPos, c.key)
			}
			if n.pos != c.val || n.kind != c.kind {
				t.Errorf("value %s at %v, want %s at %v", n.kind.what(), n.pos, c.kind.what(), c.val)
			}
		})
	}
}

// TestTreeProblems pins what reading reports: syntax errors and
// duplicates at their line:column, in both formats.
// Mutation caught: the duplicate check in keyValue/header or in the YAML
// mapping removed (the second value silently wins), a syntax error placed
// at 1:1.
func TestTreeProblems(t *testing.T) {
	cases := []struct {
		name   string
		format Format
		src    string
		want   string // the first diagnostic, "line:col path: msg" prefix
		ok     bool
	}{
		{"toml syntax", TOML, "a = 1\nb = = 2\n", "2:5 : syntax error", false},
		{"toml unterminated string", TOML, "a = 1\nb = \"x\n", "2:", false},
		{"toml duplicate key", TOML, "[llm]\nprovider = 'a'\nprovider = 'b'\n", "3:1 llm.provider: defined twice: first at 2:1", true},
		{"toml duplicate table", TOML, "[llm]\nx = 1\n[llm]\n", "3:2 llm: defined twice: first at 1:2", true},
		{"toml dotted then header", TOML, "[a]\nb.c = 1\n[a.b]\n", "3:4 a.b: defined twice", true},
		{"toml key then table", TOML, "llm = 1\n[llm]\n", "2:2 llm: defined twice", true},
		{"toml inline extended", TOML, "stt = {provider = 'x'}\n[stt.more]\n", "2:2 stt: defined twice", true},
		{"toml huge int", TOML, "n = 99999999999999999999\n", "1:5 n: integer out of range", true},
		{"yaml syntax", YAML, "a: 1\nb: [1, 2\nc: 3\n", "", false},
		{"yaml duplicate key", YAML, "llm:\n  provider: a\n  provider: b\n", "3:3 llm.provider: defined twice: first at 2:3", true},
		{"yaml duplicate table", YAML, "llm: {}\nllm: {}\n", "2:1 llm: defined twice: first at 1:1", true},
		{"yaml second document", YAML, "a: 1\n---\nb: 2\n", "2:1 : a second document", true},
		{"yaml merge key", YAML, "a: &x {b: 1}\nc:\n  <<: *x\n", "3:3 c: merge keys", true},
		{"yaml complex key", YAML, "? [a]\n: 1\n", "1:3 : a key must be a plain name", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, diags, ok := collect(c.format, c.src)
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			if len(diags) == 0 {
				t.Fatalf("no diagnostic, want %q", c.want)
			}
			if !strings.HasPrefix(diags[0], c.want) {
				t.Errorf("got %q, want prefix %q", diags[0], c.want)
			}
		})
	}
}
