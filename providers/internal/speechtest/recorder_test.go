package speechtest_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// recorder is a testing.TB that records what a helper reports instead of
// failing the test it wraps: Fatal, FailNow and Skip end the helper's
// goroutine, as they end a test's. Helper, Cleanup, Setenv, Log and the
// rest go to the wrapped test.
type recorder struct {
	testing.TB

	mu      sync.Mutex
	reports []string
	fatal   bool
	skipped bool
}

func (r *recorder) report(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, msg)
}

func (r *recorder) Error(args ...any)                 { r.report(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.report(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail()                             { r.report("Fail") }
func (r *recorder) Fatal(args ...any)                 { r.report(fmt.Sprint(args...)); r.FailNow() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.report(fmt.Sprintf(format, args...))
	r.FailNow()
}
func (r *recorder) Skip(...any)          { r.SkipNow() }
func (r *recorder) Skipf(string, ...any) { r.SkipNow() }

func (r *recorder) FailNow() {
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) SkipNow() {
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reports) > 0
}

// run runs helper on a recorder in a goroutine of its own, as a test
// runs, and waits for it to return or stop.
func run(t *testing.T, helper func(tb testing.TB)) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(r)
	}()
	<-done
	return r
}

// want fails t unless the helper reported as expected: nothing when want
// is "", else a report holding want, and stopped (Fatal) exactly when
// fatal.
func (r *recorder) want(t *testing.T, want string, fatal bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if want == "" {
		if len(r.reports) > 0 || r.fatal {
			t.Errorf("the helper reported %q (fatal %v), want nothing", r.reports, r.fatal)
		}
		return
	}
	found := false
	for _, msg := range r.reports {
		found = found || strings.Contains(msg, want)
	}
	if !found {
		t.Errorf("the helper reported %q, want a report holding %q", r.reports, want)
	}
	if r.fatal != fatal {
		t.Errorf("the helper stopped the test: %v, want %v (reports %q)", r.fatal, fatal, r.reports)
	}
}

// source is a Source over a channel.
type source[E any] chan E

func (c source[E]) Events() <-chan E { return c }

// sttSession is an STT session whose Events is ch; the helpers under test
// call nothing else.
type sttSession struct {
	providers.STTSession
	ch chan providers.STTEvent
}

func (s sttSession) Events() <-chan providers.STTEvent { return s.ch }

// ttsSession is a TTS session whose Events is ch; the helpers under test
// call nothing else.
type ttsSession struct {
	providers.TTSSession
	ch chan providers.TTSEvent
}

func (s ttsSession) Events() <-chan providers.TTSEvent { return s.ch }

// fill makes a channel holding evs, closed after them when closed is set.
func fill[E any](evs []E, closed bool) chan E {
	ch := make(chan E, len(evs))
	for _, ev := range evs {
		ch <- ev
	}
	if closed {
		close(ch)
	}
	return ch
}
