package providers

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

var sentinels = []struct {
	name string
	err  error
}{
	{"ErrRejected", ErrRejected},
	{"ErrTimeout", ErrTimeout},
	{"ErrDisconnected", ErrDisconnected},
	{"ErrProtocol", ErrProtocol},
	{"ErrClosed", ErrClosed},
}

// TestErrorsIsSentinel checks that each typed error matches its own
// sentinel and no other, bare and through %w wrapping.
//
// Mutation it catches (seen failing): Disconnected.Unwrap returning only
// the sentinel, dropping the cause ("disconnected wraps its cause").
func TestErrorsIsSentinel(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	tests := []struct {
		name  string
		err   error
		want  error   // the sentinel it must match
		extra []error // other errors it must match too
	}{
		{name: "rejected", err: &Rejected{Status: 429}, want: ErrRejected},
		{name: "rejected with detail", err: &Rejected{Status: 401, Detail: "bad key"}, want: ErrRejected},
		{name: "timeout", err: &Timeout{Op: "connect"}, want: ErrTimeout},
		{name: "disconnected without cause", err: &Disconnected{}, want: ErrDisconnected},
		{name: "disconnected wraps its cause", err: &Disconnected{Cause: cause}, want: ErrDisconnected, extra: []error{cause}},
		{name: "protocol", err: &Protocol{Detail: "bad json"}, want: ErrProtocol},
	}
	for _, tt := range tests {
		for _, wrapped := range []bool{false, true} {
			name := tt.name
			err := tt.err
			if wrapped {
				name += "/wrapped"
				err = fmt.Errorf("stt session: %w", err)
			}
			t.Run(name, func(t *testing.T) {
				for _, s := range sentinels {
					if got, want := errors.Is(err, s.err), s.err == tt.want; got != want {
						t.Errorf("errors.Is(%v, %s) = %v, want %v", err, s.name, got, want)
					}
				}
				for _, e := range tt.extra {
					if !errors.Is(err, e) {
						t.Errorf("errors.Is(%v, %v) = false, want true", err, e)
					}
				}
			})
		}
	}
}

// TestErrorsAsThroughWrapping checks that errors.As finds each typed error
// (with its fields) under one and two levels of %w.
func TestErrorsAsThroughWrapping(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", err))
	}
	tests := []struct {
		name  string
		err   error
		check func(t *testing.T, err error)
	}{
		{name: "rejected", err: wrap(&Rejected{Status: 503, Detail: "busy"}), check: func(t *testing.T, err error) {
			var e *Rejected
			if !errors.As(err, &e) {
				t.Fatalf("errors.As(%v, *Rejected) = false", err)
			}
			if e.Status != 503 || e.Detail != "busy" {
				t.Errorf("got %+v, want status 503, detail busy", e)
			}
		}},
		{name: "timeout", err: wrap(&Timeout{Op: "first byte"}), check: func(t *testing.T, err error) {
			var e *Timeout
			if !errors.As(err, &e) {
				t.Fatalf("errors.As(%v, *Timeout) = false", err)
			}
			if e.Op != "first byte" {
				t.Errorf("op %q, want %q", e.Op, "first byte")
			}
		}},
		{name: "disconnected", err: wrap(&Disconnected{Cause: io.EOF}), check: func(t *testing.T, err error) {
			var e *Disconnected
			if !errors.As(err, &e) {
				t.Fatalf("errors.As(%v, *Disconnected) = false", err)
			}
			if e.Cause != io.EOF {
				t.Errorf("cause %v, want %v", e.Cause, io.EOF)
			}
		}},
		{name: "protocol", err: wrap(&Protocol{Detail: "unknown event"}), check: func(t *testing.T, err error) {
			var e *Protocol
			if !errors.As(err, &e) {
				t.Fatalf("errors.As(%v, *Protocol) = false", err)
			}
			if e.Detail != "unknown event" {
				t.Errorf("detail %q, want %q", e.Detail, "unknown event")
			}
		}},
		{name: "timeout is not rejected", err: wrap(&Timeout{Op: "x"}), check: func(t *testing.T, err error) {
			var e *Rejected
			if errors.As(err, &e) {
				t.Errorf("errors.As(%v, *Rejected) = true, want false", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, tt.err) })
	}
}

