package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"

	"github.com/brisvox/brisvox/cmd/internal/agentbuild"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/gate"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/rs/zerolog"
)

// defaultMaxCalls caps the call limit serve takes when --max-calls is not
// given: the agent's capacity, at most this.
const defaultMaxCalls = 20

// callLimit is the call limit serve runs with: --max-calls, or the
// agent's capacity (at most defaultMaxCalls) when it was not given. A
// limit above the capacity is refused unless the file's [serve] says
// over_capacity = true: the calls past it would be admitted and then not
// heard (issue 14: 20 calls admitted, 2 decoders).
func callLimit(a *agentbuild.Agent, maxCalls int, stdout io.Writer) (int, error) {
	asked := maxCalls
	if asked <= 0 {
		asked = defaultMaxCalls
	}
	c := a.Capacity(asked)
	over := a.File().Serve.OverCapacity.V
	switch {
	case maxCalls <= 0:
		maxCalls = c.Calls
	case maxCalls > c.Calls && !over:
		return 0, fmt.Errorf("--max-calls %d is above the agent's %s: lower --max-calls, give the provider more room, or set over_capacity = true in [serve]", maxCalls, c)
	}
	fmt.Fprintf(stdout, "brisvox: %s; serving at most %d calls\n", c, maxCalls)
	return maxCalls, nil
}

// applyMemory sets the process's soft memory limit and GC target from the
// file's [serve], where the environment (GOMEMLIMIT, GOGC) does not
// already: the environment wins.
func applyMemory(s agentfile.Serve, log zerolog.Logger) {
	if s.MemoryLimit.V > 0 {
		if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
			log.Info().Msg("memory_limit: GOMEMLIMIT is set and wins")
		} else {
			debug.SetMemoryLimit(s.MemoryLimit.V)
		}
	}
	if s.GCPercent.Set {
		if _, ok := os.LookupEnv("GOGC"); ok {
			log.Info().Msg("gc_percent: GOGC is set and wins")
		} else {
			debug.SetGCPercent(s.GCPercent.V)
		}
	}
}

// endpointGate is the gate in front of one HTTP endpoint: the per-source
// rate limit of [serve], and the access the transport's table gives (a
// bearer token, signed URLs), read from the environment. Exposure has
// checked that the variables are set and long enough.
func endpointGate(srv *serve.Server, name string, s agentfile.Serve, acc agentfile.Access, log zerolog.Logger) (*gate.Gate, error) {
	cfg := gate.Config{RatePerSec: s.RateLimit.V, Burst: s.Burst.V, Log: log.With().Str("endpoint", name).Logger()}
	if n := acc.TokenEnv.V; n != "" {
		cfg.Token = os.Getenv(n)
	}
	if n := acc.SigningSecretEnv.V; n != "" {
		cfg.Secret = []byte(os.Getenv(n))
	}
	g, err := gate.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	srv.Attach("gate_"+name, g.Stats, g.Close)
	return g, nil
}

// guard mounts h at pattern behind g.
func guard(srv *serve.Server, pattern string, g *gate.Gate, h http.Handler, name string, stats func() map[string]uint64, closer func()) {
	srv.Handle(pattern, g.Wrap(h), name, stats, closer)
}
