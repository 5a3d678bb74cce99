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
