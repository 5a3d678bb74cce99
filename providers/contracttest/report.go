package contracttest

import (
	"fmt"
	"strings"
	"time"
)

// CheckResult is the outcome of one check of a suite.
type CheckResult struct {
	// Name is the check's name ("streaming", "timeout/idle", ...).
	Name string
	// Passed is true when the provider met the check; false for a skipped
	// check, which is not a failure either.
	Passed bool
	// Skipped is true when the check was not run because it does not apply
	// to the provider as its harness declares it (an in-process engine has
	// no service to fault); Detail then says why.
	Skipped bool
	// Detail says why the check failed or was skipped (empty when it
	// passed).
	Detail string
	// Elapsed is the check's duration on the clock the suite ran on
	// (virtual time in a synctest bubble).
	Elapsed time.Duration
}

// Report is a suite's outcome: one CheckResult per check, in the order run.
type Report struct {
	// Kind is the provider kind ("llm").
	Kind   string
	Checks []CheckResult
}

// Passed is true when every check that ran passed (and at least one ran):
// skipped checks are neither passes nor failures.
func (r Report) Passed() bool {
	return len(r.Checks) > len(r.Skipped()) && len(r.Failures()) == 0
}

// Failures returns the failed checks, in order; skipped ones are not.
func (r Report) Failures() []CheckResult {
	var out []CheckResult
	for _, c := range r.Checks {
		if !c.Passed && !c.Skipped {
			out = append(out, c)
		}
	}
	return out
}

// Skipped returns the checks that were not run, in order.
func (r Report) Skipped() []CheckResult {
	var out []CheckResult
	for _, c := range r.Checks {
		if c.Skipped {
			out = append(out, c)
		}
	}
	return out
}

// Check returns the result of the named check.
func (r Report) Check(name string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return CheckResult{}, false
}

// Elapsed is the sum of the checks' durations.
func (r Report) Elapsed() time.Duration {
	var d time.Duration
	for _, c := range r.Checks {
		d += c.Elapsed
	}
	return d
}

// String lists the checks, one a line, failures and skips with their
// detail.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s contract:", r.Kind)
	for _, c := range r.Checks {
		if c.Skipped {
			fmt.Fprintf(&b, "\n  skip %-28s %v", c.Name, c.Detail)
		} else if c.Passed {
			fmt.Fprintf(&b, "\n  ok   %-28s %v", c.Name, c.Elapsed)
		} else {
			fmt.Fprintf(&b, "\n  FAIL %-28s %v: %s", c.Name, c.Elapsed, c.Detail)
		}
	}
	return b.String()
}
