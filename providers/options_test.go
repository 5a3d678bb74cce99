package providers

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// cfg is a config of a made-up vendor, for the table's tests.
type cfg struct {
	URL     string
	Key     string
	Voice   string
	Rate    int
	Speed   float64
	Delay   time.Duration
	Plain   bool
	Chunks  []int
	Words   []string
	Setters []string // the order the setters ran in
}

func table() Options {
	var of Of[cfg]
	return Options{Vendor: "made-up", Key: KeyAlways, KeyEnv: "MADE_UP_KEY", List: []Option{
		of.URL("url", []string{"ws", "wss"}, func(c *cfg, s string) { c.URL = s; c.Setters = append(c.Setters, "url") }),
		of.Env("api_key_env", func(c *cfg, s string) { c.Key = s; c.Setters = append(c.Setters, "api_key_env") }),
		of.Enum("voice", []string{"a", "b"}, func(c *cfg, s string) { c.Voice = s; c.Setters = append(c.Setters, "voice") }),
		of.OneOfInt("rate", []int{8000, 16000}, func(c *cfg, n int) { c.Rate = n }),
		of.Float("speed", 0.5, 2, func(c *cfg, x float64) { c.Speed = x }),
		of.Duration("delay", time.Millisecond, time.Second, func(c *cfg, d time.Duration) { c.Delay = d }),
		of.Bool("plain", func(c *cfg, b bool) { c.Plain = b }),
		of.Ints("chunks", 50, 500, func(c *cfg, n []int) { c.Chunks = n }),
		of.Strings("words", func(c *cfg, s []string) { c.Words = s }),
		of.String("name", func(*cfg, string) {}),
		of.Int("size", 1, 10, func(*cfg, int) {}),
	}}
}

// TestOptionCheck: each type's check takes the values inside its bounds
// and refuses the others with ErrOption. Mutation caught: a bound
// compared with < for <= (the edges), NaN let through, an enum or rate
// not checked.
func TestOptionCheck(t *testing.T) {
	tb := table()
	for _, c := range []struct {
		name, opt string
		v         Value
		ok        bool
	}{
		{"url ok", "url", Value{String: "wss://h.example/x"}, true},
		{"url scheme", "url", Value{String: "http://h.example"}, false},
		{"url credentials", "url", Value{String: "wss://u:p@h.example"}, false},
		{"url query", "url", Value{String: "wss://h.example/?k=1"}, false},
		{"env empty: no key", "api_key_env", Value{}, true},
		{"env name", "api_key_env", Value{String: "MY_KEY"}, true},
		{"env lower case", "api_key_env", Value{String: "my_key"}, false},
		{"enum in", "voice", Value{String: "b"}, true},
		{"enum out", "voice", Value{String: "c"}, false},
		{"rate in", "rate", Value{Int: 16000}, true},
		{"rate out", "rate", Value{Int: 22050}, false},
		{"float low edge", "speed", Value{Float: 0.5}, true},
		{"float high edge", "speed", Value{Float: 2}, true},
		{"float above", "speed", Value{Float: 2.01}, false},
		{"float NaN", "speed", Value{Float: math.NaN()}, false},
		{"duration edge", "delay", Value{Duration: time.Second}, true},
		{"duration under", "delay", Value{Duration: 0}, false},
		{"ints in", "chunks", Value{Ints: []int64{50, 500}}, true},
		{"ints one out", "chunks", Value{Ints: []int64{120, 49}}, false},
		{"string blank", "name", Value{String: "  "}, false},
		{"int low edge", "size", Value{Int: 1}, true},
		{"int under", "size", Value{Int: 0}, false},
		{"bool", "plain", Value{Bool: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, ok := tb.Lookup(c.opt)
			if !ok {
				t.Fatalf("no option %s", c.opt)
			}
			err := o.Check(c.v)
			if c.ok != (err == nil) {
				t.Fatalf("Check(%+v) = %v, want ok %v", c.v, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrOption) {
				t.Fatalf("%v does not wrap ErrOption", err)
			}
		})
	}
}

// TestOptionsApply: Apply writes each checked value through its row's
// setter, in the table's order, and refuses an unknown name, a refused
// value and another vendor's config. Mutation caught: the values applied
// in map order, a value applied unchecked, the config's type not checked
// (a panic).
func TestOptionsApply(t *testing.T) {
	tb := table()
	for _, c := range []struct {
		name   string
		cfg    any
		values map[string]Value
		want   *cfg
		err    bool
	}{
		{"in table order", &cfg{}, map[string]Value{"voice": {String: "a"}, "url": {String: "ws://h.example"}, "api_key_env": {String: "K"}},
			&cfg{URL: "ws://h.example", Key: "K", Voice: "a", Setters: []string{"url", "api_key_env", "voice"}}, false},
		{"every type", &cfg{}, map[string]Value{"rate": {Int: 8000}, "speed": {Float: 1.5}, "delay": {Duration: time.Millisecond}, "plain": {Bool: true}, "chunks": {Ints: []int64{60}}, "words": {Strings: []string{"w"}}},
			&cfg{Rate: 8000, Speed: 1.5, Delay: time.Millisecond, Plain: true, Chunks: []int{60}, Words: []string{"w"}}, false},
		{"unknown name", &cfg{}, map[string]Value{"volume": {Float: 1}}, nil, true},
		{"refused value", &cfg{}, map[string]Value{"speed": {Float: 9}}, nil, true},
		{"another config", &struct{}{}, map[string]Value{"speed": {Float: 1}}, nil, true},
		{"no key for a vendor that needs one", &cfg{}, map[string]Value{"api_key_env": {}}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := tb.Apply(c.cfg, c.values)
			if c.err {
				if !errors.Is(err, ErrOption) {
					t.Fatalf("Apply = %v, want ErrOption", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.cfg.(*cfg); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestStringsCopied: a list option's setter gets its own copy, so the
// file's value and the config share no array. Mutation caught: the slice
// handed over as is.
func TestStringsCopied(t *testing.T) {
	var c cfg
	words := []string{"a"}
	if err := table().Apply(&c, map[string]Value{"words": {Strings: words}}); err != nil {
		t.Fatal(err)
	}
	words[0] = "changed"
	if c.Words[0] != "a" {
		t.Fatalf("the config shares the file's list: %v", c.Words)
	}
}
