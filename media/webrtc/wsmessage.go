package webrtc

import (
	"bytes"
	"encoding/json"
	"fmt"

	pion "github.com/pion/webrtc/v4"
)

// The message types of the websocket.
const (
	// MsgCandidate carries a trickled ICE candidate, both ways; a null
	// candidate ends the candidates of its sender.
	MsgCandidate = "candidate"
	// MsgBye ends the call: from the client, it hangs up; from the server,
	// it says why the call ended, just before the websocket closes.
	MsgBye = "bye"
	// MsgError answers a client message the server could not take.
	MsgError = "error"
)

// maxCandidateBytes bounds the candidate line of one message: a real one
// is under 200 bytes.
const maxCandidateBytes = 1024

// WSMessage is a message of the client on the websocket.
type WSMessage struct {
	Type string
	// Candidate is the trickled candidate of a MsgCandidate; nil for the
	// end of candidates.
	Candidate *pion.ICECandidateInit
}

// wsCandidate is the JSON shape of a candidate message, both ways.
type wsCandidate struct {
	Type      string                 `json:"type"`
	Candidate *pion.ICECandidateInit `json:"candidate"`
}

// wsError and wsBye are the server's other messages.
type wsError struct {
	Type  string `json:"type"`
	Error string `json:"error"`
}

type wsBye struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// ParseWSMessage parses a text message of the client: a JSON object with a
// "type" of "candidate" (with "candidate": an RTCIceCandidateInit or null)
// or "bye". Anything else is an ErrBadMessage whose reason quotes nothing
// of the message. Fields it does not know are ignored.
func ParseWSMessage(data []byte) (WSMessage, error) {
	var raw struct {
		Type      *string         `json:"type"`
		Candidate json.RawMessage `json:"candidate"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return WSMessage{}, fmt.Errorf("%w: not a json object with a string type", ErrBadMessage)
	}
	if dec.More() {
		return WSMessage{}, fmt.Errorf("%w: trailing data after the json object", ErrBadMessage)
	}
	if raw.Type == nil {
		return WSMessage{}, fmt.Errorf("%w: no type", ErrBadMessage)
	}
	switch *raw.Type {
	case MsgBye:
		return WSMessage{Type: MsgBye}, nil
	case MsgCandidate:
	default:
		return WSMessage{}, fmt.Errorf("%w: unknown type", ErrBadMessage)
	}
	if len(raw.Candidate) == 0 {
		return WSMessage{}, fmt.Errorf("%w: candidate message without a candidate (null ends them)", ErrBadMessage)
	}
	if bytes.Equal(raw.Candidate, []byte("null")) {
		return WSMessage{Type: MsgCandidate}, nil
	}
	var c pion.ICECandidateInit
	if err := json.Unmarshal(raw.Candidate, &c); err != nil {
		return WSMessage{}, fmt.Errorf("%w: candidate is not an RTCIceCandidateInit", ErrBadMessage)
	}
	switch {
	case len(c.Candidate) > maxCandidateBytes:
		return WSMessage{}, fmt.Errorf("%w: candidate of %d bytes, at most %d", ErrBadMessage, len(c.Candidate), maxCandidateBytes)
	case c.SDPMid != nil && len(*c.SDPMid) > 64, c.UsernameFragment != nil && len(*c.UsernameFragment) > 256:
		return WSMessage{}, fmt.Errorf("%w: candidate mid or ufrag too long", ErrBadMessage)
	}
	return WSMessage{Type: MsgCandidate, Candidate: &c}, nil
}
