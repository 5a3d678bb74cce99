package sipfrag

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Status
		err  error
	}{
		{"trying", "SIP/2.0 100 Trying\r\n", Status{100, "Trying"}, nil},
		{"ok with headers", "SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", Status{200, "OK"}, nil},
		{"busy, no line break", "SIP/2.0 486 Busy Here", Status{486, "Busy Here"}, nil},
		{"bare LF", "SIP/2.0 503 Service Unavailable\nX: y", Status{503, "Service Unavailable"}, nil},
		{"no reason", "SIP/2.0 180", Status{180, ""}, nil},
		{"empty reason", "SIP/2.0 180 \r\n", Status{180, ""}, nil},
		{"lower-case version", "sip/2.0 200 OK", Status{200, "OK"}, nil},
		{"empty", "", Status{}, ErrMalformed},
		{"request line", "INVITE sip:a@b SIP/2.0\r\n", Status{}, ErrMalformed},
		{"old version", "SIP/1.0 200 OK", Status{}, ErrMalformed},
		{"two digits", "SIP/2.0 20 OK", Status{}, ErrMalformed},
		{"four digits", "SIP/2.0 2000 OK", Status{}, ErrMalformed},
		{"code 099", "SIP/2.0 099 x", Status{}, ErrMalformed},
		{"code 700", "SIP/2.0 700 x", Status{}, ErrMalformed},
		{"letters", "SIP/2.0 2x0 OK", Status{}, ErrMalformed},
		{"leading blank line", "\r\nSIP/2.0 200 OK", Status{}, ErrMalformed},
		{"NUL in reason", "SIP/2.0 200 O\x00K", Status{}, ErrMalformed},
		{"too long", "SIP/2.0 200 " + strings.Repeat("a", MaxLine), Status{}, ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v, %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestStatusClasses(t *testing.T) {
	tests := []struct {
		code           int
		final, success bool
	}{{100, false, false}, {180, false, false}, {200, true, true}, {299, true, true}, {300, true, false}, {603, true, false}}
	for _, tt := range tests {
		s := Status{Code: tt.code}
		if s.Final() != tt.final || s.Success() != tt.success {
			t.Errorf("%d: Final %v Success %v", tt.code, s.Final(), s.Success())
		}
	}
}

// FuzzParse: Parse never panics, reads only the first line, and what it
// accepts is a status in range whose reason holds no control character.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"SIP/2.0 100 Trying\r\n", "SIP/2.0 200 OK\r\n\r\n", "SIP/2.0 486 Busy Here", "SIP/2.0 7", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			if s != (Status{}) {
				t.Fatalf("error with a status: %+v", s)
			}
			return
		}
		if s.Code < 100 || s.Code > 699 || len(s.Reason) > MaxLine || strings.ContainsAny(s.Reason, "\r\n\x00") {
			t.Fatalf("accepted %+v", s)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	body := []byte("SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
