package speechtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// FaultMap maps the contract suite's faults onto a wsmock vendor mock's.
// Both speak the one fault vocabulary (providertest's kinds), so the kind
// stays and the fault acts before the same message (BeforeEvent, a
// negative one as 0: the adapter's harness says what its mock counts as an
// event) for the same Duration; what a websocket adds is the map's: a
// refusal carries the service's error body, a stall may be a hung server
// that answers no ping, a protocol violation is a text message that is not
// JSON. What differs between services is here.
type FaultMap struct {
	// RefuseBody is the service's error body, sent with a refusal's
	// status.
	RefuseBody string
	// StallNoPong makes a stall a hung server that answers no websocket
	// ping either, for an adapter whose ping probe would otherwise see a
	// live one.
	StallNoPong bool
}

// Map returns f as the mock's fault. The zero Kind (no fault), and a kind
// the vocabulary does not have, is no fault.
func (m FaultMap) Map(f providertest.Fault) wsmock.Fault {
	w := wsmock.Fault{Fault: providertest.Fault{Kind: f.Kind, BeforeEvent: max(f.BeforeEvent, 0), Duration: f.Duration}}
	switch f.Kind {
	case providertest.FaultReject:
		w.Status, w.RefuseBody = f.Status, m.RefuseBody
	case providertest.FaultStall:
		w.NoPong = m.StallNoPong
	case providertest.FaultProtocol:
		w.Violation = wsmock.ViolateMalformed
	case providertest.FaultConnectStall, providertest.FaultDisconnect, providertest.FaultDelay:
	default:
		w.Kind = 0
	}
	return w
}

// Harness is the part of a contract harness over a wsmock vendor mock
// that every speech adapter shares: Inject queues the suite's fault,
// mapped by Faults, on Mock for its next handshake; IOTimeout is IO, the
// adapter's connect and reply deadline as the harness declares it. An
// adapter's harness embeds it and adds its own Reset (the mock's, with the
// mock's settings restored), and Script and SampleRate (STT) or its
// declarations (TTS).
type Harness[M interface{ Inject(wsmock.Fault) }] struct {
	Mock   M
	Faults FaultMap
	IO     time.Duration
}

// Inject queues f, mapped, on the mock.
func (h Harness[M]) Inject(f providertest.Fault) { h.Mock.Inject(h.Faults.Map(f)) }

// IOTimeout is the deadline the harness declares.
func (h Harness[M]) IOTimeout() time.Duration { return h.IO }

// RunSTT runs the STT contract suite over a, driven through h, and returns
// its report, logged with the virtual time it took. It must run inside
// the synctest bubble a and h were made in. A suite error fails the test,
// and so does a report without one result for each of the suite's checks.
func RunSTT(t testing.TB, a providers.STT, h contracttest.STTHarness) contracttest.Report {
	t.Helper()
	return runSuite(t, func() (contracttest.Report, error) {
		return contracttest.RunSTT(context.Background(), a, h, contracttest.Config{})
	}, len(contracttest.STTCheckNames()))
}

// RunTTS runs the TTS contract suite over a, driven through h, as RunSTT
// does; the checks owed are those TTSCheckNamesFor(h) lists (the held-text
// checks included when h holds text).
func RunTTS(t testing.TB, a providers.TTS, h contracttest.TTSHarness) contracttest.Report {
	t.Helper()
	return runSuite(t, func() (contracttest.Report, error) {
		return contracttest.RunTTS(context.Background(), a, h, contracttest.Config{})
	}, len(contracttest.TTSCheckNamesFor(h)))
}

// runSuite runs a suite, logs its report and fails the test on an error or
// a report of other than checks results.
func runSuite(t testing.TB, run func() (contracttest.Report, error), checks int) contracttest.Report {
	t.Helper()
	start := time.Now()
	rep, err := run()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\nvirtual %v", rep, time.Since(start))
	if got := len(rep.Checks); got != checks {
		t.Fatalf("%d checks ran, want %d", got, checks)
	}
	return rep
}

// FailedChecks returns the names of the checks rep failed, in the order
// run (skipped checks are not failures); nil when none failed.
func FailedChecks(rep contracttest.Report) []string {
	var failed []string
	for _, c := range rep.Failures() {
		failed = append(failed, c.Name)
	}
	return failed
}

// WantFailed fails the test unless the checks rep failed are exactly want,
// in order (none for an empty want); the message carries the report.
func WantFailed(t testing.TB, rep contracttest.Report, want []string) {
	t.Helper()
	if failed := FailedChecks(rep); !slices.Equal(failed, want) {
		t.Fatalf("failed checks %q, want %q\n%s", failed, want, rep)
	}
}
