package contracttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// What the LLM, STT and TTS suites share: the check runner, the run's
// bounds, and the checks whose logic is the same for every kind
// (error_mapping's verdicts, warm, no_goroutine_leak) with the kind's
// sessions passed in.

// boundFactor: every provider call and awaited event is bounded by
// boundFactor x the io timeout.
const boundFactor = 3

// stall is how long an injected stall lasts: far beyond any deadline.
const stall = time.Hour

// check is one check of a suite whose run is R (*llmRun, *sttRun,
// *ttsRun).
type check[R any] struct {
	name string
	run  func(R) error
	// faults is true for a check that injects a fault into the service;
	// RunTTS skips those for an in-process engine.
	faults bool
}

// checkNames lists the names of checks, in order.
func checkNames[R any](checks []check[R]) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.name)
	}
	return out
}

// runChecks runs checks in order against r, calling reset (the harness's
// Reset) before each, and reports one CheckResult per check. With
// skipFaults the checks that fault the service are reported Skipped
// instead, and neither reset nor run.
func runChecks[R any](kind string, r R, checks []check[R], reset func(), skipFaults bool) Report {
	rep := Report{Kind: kind}
	for _, c := range checks {
		if skipFaults && c.faults {
			rep.Checks = append(rep.Checks, CheckResult{Name: c.name, Skipped: true, Detail: skipInProcess})
			continue
		}
		reset()
		start := time.Now()
		err := c.run(r)
		res := CheckResult{Name: c.name, Passed: err == nil, Elapsed: time.Since(start)}
		if err != nil {
			res.Detail = err.Error()
		}
		rep.Checks = append(rep.Checks, res)
	}
	return rep
}

// suite is what a run of any suite holds: the caller's context, the
// config with its defaults, the harness's io timeout and the bound of
// every provider call and awaited event.
type suite struct {
	ctx   context.Context
	cfg   Config
	io    time.Duration
	bound time.Duration
}

// newSuite is the run state for cfg (defaults filled) and an io timeout.
func newSuite(ctx context.Context, cfg Config, io time.Duration) suite {
	return suite{ctx: ctx, cfg: cfg.withDefaults(), io: io, bound: boundFactor * io}
}

// judgeTimeout demands a *providers.Timeout elapsed after the stall
// began, within TimeoutSlack of the io timeout, either way.
func (s *suite) judgeTimeout(err error, elapsed time.Duration) error {
	return judgeTimeout(err, elapsed, s.io, s.cfg.TimeoutSlack)
}

// checkErrorMapping is the verdict of error_mapping: refused(status,
// what) runs a session whose service refuses it with status, and its
// error must be a *providers.Rejected with that status (from the call
// that opens it, or from the first event of an adapter that connects
// lazily); mapped(c) runs one under the fault c, and its error must be
// c.want. The kind's closures reset, script and inject. Every case is
// tried; all breaches are reported.
func checkErrorMapping(refused func(status int, what string) error, mapped func(c mappedFault) error) error {
	var bad []string
	for _, status := range []int{401, 429, 500, 503} {
		what := fmt.Sprintf("refusal %d", status)
		err := refused(status, what)
		var rej *providers.Rejected
		if !errors.As(err, &rej) || rej.Status != status {
			bad = append(bad, fmt.Sprintf("%s: got %v, want *providers.Rejected{Status: %d}", what, err, status))
		}
	}
	for _, c := range mappedFaults() {
		if err := mapped(c); !c.ok(err) {
			bad = append(bad, fmt.Sprintf("%s: got %v, want %s", c.what, err, c.want))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// mappedFault is a session fault and the typed error it must surface as.
type mappedFault struct {
	what string
	kind providertest.FaultKind
	ok   func(error) bool
	want string
}

// mappedFaults are the protocol violation and the drop.
func mappedFaults() []mappedFault {
	return []mappedFault{
		{"protocol violation", providertest.FaultProtocol, func(err error) bool { var e *providers.Protocol; return errors.As(err, &e) }, "*providers.Protocol"},
		{"drop", providertest.FaultDisconnect, func(err error) bool { var e *providers.Disconnected; return errors.As(err, &e) }, "*providers.Disconnected"},
	}
}

// checkWarm is warm: Warm succeeds twice, and the session after it is
// not slower to its first output than a cold one plus WarmSlack. timeTo
// opens a session named what and returns the time from the call that
// opens it to its first output; noun ("stream", "session") and first
// ("first event", "first audio") name them in failures.
func (s *suite) checkWarm(warm func(context.Context) error, timeTo func(what string) (time.Duration, error), noun, first string) error {
	cold, err := timeTo("cold " + noun)
	if err != nil {
		return fmt.Errorf("cold %s: %w", noun, err)
	}
	if err := warmTwice(s.ctx, s.bound, warm); err != nil {
		return err
	}
	warmed, err := timeTo("warm " + noun)
	if err != nil {
		return fmt.Errorf("%s after Warm: %w", noun, err)
	}
	if warmed > cold+s.cfg.WarmSlack {
		return fmt.Errorf("%s %v after Warm, cold %v: more than %v slower", first, warmed, cold, s.cfg.WarmSlack)
	}
	return nil
}

// warmTwice calls warm twice, each bounded.
func warmTwice(ctx context.Context, bound time.Duration, warm func(context.Context) error) error {
	for i := range 2 {
		wctx, cancel := context.WithCancel(ctx)
		_, err := callBounded(fmt.Sprintf("Warm #%d", i+1), bound,
			func() (struct{}, error) { return struct{}{}, warm(wctx) }, cancel, nil)
		cancel()
		if err != nil {
			return fmt.Errorf("Warm #%d: %w", i+1, err)
		}
	}
	return nil
}

// checkNoLeak is no_goroutine_leak: the goroutine count returns to its
// baseline within LeakBound after finished (a session used to its end
// and closed) and after abandon (one dropped mid-way: its context
// cancelled, never closed). The baseline is the set of the bubble's
// goroutines once stable for LeakBound; a leak is a goroutine started
// since that is still alive LeakBound after the session (one that ended
// meanwhile cannot hide it). noun ("stream", "session") names the
// sessions in failures.
func (s *suite) checkNoLeak(noun string, finished, abandon func() error) error {
	baseline := stableGoroutines(s.cfg.LeakBound)

	if err := finished(); err != nil {
		return err
	}
	if n := settleGoroutines(baseline, s.cfg.LeakBound); n > 0 {
		return fmt.Errorf("after a finished %s: %d goroutines started since the baseline still alive %v later", noun, n, s.cfg.LeakBound)
	}

	if err := abandon(); err != nil {
		return err
	}
	if n := settleGoroutines(baseline, s.cfg.LeakBound); n > 0 {
		return fmt.Errorf("after an abandoned %s: %d goroutines started since the baseline still alive %v later", noun, n, s.cfg.LeakBound)
	}
	return nil
}
