package agentfile

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// update rewrites docs/CONFIG.md's provider blocks from the option
// tables: go test ./cmd/internal/agentfile -run TestDocs -update
var update = flag.Bool("update", false, "rewrite the provider blocks of docs/CONFIG.md from the option tables")

func configPath() string { return filepath.Join("..", "..", "..", "docs", "CONFIG.md") }

// docBlock is the example block of a provider in docs/CONFIG.md, written
// from its option table: one line per option, its example (or default),
// and a comment with its range or values, its doc line and its default.
func docBlock(stage string, p providers.Options) string {
	type line struct{ set, note string }
	lines := []line{{set: TOML.Setting("provider", p.Vendor)}}
	for _, o := range p.List {
		shown := o.Example
		if shown == nil {
			shown = o.Default
		}
		if shown == nil {
			shown = sample(&o, &p)
		}
		set := o.Name + " = " + docValue(o, shown)
		if o.Aside {
			set = "# " + set
		}
		lines = append(lines, line{set, docNote(o, shown)})
	}
	// The comments line up, except after a line too long to wait for.
	const maxWidth = 40
	width := 0
	for _, l := range lines {
		if l.note != "" && len(l.set) <= maxWidth {
			width = max(width, len(l.set))
		}
	}
	var b strings.Builder
	b.WriteString("[" + stage + "]\n")
	for _, l := range lines {
		if l.note == "" {
			b.WriteString(l.set + "\n")
			continue
		}
		b.WriteString(l.set + strings.Repeat(" ", max(0, width-len(l.set))) + "  # " + l.note + "\n")
	}
	return b.String()
}

// docValue writes a value as TOML would; a whole number option of type
// number keeps its ".0" so that it reads as one.
func docValue(o providers.Option, v any) string {
	if x, ok := v.(float64); ok && o.Type == providers.TypeFloat && x == float64(int64(x)) {
		return fmt.Sprintf("%.1f", x)
	}
	if xs, ok := v.([]int); ok {
		v = ints64(xs)
	}
	return TOML.value(v)
}

// docNote is the comment of an option: its range or values, its doc
// line, its default.
func docNote(o providers.Option, shown any) string {
	var parts []string
	switch {
	case o.Required:
		parts = append(parts, "required")
	case len(o.Enum) > 0:
		parts = append(parts, strings.Join(o.Enum, ", "))
	case len(o.Values) > 0:
		parts = append(parts, joinInts(o.Values))
	case len(o.Schemes) > 0:
		parts = append(parts, strings.Join(o.Schemes, "/"))
	case o.Type == providers.TypeDuration:
		parts = append(parts, docDuration(o.MinDuration)+".."+docDuration(o.MaxDuration))
	case o.Bounded && o.Type == providers.TypeInts:
		parts = append(parts, "each "+docNum(o, o.Min)+".."+docNum(o, o.Max))
	case o.Bounded:
		parts = append(parts, docNum(o, o.Min)+".."+docNum(o, o.Max))
	}
	if o.Doc != "" {
		parts = append(parts, o.Doc)
	}
	note := strings.Join(parts, "; ")
	if o.Default == nil {
		return note
	}
	def := "default"
	if !equalValue(o.Default, shown) {
		def += " " + strings.Trim(docDefault(o), `"`)
	}
	if note == "" {
		return def
	}
	return note + " (" + def + ")"
}

// docDefault writes an option's default.
func docDefault(o providers.Option) string {
	switch x := o.Default.(type) {
	case int:
		return docNum(o, float64(x))
	case time.Duration:
		return docDuration(x)
	}
	return docValue(o, o.Default)
}

// docDuration writes a duration as a file would, zero as 0.
func docDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return durationString(d)
}

// docNum writes a bound; the sizes in bytes in KiB or MiB when whole.
func docNum(o providers.Option, x float64) string {
	n := int64(x)
	if strings.HasSuffix(o.Name, "_bytes") && float64(n) == x && n >= 1024 {
		switch {
		case n%(1<<20) == 0:
			return fmt.Sprintf("%d MiB", n>>20)
		case n%(1<<10) == 0:
			return fmt.Sprintf("%d KiB", n>>10)
		}
	}
	return fnum(x)
}

func equalValue(a, b any) bool {
	if xs, ok := a.([]int); ok {
		ys, ok := b.([]int)
		return ok && slices.Equal(xs, ys)
	}
	return a == b
}

func ints64(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// docBlocks finds the provider blocks of the Agent files section: for
// "stt deepgram", the text between its ```toml and ``` lines, and where
// it starts in the file.
func docBlocks(t *testing.T, doc string) map[string][2]int {
	t.Helper()
	start := strings.Index(doc, "\n## Agent files\n")
	if start < 0 {
		t.Fatal("no section Agent files")
	}
	end := len(doc)
	if i := strings.Index(doc[start+1:], "\n## "); i >= 0 {
		end = start + 1 + i
	}
	blocks := map[string][2]int{}
	for i := start; ; {
		j := strings.Index(doc[i:end], "```toml\n")
		if j < 0 {
			break
		}
		from := i + j + len("```toml\n")
		k := strings.Index(doc[from:end], "```")
		if k < 0 {
			break
		}
		block := doc[from : from+k]
		stage := strings.Trim(strings.SplitN(block, "\n", 2)[0], "[]")
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "provider = "); ok {
				blocks[stage+" "+strings.Trim(v, `"`)] = [2]int{from, from + k}
			}
		}
		i = from + k
	}
	return blocks
}