// TestRetryable checks each type's Retryable method and the package-level
// Retryable, which must agree on typed errors and see through wrapping.
//
// Mutations it catches (each seen failing): Rejected.Retryable testing
// Status == 500 instead of >= 500 ("rejected 503"); the package-level
// Retryable using a type assertion instead of errors.As ("wrapped rejected
// 503", "wrapped timeout", "joined with a retryable").
func TestRetryable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "rejected 429", err: &Rejected{Status: 429}, want: true},
		{name: "rejected 408", err: &Rejected{Status: 408}, want: true},
		{name: "rejected 500", err: &Rejected{Status: 500}, want: true},
		{name: "rejected 503", err: &Rejected{Status: 503}, want: true},
		{name: "rejected 400", err: &Rejected{Status: 400}, want: false},
		{name: "rejected 401", err: &Rejected{Status: 401}, want: false},
		{name: "rejected 403", err: &Rejected{Status: 403}, want: false},
		{name: "rejected 404", err: &Rejected{Status: 404}, want: false},
		{name: "timeout", err: &Timeout{Op: "connect"}, want: true},
		{name: "disconnected", err: &Disconnected{Cause: io.EOF}, want: true},
		{name: "disconnected without cause", err: &Disconnected{}, want: true},
		{name: "protocol", err: &Protocol{Detail: "garbage"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := tt.err.(interface{ Retryable() bool })
			if !ok {
				t.Fatalf("%T has no Retryable method", tt.err)
			}
			if got := m.Retryable(); got != tt.want {
				t.Errorf("%T.Retryable() = %v, want %v", tt.err, got, tt.want)
			}
			if got := Retryable(tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}

	pkg := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "plain error", err: errors.New("boom"), want: false},
		{name: "bare sentinel", err: ErrTimeout, want: false},
		{name: "wrapped rejected 503", err: fmt.Errorf("tts: %w", &Rejected{Status: 503}), want: true},
		{name: "wrapped rejected 401", err: fmt.Errorf("tts: %w", &Rejected{Status: 401}), want: false},
		{name: "wrapped timeout", err: fmt.Errorf("llm: %w", &Timeout{Op: "first token"}), want: true},
		{name: "wrapped protocol", err: fmt.Errorf("stt: %w", &Protocol{Detail: "x"}), want: false},
		{name: "joined with a retryable", err: errors.Join(errors.New("a"), &Disconnected{}), want: true},
	}
	for _, tt := range pkg {
		t.Run("package/"+tt.name, func(t *testing.T) {
			if got := Retryable(tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestErrorStrings checks that messages carry the sentinel's text and the
// fields a reader needs: status, detail, op, cause.
//
// Mutations it catches (each seen failing): Rejected.Error dropping the
// detail ("rejected with detail"); Disconnected.Error formatting a nil cause
// as "<nil>" ("disconnected without cause").
func TestErrorStrings(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    []string
		notWant []string
	}{
		{name: "rejected", err: &Rejected{Status: 429}, want: []string{ErrRejected.Error(), "429"}, notWant: []string{": :"}},
		{name: "rejected with detail", err: &Rejected{Status: 401, Detail: "invalid api key"},
			want: []string{ErrRejected.Error(), "401", "invalid api key"}},
		{name: "timeout", err: &Timeout{Op: "connect"}, want: []string{ErrTimeout.Error(), "connect"}},
		{name: "disconnected", err: &Disconnected{Cause: io.ErrUnexpectedEOF},
			want: []string{ErrDisconnected.Error(), io.ErrUnexpectedEOF.Error()}},
		{name: "disconnected without cause", err: &Disconnected{}, want: []string{ErrDisconnected.Error()},
			notWant: []string{"<nil>", "%!"}},
		{name: "protocol", err: &Protocol{Detail: "unexpected frame type 9"},
			want: []string{ErrProtocol.Error(), "unexpected frame type 9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("%q does not contain %q", s, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(s, w) {
					t.Errorf("%q contains %q", s, w)
				}
			}
		})
	}
}

// TestKindOf: each typed error, wrapped or not, is named by its kind;
// anything else is "other". Mutation caught: a kind matched by == (the
// wrapped cases fall to other).
func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"rejected", &Rejected{Status: 401}, KindRejected},
		{"rejected_wrapped", fmt.Errorf("stt connect: %w", &Rejected{Status: 503}), KindRejected},
		{"timeout", &Timeout{Op: "first byte"}, KindTimeout},
		{"disconnected", fmt.Errorf("tts: %w", &Disconnected{Cause: errors.New("EOF")}), KindDisconnected},
		{"protocol", &Protocol{Detail: "bad json"}, KindProtocol},
		{"closed", fmt.Errorf("send: %w", ErrClosed), KindClosed},
		{"other", errors.New("boom"), KindOther},
		{"nil", nil, KindOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.err); got != tc.want {
				t.Errorf("KindOf(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
