package agentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// TestTables: every provider's option table is one a file can use: names
// unique and in snake_case, each default and example of its row's type
// and taken by the row's own check, the key variable and the endpoint
// option where the key rule needs them, "none" the last warm-up probe.
// Mutation caught: a default constant outside the bounds written beside
// it, an example of the wrong type, a table without its key variable.
func TestTables(t *testing.T) {
	for _, g := range stages() {
		for _, p := range g.specs {
			t.Run(g.stage+"/"+p.Vendor, func(t *testing.T) {
				seen := map[string]bool{}
				for _, o := range p.List {
					if seen[o.Name] || !validKey(o.Name) || strings.ToLower(o.Name) != o.Name {
						t.Errorf("option name %q is repeated or not snake_case", o.Name)
					}
					seen[o.Name] = true
					for what, v := range map[string]any{"default": o.Default, "example": o.Example} {
						if v == nil {
							continue
						}
						val, ok := valueOf(o.Type, v)
						if !ok {
							t.Errorf("%s: %s %v (%T) is not of type %s", o.Name, what, v, v, o.Type)
							continue
						}
						if err := o.Check(val); err != nil {
							t.Errorf("%s: %s refused by its own row: %v", o.Name, what, err)
						}
					}
				}
				switch {
				case p.Key != providers.NoKey && (p.KeyEnv == "" || !providers.IsEnvName(p.KeyEnv) || !seen["api_key_env"]):
					t.Errorf("key rule %d without a key variable or an api_key_env option", p.Key)
				case p.Key == providers.KeyUnlessURL && (p.URLOption == "" || !seen[p.URLOption] || p.DefaultURL == ""):
					t.Errorf("key unless URL without an endpoint option %q and its default", p.URLOption)
				case len(p.Warm) == 0 || p.Warm[len(p.Warm)-1] != "none":
					t.Errorf("warm-up probes %v do not end with none", p.Warm)
				}
			})
		}
	}
}

// valueOf is v as a Value of type ty, if v is of its Go type.
func valueOf(ty providers.Type, v any) (providers.Value, bool) {
	switch x := v.(type) {
	case string:
		return providers.Value{String: x}, ty == providers.TypeString || ty == providers.TypeEnv
	case int:
		return providers.Value{Int: int64(x)}, ty == providers.TypeInt
	case float64:
		return providers.Value{Float: x}, ty == providers.TypeFloat
	case bool:
		return providers.Value{Bool: x}, ty == providers.TypeBool
	case time.Duration:
		return providers.Value{Duration: x}, ty == providers.TypeDuration
	case []int:
		return providers.Value{Ints: ints64(x)}, ty == providers.TypeInts
	case []string:
		return providers.Value{Strings: x}, ty == providers.TypeStrings
	}
	return providers.Value{}, false
}

// TestEveryVendorListed: every vendor package under providers/stt,
// providers/llm and providers/tts (a folder named as the provider is in
// a file) is a provider of its stage in the schema. Mutation caught: a
// new adapter whose table nobody lists (a file could not name it).
func TestEveryVendorListed(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range Providers() {
		listed[p.Stage+"/"+p.Name] = true
	}
	n := 0
	for _, stage := range []string{"stt", "llm", "tts"} {
		dirs, err := os.ReadDir(filepath.Join("..", "..", "..", "providers", stage))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			if !d.IsDir() || d.Name() == "internal" {
				continue
			}
			n++
			if !listed[stage+"/"+d.Name()] {
				t.Errorf("providers/%s/%s is not a %s provider of the schema (schema.go)", stage, d.Name(), stage)
			}
		}
	}
	if n != len(listed) {
		t.Errorf("%d vendor folders, %d providers in the schema", n, len(listed))
	}
}

