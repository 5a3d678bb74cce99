package dtmf_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// TestParseInfo is the INFO grammar, a case per rule, with the bodies real
// PBXs send (Asterisk, FreeSWITCH, Cisco: "Signal=5\r\nDuration=160\r\n";
// phones that send 10 and 11 for * and #).
// Mutations caught: named per group below.
func TestParseInfo(t *testing.T) {
	const relay = dtmf.TypeDTMFRelay
	cases := []struct {
		name, ctype, body string
		digit             byte
		dur               time.Duration
		err               error
	}{
		// The forms sent.
		{"asterisk", relay, "Signal=5\r\nDuration=160\r\n", '5', 160 * time.Millisecond, nil},
		{"star", relay, "Signal=*\r\nDuration=250\r\n", '*', 250 * time.Millisecond, nil},
		{"pound", relay, "Signal=#\r\nDuration=250\r\n", '#', 250 * time.Millisecond, nil},
		{"A-D", relay, "Signal=D\r\n", 'D', 0, nil},
		// Mutation: no folding of a-d (ErrUnknownKey).
		{"lower-case a-d", relay, "Signal=b\r\n", 'B', 0, nil},
		// Mutation: a table without the event-code forms.
		{"10 is *", relay, "Signal=10\r\nDuration=100\r\n", '*', 100 * time.Millisecond, nil},
		{"11 is #", relay, "Signal=11\r\n", '#', 0, nil},
		{"15 is D", relay, "Signal=15\r\n", 'D', 0, nil},
		// Mutation: case- or space-sensitive keys and values.
		{"case and spacing", relay, "signal = 7 \r\nDURATION= 90\r\n", '7', 90 * time.Millisecond, nil},
		{"tabs", relay, "Signal\t=\t3\r\n", '3', 0, nil},
		{"LF only", relay, "Signal=1\nDuration=100\n", '1', 100 * time.Millisecond, nil},
		{"no final newline", relay, "Duration=100\r\nSignal=0", '0', 100 * time.Millisecond, nil},
		{"blank lines", relay, "\r\nSignal=2\r\n\r\n", '2', 0, nil},
		{"other keys skipped", relay, "Signal=4\r\nDuration=100\r\nVolume=10\r\n", '4', 100 * time.Millisecond, nil},
		// Mutation: parameters or case in the content type refused.
		{"content type case and parameters", "Application/DTMF-Relay; charset=utf-8", "Signal=9\r\n", '9', 0, nil},
		{"application/dtmf", dtmf.TypeDTMF, "5", '5', 0, nil},
		{"application/dtmf with newline", dtmf.TypeDTMF, " #\r\n", '#', 0, nil},
		{"application/dtmf code", dtmf.TypeDTMF, "11", '#', 0, nil},
		{"duration 0", relay, "Signal=1\r\nDuration=0\r\n", '1', 0, nil},
		{"the longest duration", relay, "Signal=1\r\nDuration=60000\r\n", '1', time.Minute, nil},

		// Mutation: each check of the grammar removed accepts its body.
		{"no signal", relay, "Duration=160\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"empty body", relay, "", 0, 0, dtmf.ErrMalformedBody},
		{"empty signal", relay, "Signal=\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"signal twice", relay, "Signal=1\r\nSignal=2\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"duration twice", relay, "Signal=1\r\nDuration=1\r\nDuration=2\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a line without =", relay, "Signal=1\r\nhello\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"an empty key", relay, "=1\r\nSignal=1\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a key with a space", relay, "Sig nal=1\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a bare CR", relay, "Signal=1\rDuration=100\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a bare CR in a skipped line", relay, "Signal=1\r\nX=a\rb\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a NUL", relay, "Signal=1\x00\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a NUL in a skipped line", relay, "Signal=1\r\nX=\x00\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"DEL in a skipped line", relay, "Signal=1\r\nX=a\x7f\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a NUL after the key", dtmf.TypeDTMF, "5\x00", 0, 0, dtmf.ErrMalformedBody},
		{"non-ASCII", relay, "Signal=5\r\nDuration=1\xc2\xb5\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a negative duration", relay, "Signal=1\r\nDuration=-5\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a duration over a minute", relay, "Signal=1\r\nDuration=60001\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a huge duration", relay, "Signal=1\r\nDuration=99999999999999999999\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a word as signal", relay, "Signal=five\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"a code over 255", relay, "Signal=256\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"digits and letters", relay, "Signal=1a\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"nine lines", relay, strings.Repeat("X=1\r\n", 8) + "Signal=1\r\n", 0, 0, dtmf.ErrMalformedBody},
		{"application/dtmf two keys", dtmf.TypeDTMF, "1 2", 0, 0, dtmf.ErrMalformedBody},
		{"application/dtmf empty", dtmf.TypeDTMF, "\r\n", 0, 0, dtmf.ErrMalformedBody},
		// Mutation: the size bound removed (or checked after parsing).
		{"too large", relay, "Signal=1\r\n" + strings.Repeat(" ", dtmf.MaxInfoBody), 0, 0, dtmf.ErrBodyTooLarge},

		// Mutation: flash or codes taken as keys, or refused as malformed.
		{"hook flash !", relay, "Signal=!\r\nDuration=100\r\n", 0, 0, dtmf.ErrUnknownKey},
		{"hook flash 16", relay, "Signal=16\r\n", 0, 0, dtmf.ErrUnknownKey},
		{"event code 200", dtmf.TypeDTMF, "200", 0, 0, dtmf.ErrUnknownKey},
		{"a letter past D", relay, "Signal=E\r\n", 0, 0, dtmf.ErrUnknownKey},
		// Mutation: the unknown key reported before the rest is checked.
		{"flash in a malformed body", relay, "Signal=!\r\nDuration=x\r\n", 0, 0, dtmf.ErrMalformedBody},

		// Mutation: any type accepted.
		{"text/plain", "text/plain", "Signal=1\r\n", 0, 0, dtmf.ErrUnsupportedType},
		{"no type", "", "1", 0, 0, dtmf.ErrUnsupportedType},
		{"a prefix of the type", "application/dtmf-relayx", "Signal=1", 0, 0, dtmf.ErrUnsupportedType},
		{"a huge type", dtmf.TypeDTMF + ";" + strings.Repeat("a", 200), "1", 0, 0, dtmf.ErrUnsupportedType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := dtmf.ParseInfo(c.ctype, []byte(c.body), t0)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("ParseInfo = %+v, %v; want %v", got, err, c.err)
				}
				if got != (messages.DTMF{}) {
					t.Fatalf("a press %+v with the error", got)
				}
				return
			}
			want := messages.DTMF{Digit: c.digit, Source: messages.DTMFSIPInfo, Duration: c.dur, At: t0}
			if err != nil || got != want {
				t.Fatalf("ParseInfo = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

// TestParseInfoKeepsBodiesOutOfErrors: the caller's body and content type
// are its content, never in an error (which the SIP layer may log).
// Mutation caught: an error that quotes the value ("%q").
func TestParseInfoKeepsBodiesOutOfErrors(t *testing.T) {
	const secret = "4242"
	for _, c := range []struct{ ctype, body string }{
		{dtmf.TypeDTMFRelay, "Signal=" + secret + "\r\n"},
		{dtmf.TypeDTMFRelay, "Signal=1\r\nDuration=" + secret + "x\r\n"},
		{dtmf.TypeDTMFRelay, secret + "\r\n"},
		{"text/" + secret, "1"},
		{dtmf.TypeDTMF, secret + "x"},
	} {
		_, err := dtmf.ParseInfo(c.ctype, []byte(c.body), t0)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("ParseInfo(%q, %q): %v", c.ctype, c.body, err)
		}
	}
}
