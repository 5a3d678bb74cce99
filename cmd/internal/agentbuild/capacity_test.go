package agentbuild

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
)

// limitedSTT, limitedLLM and limitedTTS are providers that report limits
// (their other methods are never called here).
type (
	limitedSTT struct {
		providers.STT
		limits []providers.Limit
	}
	limitedLLM struct {
		providers.LLM
		limits []providers.Limit
	}
	limitedTTS struct {
		providers.TTS
		limits []providers.Limit
	}
	plainSTT struct{ providers.STT }
)

func (p limitedSTT) Limits() []providers.Limit { return p.limits }
func (p limitedLLM) Limits() []providers.Limit { return p.limits }
func (p limitedTTS) Limits() []providers.Limit { return p.limits }

var (
	_ providers.Limited = limitedSTT{}
	_ providers.Limited = limitedLLM{}
	_ providers.Limited = limitedTTS{}
)

// decoders is pocketsphinx's limit: size decoders, each shared by share
// calls.
func decoders(size, share int) providers.Limit {
	return providers.Limit{Name: "pocketsphinx decoders", Size: size, CallsPerUnit: share}
}

// TestCapacity: the capacity is the smallest of the call limit and every
// provider's limits, named by the smallest; each rate's stt counts.
// Mutations seen failing: the largest taken (min -> max), a limit's Size
// used instead of Calls() (4 decoders shared by 2 -> 4, not 8), the llm
// or tts not asked, only the first rate's stt asked, the call limit
// named when a limit is smaller, a limit equal to the call limit
// named instead of the call limit.
func TestCapacity(t *testing.T) {
	vendor := providers.Limit{Name: "openai concurrency", Size: 6, PerCall: true}
	voices := providers.Limit{Name: "tts contexts", Size: 3, PerCall: true}
	cases := []struct {
		name     string
		agent    *Agent
		maxCalls int
		want     int
		bound    string
		names    []string
		printed  string
	}{
		{"nothing limited", &Agent{stt: map[int]providers.STT{16000: plainSTT{}}, llm: limitedLLM{}, tts: limitedTTS{}}, 20,
			20, BoundMaxCalls, nil, "capacity 20 calls (max calls 20)"},
		{"shared decoders bound", &Agent{stt: map[int]providers.STT{16000: limitedSTT{limits: []providers.Limit{decoders(2, 2)}}}}, 20,
			4, "pocketsphinx decoders", []string{"pocketsphinx decoders"},
			"capacity 4 calls (pocketsphinx decoders: 2, shared by 2 calls each; max calls 20)"},
		{"Calls, not Size", &Agent{stt: map[int]providers.STT{16000: limitedSTT{limits: []providers.Limit{decoders(4, 2)}}}}, 7,
			7, BoundMaxCalls, []string{"pocketsphinx decoders"},
			"capacity 7 calls (pocketsphinx decoders: 4, shared by 2 calls each; max calls 7)"},
		{"equal to the call limit", &Agent{stt: map[int]providers.STT{16000: limitedSTT{limits: []providers.Limit{decoders(10, 2)}}}}, 20,
			20, BoundMaxCalls, []string{"pocketsphinx decoders"},
			"capacity 20 calls (pocketsphinx decoders: 10, shared by 2 calls each; max calls 20)"},
		{"the llm bounds", &Agent{stt: map[int]providers.STT{16000: limitedSTT{limits: []providers.Limit{decoders(8, 1)}}}, llm: limitedLLM{limits: []providers.Limit{vendor}}}, 20,
			6, "openai concurrency", []string{"pocketsphinx decoders", "openai concurrency"},
			"capacity 6 calls (pocketsphinx decoders: 8, shared by 1 call each; openai concurrency: 6, one per call; max calls 20)"},
		{"the tts bounds", &Agent{llm: limitedLLM{limits: []providers.Limit{vendor}}, tts: limitedTTS{limits: []providers.Limit{voices}}}, 20,
			3, "tts contexts", []string{"openai concurrency", "tts contexts"},
			"capacity 3 calls (openai concurrency: 6, one per call; tts contexts: 3, one per call; max calls 20)"},
		{"each rate's stt", &Agent{stt: map[int]providers.STT{
			8000:  limitedSTT{limits: []providers.Limit{decoders(3, 2)}},
			16000: limitedSTT{limits: []providers.Limit{decoders(1, 2)}},
		}}, 20, 2, "pocketsphinx decoders at 16000 Hz", []string{"pocketsphinx decoders at 8000 Hz", "pocketsphinx decoders at 16000 Hz"},
			"capacity 2 calls (pocketsphinx decoders at 8000 Hz: 3, shared by 2 calls each; pocketsphinx decoders at 16000 Hz: 1, shared by 2 calls each; max calls 20)"},
		{"one call", &Agent{stt: map[int]providers.STT{16000: limitedSTT{limits: []providers.Limit{{Name: "decoders", Size: 1, PerCall: true}}}}}, 20,
			1, "decoders", []string{"decoders"}, "capacity 1 call (decoders: 1, one per call; max calls 20)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.agent.Capacity(c.maxCalls)
			var names []string
			for _, l := range got.Limits {
				names = append(names, l.Name)
			}
			if got.Calls != c.want || got.Bound != c.bound || !reflect.DeepEqual(names, c.names) {
				t.Errorf("capacity %d bound %q limits %q; want %d %q %q", got.Calls, got.Bound, names, c.want, c.bound, c.names)
			}
			if s := got.String(); s != c.printed {
				t.Errorf("prints %q\n want  %q", s, c.printed)
			}
		})
	}
}

// TestCapacityOfTheKeylessAgent: the local example's capacity comes from
// pocketsphinx's decoders (issue 14 defect 2: it admitted 20 calls and
// could hear 2); a larger pool_size lifts it up to the call limit.
// Mutation seen failing: the stt not asked (capacity 20 for pool_size 2).
func TestCapacityOfTheKeylessAgent(t *testing.T) {
	per := pocketsphinx.CallsPerDecoder
	cases := []struct {
		name     string
		poolSize int // 0: the default
		maxCalls int
		want     int
		bound    string
	}{
		{"default pool", 0, 20, min(20, pocketsphinx.DefaultPoolSize*per), "pocketsphinx decoders"},
		{"one decoder", 1, 20, per, "pocketsphinx decoders"},
		{"a pool for the call limit", 64, 20, 20, BoundMaxCalls},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ds := agentfile.Load(filepath.Join(moduleRoot(t), "examples", "agents", "local.toml"), agentfile.Options{KnownTools: ToolNames()})
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			if c.poolSize > 0 {
				f.STT.Options["pool_size"] = agentfile.Option{Kind: providers.TypeInt, Value: providers.Value{Int: int64(c.poolSize)}}
			}
			got := built(t, f).Capacity(c.maxCalls)
			if got.Calls != c.want || got.Bound != c.bound || len(got.Limits) != 1 {
				t.Errorf("%s, want %d calls bound by %s", got, c.want, c.bound)
			}
		})
	}
}