// probes are values around an option's bounds, as a file would write
// them: each edge, just past each edge, each allowed value and one that
// is not, a blank string, a bad variable name, a foreign URL.
func probes(o providers.Option) []any {
	switch o.Type {
	case providers.TypeInt:
		if len(o.Values) > 0 {
			out := []any{o.Values[0] + 1}
			for _, v := range o.Values {
				out = append(out, v)
			}
			return out
		}
		return []any{int64(o.Min), int64(o.Max), int64(o.Min) - 1, int64(o.Max) + 1}
	case providers.TypeFloat:
		return []any{o.Min, o.Max, o.Min - 0.01, o.Max + 0.01}
	case providers.TypeDuration:
		return []any{o.MinDuration, o.MaxDuration, o.MinDuration - time.Millisecond, o.MaxDuration + time.Millisecond}
	case providers.TypeString:
		switch {
		case len(o.Enum) > 0:
			return append([]any{"zzz"}, anys(o.Enum)...)
		case len(o.Schemes) > 0:
			var out []any
			for _, s := range o.Schemes {
				out = append(out, s+"://host.example.net/v1", s+"://u:p@host.example.net", s+"://host.example.net/?a=1")
			}
			return append(out, "ftp://host.example.net")
		}
		return []any{"x", " "}
	case providers.TypeEnv:
		return []any{"MY_KEY", "my_key", ""}
	case providers.TypeBool:
		return []any{true, false}
	case providers.TypeInts:
		return []any{[]int64{int64(o.Min), int64(o.Max)}, []int64{int64(o.Max) + 1}, []int64{int64(o.Min) - 1}}
	}
	return nil
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// TestWalkerChecksTheTable: for every option of every table and values
// around its bounds, the agent file's walker accepts exactly the values
// table's Check accepts (the row's bounds and the key rule), so what check
// says of a file is what the table says (the walker writes the diagnostics, the table holds the
// rules). Mutation caught: the walker comparing an option's bound with <
// for <=, or reading another field of the row than Check does.
func TestWalkerChecksTheTable(t *testing.T) {
	always := func(string) (string, bool) { return "set", true }
	bases := map[string]string{"stt": "[stt]\nprovider = \"pocketsphinx\"\n", "llm": "[llm]\nprovider = \"rules\"\n", "tts": "[tts]\nprovider = \"flite\"\n"}
	n := 0
	for _, g := range stages() {
		for _, p := range g.specs {
			for _, o := range p.List {
				for _, v := range probes(o) {
					src := "prompt = \"p\"\n"
					for _, s := range []string{"stt", "llm", "tts"} {
						if s != g.stage {
							src += bases[s]
							continue
						}
						src += "[" + s + "]\nprovider = \"" + p.Vendor + "\"\n"
						for _, r := range p.List {
							if r.Required && r.Name != o.Name {
								src += TOML.Setting(r.Name, sample(&r, &p)) + "\n"
							}
						}
						src += TOML.Setting(o.Name, v) + "\n"
					}
					src += "[transports.webrtc]\n"
					_, ds := Parse("probe.toml", []byte(src), TOML, Options{LookupEnv: always})
					walker := true
					for _, d := range ds {
						if strings.HasPrefix(d.Path, g.stage+"."+o.Name) {
							walker = false
						} else {
							t.Errorf("%s %s %s = %v: unexpected %s", g.stage, p.Vendor, o.Name, v, d)
						}
					}
					val, _ := valueOf(o.Type, plain(v))
					table := p.Check(o.Name, val) == nil
					if walker != table {
						t.Errorf("%s %s: %s = %v: the walker accepts it %v, the table %v (%v)", g.stage, p.Vendor, o.Name, v, walker, table, ds)
					}
					n++
				}
			}
		}
	}
	if n < 400 {
		t.Errorf("only %d probes", n)
	}
}

// plain is a probe as valueOf takes it.
func plain(v any) any {
	switch x := v.(type) {
	case int64:
		return int(x)
	case []int64:
		out := make([]int, len(x))
		for i, n := range x {
			out[i] = int(n)
		}
		return out
	}
	return v
}
