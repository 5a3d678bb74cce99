package loosetest

import (
	"os"
	"strings"
)

// LiveEnv is the environment variable that turns the live tests on: they
// run only when it is "1".
const LiveEnv = "BRISVOX_LIVE_TESTS"

// T is what the helpers need of a *testing.T.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Gate skips the test unless LiveEnv is "1" and every variable of vars
// (a key, a base URL) is set. The message names the variables, never
// their values.
func Gate(t T, vars ...string) {
	t.Helper()
	if os.Getenv(LiveEnv) != "1" {
		t.Skipf("live test: set %s=1 and %s to run it against the real service", LiveEnv, strings.Join(vars, ", "))
		return
	}
	for _, v := range vars {
		if strings.TrimSpace(os.Getenv(v)) == "" {
			t.Skipf("live test: %s is not set", v)
			return
		}
	}
}

// EnvOr is the value of the environment variable name, or def when it is
// unset or blank (model names of the live tests).
func EnvOr(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// Check reports r on t: one log line of counts per step, and an error per
// failed step. Nothing the model said is logged.
func Check(t T, r Report) {
	t.Helper()
	for _, s := range r.Steps {
		t.Logf("%s: %d requests, %d events, %d text bytes, %d calls, first event %v, %v", s.Name, s.Requests, s.Events, s.TextBytes, s.Calls, s.FirstEvent, s.Elapsed)
		if s.Err != nil {
			t.Errorf("%s: %v", s.Name, s.Err)
		}
	}
	if len(r.Steps) == 0 {
		t.Errorf("no step ran")
	}
}
