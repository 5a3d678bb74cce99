package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// secretDatagram is unparseable (a header line without a colon) and full
// of what must not be logged: numbers, a name, a Call-ID.
const secretDatagram = "INVITE sip:+15551234567@brisvox.example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKsecretbranch\r\n" +
	"From: \"Zoe Secretname\" <sip:+15557654321@trunk.example.net>;tag=99887766\r\n" +
	"Call-ID: secret-call-id-4711@192.0.2.10\r\n" +
	"This line has no colon and is quoted in the parse error\r\n\r\n"

// leaked reports a run of 8 bytes of secret found in out.
func leaked(out, secret string) (string, bool) {
	for i := 0; i+8 <= len(secret); i++ {
		if w := secret[i : i+8]; strings.Contains(out, w) {
			return w, true
		}
	}
	return "", false
}

// syncBuffer is a log sink written by sipgo's goroutines, read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSlogHandlerDropsAttrs: the lines sipgo writes, as it writes them
// (its source, v1.7.3), come out with the level, a constant message and
// the count of dropped attributes, and no byte run of what they carried.
// Mutation caught: a handler that writes the attributes (or the message
// when it is not one of sipgo's constants) leaks the datagram.
func TestSlogHandlerDropsAttrs(t *testing.T) {
	parseErr := errors.New(`field name with no value in header: "This line has no colon and is quoted in the parse error"`)
	req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", User: "+15551234567", Host: "brisvox.example.com"})
	cases := []struct {
		name    string
		log     func(l *slog.Logger)
		level   string
		message string
		dropped int
	}{
		{"unparseable datagram", func(l *slog.Logger) {
			l.Error("failed to parse", "data", secretDatagram, "error", parseErr)
		}, "error", "failed to parse", 2},
		{"start line", func(l *slog.Logger) {
			l.Error("Server tx failed to handle request", "error", parseErr, "req", req.StartLine())
		}, "error", "Server tx failed to handle request", 2},
		{"caller of a With", func(l *slog.Logger) {
			l.With("caller", "Transport<UDP>").Warn("connection pool not clean cleanup", "error", parseErr)
		}, "warn", "connection pool not clean cleanup", 2},
		{"group", func(l *slog.Logger) {
			l.WithGroup("g").Info("New connection", "raddr", "192.0.2.10:5060")
		}, "info", "New connection", 1},
		{"formatted message", func(l *slog.Logger) {
			l.Debug("WS read connection header <- "+secretDatagram, "caller", "192.0.2.10:5060")
		}, "debug", withheld, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			h := NewSlogHandler(zerolog.New(&out))
			c.log(slog.New(h))
			var line map[string]any
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatalf("not one JSON line: %q", out.String())
			}
			want := map[string]any{"level": c.level, "component": "sipgo", "message": c.message, "dropped_attrs": float64(c.dropped)}
			if len(line) != len(want) {
				t.Fatalf("fields %v; want %v", line, want)
			}
			for k, v := range want {
				if line[k] != v {
					t.Fatalf("%s = %v; want %v (line %s)", k, line[k], v, out.String())
				}
			}
			if w, ok := leaked(out.String(), secretDatagram+parseErr.Error()+req.StartLine()); ok {
				t.Fatalf("%q of the message is in the log: %s", w, out.String())
			}
			if got := h.(*SlogHandler).Dropped(); got != uint64(c.dropped) {
				t.Fatalf("Dropped() = %d; want %d", got, c.dropped)
			}
		})
	}
}

func TestSlogHandlerEnabled(t *testing.T) {
	cases := []struct {
		name  string
		level zerolog.Level
		slog  slog.Level
		want  bool
	}{
		{"debug at debug", zerolog.DebugLevel, slog.LevelDebug, true},
		{"debug at info", zerolog.InfoLevel, slog.LevelDebug, false},
		{"error at warn", zerolog.WarnLevel, slog.LevelError, true},
		{"warn at error", zerolog.ErrorLevel, slog.LevelWarn, false},
		{"error when disabled", zerolog.Disabled, slog.LevelError, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewSlogHandler(zerolog.New(nil).Level(c.level))
			if got := h.Enabled(context.Background(), c.slog); got != c.want {
				t.Fatalf("Enabled = %v; want %v", got, c.want)
			}
		})
	}
}

// TestSlogHandlerSipgoUDP: a real sipgo UDP transport on loopback gets
// an unparseable datagram. Given a plain JSON slog handler, sipgo logs
// the datagram whole (the control: the danger is real); given ours, the
// line is there and holds no byte run of the datagram.
func TestSlogHandlerSipgoUDP(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	var plain syncBuffer
	serveOneDatagram(t, slog.NewJSONHandler(&plain, &slog.HandlerOptions{Level: slog.LevelDebug}), &plain)
	if !strings.Contains(plain.String(), "secret-call-id-4711") {
		t.Fatalf("control: sipgo did not log the datagram: %s", plain.String())
	}

	var ours syncBuffer
	h := NewSlogHandler(zerolog.New(&ours))
	serveOneDatagram(t, h, &ours)
	if !strings.Contains(ours.String(), `"message":"failed to parse"`) {
		t.Fatalf("no parse failure logged: %s", ours.String())
	}
	if w, ok := leaked(ours.String(), secretDatagram); ok {
		t.Fatalf("%q of the datagram is in our log: %s", w, ours.String())
	}
	if h.(*SlogHandler).Dropped() < 2 {
		t.Fatalf("Dropped() = %d; want the data and the error at least", h.(*SlogHandler).Dropped())
	}
}

// serveOneDatagram runs a sipgo transport layer logging to h on a
// loopback UDP socket, sends it secretDatagram, waits for the parse
// failure to be logged to out, and closes it all.
func serveOneDatagram(t *testing.T, h slog.Handler, out *syncBuffer) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := sip.NewTransportLayer(net.DefaultResolver, sip.NewParser(), nil, sip.WithTransportLayerLogger(slog.New(h)))
	served := make(chan error, 1)
	go func() { served <- tl.ServeUDP(pc) }()

	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(secretDatagram)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "failed to parse") {
		if time.Now().After(deadline) {
			t.Fatalf("no parse failure logged in 10 s: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	pc.Close()
	<-served
}
