package docstest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
)

// Config is the agent file's schema as agentfile knows it: each table's
// path ("" for the top level, "transports.sip") and its keys. A table
// whose stage takes a provider holds the keys of all its providers.
type Config struct {
	Tables map[string][]string
}

// bogus is the key no table knows; its diagnostic's hint lists the keys
// the table does know ("known: a, b, c"), which TestBadFiles pins.
const bogus = "zzzzzzzzzz"

// ProbeConfig asks agentfile for its tables and keys, through the hints
// it gives for an unknown key, an unknown provider and a table nested in
// a known key: nothing of the schema is copied here.
func ProbeConfig() (Config, error) {
	cfg := Config{Tables: map[string][]string{}}
	return cfg, probeTable(cfg, "")
}

func probeTable(cfg Config, path string) error {
	var keys []string
	if providers, err := known(path, `provider = "`+bogus+`"`, "provider"); err == nil {
		// A stage's table: its keys are its providers' options.
		for _, p := range providers {
			pk, err := known(path, `provider = "`+p+`"`, bogus)
			if err != nil {
				return err
			}
			keys = append(keys, pk...)
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
	} else if keys, err = known(path, "", bogus); err != nil {
		return err
	}
	cfg.Tables[path] = keys
	for _, k := range keys {
		sub := join(path, k)
		ok, err := isTable(sub)
		if err != nil {
			return err
		}
		if !ok {
			// A table of named tables ([transports.sip.trunks.NAME]):
			// its entries are names, each a table of the same keys.
			if ok, err = isTable(join(sub, named)); err != nil {
				return err
			}
			sub = join(sub, named)
		}
		if ok {
			if err := probeTable(cfg, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// named is the name probed for a table of named tables.
const named = "NAME"

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// source is a minimal agent with table path holding lines.
func source(path string, lines ...string) string {
	src := "prompt = \"p\"\n"
	if path == "" {
		return src + strings.Join(lines, "\n") + "\n"
	}
	return src + "[" + path + "]\n" + strings.Join(lines, "\n") + "\n"
}

func parse(src string) agentfile.Diagnostics {
	env := func(string) (string, bool) { return "x", true }
	_, ds := agentfile.Parse("probe.toml", []byte(src), agentfile.TOML, agentfile.Options{LookupEnv: env})
	return ds
}

// known writes line and bogus = 1 into table path and reads the hint of
// the diagnostic at path.key.
func known(path, line, key string) ([]string, error) {
	lines := []string{}
	if line != "" {
		lines = append(lines, line)
	}
	if key == bogus {
		lines = append(lines, bogus+" = 1")
	}
	want := join(path, key)
	for _, d := range parse(source(path, lines...)) {
		if d.Path != want {
			continue
		}
		if list, ok := strings.CutPrefix(d.Hint, "known: "); ok {
			return strings.Split(list, ", "), nil
		}
	}
	return nil, fmt.Errorf("%w: no \"known: ...\" hint at %s", ErrProbe, want)
}

// isTable: a key given a table of its own answers with the unknown-key
// hint of that table (not a type error at the key).
func isTable(path string) (bool, error) {
	for _, probe := range []struct{ line, key string }{{bogus + " = 1", bogus}, {`provider = "` + bogus + `"`, "provider"}} {
		want := join(path, probe.key)
		for _, d := range parse(source(path, probe.line)) {
			if d.Path == want && strings.HasPrefix(d.Hint, "known: ") {
				return true, nil
			}
		}
	}
	return false, nil
}

// Keys is every key of every table.
func (c Config) Keys() map[string][]string {
	out := map[string][]string{}
	for t, ks := range c.Tables {
		for _, k := range ks {
			out[k] = append(out[k], t)
		}
	}
	return out
}

// Table resolves a cited table path: exact, or a table nested in
// another named by its last part(s) (`webrtc.enabled` for
// transports.webrtc).
func (c Config) Table(path string) (string, bool) {
	if _, ok := c.Tables[path]; ok {
		return path, true
	}
	var found []string
	for t := range c.Tables {
		if strings.HasSuffix(t, "."+path) {
			found = append(found, t)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}
