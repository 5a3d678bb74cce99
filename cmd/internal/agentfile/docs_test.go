package agentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocs: docs/CONFIG.md's "Agent files" section shows every option of
// every provider, and each provider's example block is a clean agent
// file once put in a minimal agent.
// Mutation caught: an option added to a provider's table without docs, a
// documented example that check would refuse (a range drifting).
func TestDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "CONFIG.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Agent files\n")
	if !ok {
		t.Fatal("no section Agent files")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := map[string]string{} // "llm openai" -> block
	for _, part := range strings.Split(section, "```toml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		stage := strings.Trim(strings.SplitN(block, "\n", 2)[0], "[]")
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "provider = "); ok {
				blocks[stage+" "+strings.Trim(v, `"`)] = block
			}
		}
	}
	base := map[string]string{
		"stt": "[stt]\nprovider = \"pocketsphinx\"\n",
		"llm": "[llm]\nprovider = \"rules\"\n",
		"tts": "[tts]\nprovider = \"flite\"\n",
	}
	all := envWith("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY")
	for _, g := range []struct {
		stage string
		specs []provSpec
	}{{"stt", sttProviders}, {"llm", llmProviders}, {"tts", ttsProviders}} {
		for _, p := range g.specs {
			t.Run(g.stage+"/"+p.name, func(t *testing.T) {
				block, ok := blocks[g.stage+" "+p.name]
				if !ok {
					t.Fatalf("no example block for %s %s", g.stage, p.name)
				}
				for _, o := range p.opts {
					if !strings.Contains(block, "\n"+o.name+" = ") && !strings.Contains(block, "# "+o.name+" = ") {
						t.Errorf("the block does not show %s", o.name)
					}
				}
				src := "prompt = \"p\"\n"
				for _, s := range []string{"stt", "llm", "tts"} {
					if s == g.stage {
						src += block
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
		"transports.webrtc", "transports.twilio", "transports.pcm", "transports.sip", "serve"} {
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