// TestDocs: docs/CONFIG.md's "Agent files" section shows each provider's
// block exactly as its option table writes it (every option, its range,
// its default) under a heading naming its key variable, and each block is
// a clean agent file once put in a minimal agent. With -update, the
// blocks are rewritten from the tables.
// Mutation caught: an option added to a provider's table without its
// line in the docs, a bound or default changed in a table and not in the
// docs, a key variable changed and not in the heading, a documented
// example that check would refuse (a range drifting).
func TestDocs(t *testing.T) {
	data, err := os.ReadFile(configPath())
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	blocks := docBlocks(t, doc)
	base := map[string]string{
		"stt": "[stt]\nprovider = \"pocketsphinx\"\n",
		"llm": "[llm]\nprovider = \"rules\"\n",
		"tts": "[tts]\nprovider = \"flite\"\n",
	}
	all := envWith("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY")
	type edit struct {
		at   [2]int
		text string
	}
	var edits []edit
	for _, g := range stages() {
		for _, p := range g.specs {
			t.Run(g.stage+"/"+p.Vendor, func(t *testing.T) {
				at, ok := blocks[g.stage+" "+p.Vendor]
				if !ok {
					t.Fatalf("no example block for %s %s", g.stage, p.Vendor)
				}
				heading := doc[:at[0]]
				heading = heading[strings.LastIndex(heading, "\n#### ")+1:]
				heading, _, _ = strings.Cut(heading, "\n")
				if !strings.HasPrefix(heading, "#### "+g.stage+": "+p.Vendor+" (") {
					t.Errorf("the block is under %q, not %s %s's heading", heading, g.stage, p.Vendor)
				}
				key := "no key"
				if p.Key != providers.NoKey {
					key = "key: `" + p.KeyEnv + "`"
				}
				if !strings.Contains(heading, key) {
					t.Errorf("the heading %q does not say %s", heading, key)
				}
				want := docBlock(g.stage, p)
				if got := doc[at[0]:at[1]]; got != want {
					if *update {
						edits = append(edits, edit{at, want})
					} else {
						t.Errorf("the block is not the table's (go test ./cmd/internal/agentfile -run TestDocs -update):\n got:\n%s\nwant:\n%s", got, want)
					}
				}
				src := "prompt = \"p\"\n"
				for _, s := range []string{"stt", "llm", "tts"} {
					if s == g.stage {
						src += want
					} else {
						src += base[s]
					}
				}
				src += "[transports.webrtc]\n"
				if _, ds := Parse("doc.toml", []byte(src), TOML, Options{LookupEnv: all}); len(ds) > 0 {
					t.Errorf("the example is refused:\n%s", ds)
				}
			})
		}
	}
	if len(edits) > 0 {
		slices.SortFunc(edits, func(a, b edit) int { return b.at[0] - a.at[0] })
		for _, e := range edits {
			doc = doc[:e.at[0]] + e.text + doc[e.at[1]:]
		}
		if err := os.WriteFile(configPath(), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d blocks of %s", len(edits), configPath())
	}
}

// TestDocsSettings: every key a table of an agent file knows is named in
// docs/CONFIG.md's Agent files section (the known keys are read from the
// hint of an unknown one, in each table).
// Mutation caught: a setting added to the walker without its row in the
// docs (the new [serve] or transport keys, say).
func TestDocsSettings(t *testing.T) {
	documented := settingNames(t)
	const bogus = "zzzzzzzzzz"
	for _, table := range []string{"", "stt", "llm", "tts", "vad", "turn", "fillers", "tools", "dtmf", "transports",
		"transports.webrtc", "transports.twilio", "transports.pcm", "transports.sip", "transports.sip.trunks.t", "serve", "outbound", "records", "tracing"} {
		src := "prompt = \"p\"\n"
		if table != "" {
			src = "[" + table + "]\n"
			switch table {
			case "stt":
				src += "provider = \"pocketsphinx\"\n"
			case "llm":
				src += "provider = \"rules\"\n"
			case "tts":
				src += "provider = \"flite\"\n"
			}
		}
		src += bogus + " = 1\n"
		_, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
		found := false
		for _, d := range ds {
			known, ok := strings.CutPrefix(d.Hint, "known: ")
			if !ok || !strings.HasSuffix(d.Path, bogus) {
				continue
			}
			found = true
			for _, k := range strings.Split(known, ", ") {
				if !documented[k] {
					t.Errorf("%s: %s is not in docs/CONFIG.md", table, k)
				}
			}
		}
		if !found {
			t.Errorf("%s: no unknown-key hint listing the known keys: %s", table, ds)
		}
	}
}
