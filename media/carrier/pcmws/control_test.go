package pcmws

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestParseControl: the client's shapes parse; the rest is ErrBadControl
// or ErrUnknownControl. Mutation caught: a mark without a name taken as
// the echo of "" (it would match a mark named "").
func TestParseControl(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want Control
		err  error
	}{
		{"mark", `{"type":"mark","name":"end-3"}`, Control{Type: ControlMark, Name: "end-3"}, nil},
		{"mark with escapes", `{"name":"end-\"3\"","type":"mark"}`, Control{Type: ControlMark, Name: `end-"3"`}, nil},
		{"hangup", `{"type":"hangup"}`, Control{Type: ControlHangup}, nil},
		{"hangup with extras", `{"type":"hangup","reason":"done"}`, Control{Type: ControlHangup}, nil},
		{"unknown type", `{"type":"dance"}`, Control{}, ErrUnknownControl},
		{"no type", `{"name":"x"}`, Control{}, ErrBadControl},
		{"type not a string", `{"type":1}`, Control{}, ErrBadControl},
		{"mark without name", `{"type":"mark"}`, Control{}, ErrBadControl},
		{"not an object", `"mark"`, Control{}, ErrBadControl},
		{"truncated", `{"type":"ma`, Control{}, ErrBadControl},
		{"empty", ``, Control{}, ErrBadControl},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseControl([]byte(tc.in))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) || got != tc.want {
				t.Fatalf("ParseControl(%q) = %+v, %v; want %+v, %v", tc.in, got, err, tc.want, tc.err)
			}
		})
	}
}

// TestServerMessages: the server's control messages are the JSON the
// protocol documents.
func TestServerMessages(t *testing.T) {
	var m map[string]any
	if err := json.Unmarshal(AppendMark(nil, "end-\n1"), &m); err != nil || m["type"] != "mark" || m["name"] != "end-\n1" {
		t.Fatalf("mark %v, %v", m, err)
	}
	if err := json.Unmarshal(AppendClear(nil), &m); err != nil || m["type"] != "clear" {
		t.Fatalf("clear %v, %v", m, err)
	}
	m = nil
	if err := json.Unmarshal(AppendEvent(nil, []byte(`{"k":1}`)), &m); err != nil || m["type"] != "event" || m["data"].(map[string]any)["k"] != 1.0 {
		t.Fatalf("event %v, %v", m, err)
	}
}

// FuzzControl: ParseControl never panics, its errors are typed and map
// to one of the documented mistakes the client is told (never the
// catch-all), and a parsed mark re-encoded by the server's encoder
// parses to itself; the error message the client gets is JSON of the
// documented shape.
func FuzzControl(f *testing.F) {
	for _, s := range []string{`{"type":"mark","name":"end-3"}`, `{"type":"hangup"}`, `{"type":"dance"}`,
		`{"type":"mark","name":"\u00e9\ud83d\ude00"}`, `{"type":null}`, `[]`, "{\"type\":\"mark\",\"name\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseControl(data)
		if err != nil {
			if !errors.Is(err, ErrBadControl) && !errors.Is(err, ErrUnknownControl) {
				t.Fatalf("untyped error %v", err)
			}
			text := problem(err)
			if text == errUnexpected.Error() {
				t.Fatalf("error %v has no text for the client", err)
			}
			var m map[string]string
			if json.Unmarshal(AppendError(nil, text), &m) != nil || len(m) != 2 || m["type"] != "error" || m["error"] != text {
				t.Fatalf("error message %q", AppendError(nil, text))
			}
			return
		}
		if c.Type != ControlMark && c.Type != ControlHangup {
			t.Fatalf("type %d without an error", c.Type)
		}
		if c.Type == ControlMark {
			back, err := ParseControl(AppendMark(nil, c.Name))
			if err != nil || back != c {
				t.Fatalf("mark %q round-trips to %+v, %v", c.Name, back, err)
			}
		}
	})
}
