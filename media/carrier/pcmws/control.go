package pcmws

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
)

// ControlType is the kind of a client's control message.
type ControlType uint8

// The client's control messages.
const (
	// ControlMark echoes a mark: {"type":"mark","name":"end-3"}.
	ControlMark ControlType = iota + 1
	// ControlHangup ends the call: {"type":"hangup"}.
	ControlHangup
)

// Control is one parsed control message of the client.
type Control struct {
	Type ControlType
	// Name is the mark's name (ControlMark).
	Name string
}

// ParseControl parses a client's text message. Not one JSON object with a
// string "type" (and, for a mark, a string "name"): ErrBadControl. A type
// we do not know: ErrUnknownControl (answered with an error message but
// not counted towards MaxBadMessages, so that clients may send newer
// messages).
func ParseControl(data []byte) (Control, error) {
	var w struct {
		Type *string `json:"type"`
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return Control{}, fmt.Errorf("%w: %w", ErrBadControl, errNotJSON)
	}
	if w.Type == nil {
		return Control{}, fmt.Errorf("%w: %w", ErrBadControl, errNoType)
	}
	switch *w.Type {
	case "mark":
		if w.Name == nil {
			return Control{}, fmt.Errorf("%w: %w", ErrBadControl, errNoName)
		}
		return Control{Type: ControlMark, Name: *w.Name}, nil
	case "hangup":
		return Control{Type: ControlHangup}, nil
	default:
		// The type is outside input: only its length is reported.
		return Control{}, fmt.Errorf("%w: %w (a type of %d bytes)", ErrUnknownControl, errUnknown, len(*w.Type))
	}
}

// problem is the text the error message tells the client for err.
func problem(err error) string {
	for _, p := range []error{errNotJSON, errNoType, errNoName, errUnknown, errOddLength, errOversized} {
		if errors.Is(err, p) {
			return p.Error()
		}
	}
	return errUnexpected.Error()
}

// AppendError appends the server's error message, {"type":"error",
// "error":text}: the shape of the WebRTC websocket's.
func AppendError(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"error","error":`...)
	dst = wscall.AppendJSONString(dst, text)
	return append(dst, '}')
}

// AppendClear appends the server's clear message.
func AppendClear(dst []byte) []byte { return append(dst, `{"type":"clear"}`...) }

// AppendMark appends the server's mark message.
func AppendMark(dst []byte, name string) []byte {
	dst = append(dst, `{"type":"mark","name":`...)
	dst = wscall.AppendJSONString(dst, name)
	return append(dst, '}')
}

// AppendEvent appends an event message carrying data, already JSON.
func AppendEvent(dst, data []byte) []byte {
	dst = append(dst, `{"type":"event","data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

// parseRate reads the rate query parameter ("" is DefaultRate).
func parseRate(s string) (int, error) {
	if s == "" {
		return DefaultRate, nil
	}
	r, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: not a number", ErrBadRate)
	}
	switch r {
	case 8000, 16000, 24000, 48000:
		return r, nil
	}
	return 0, fmt.Errorf("%w: %d Hz", ErrBadRate, r)
}
