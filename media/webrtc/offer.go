package webrtc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pion/sdp/v3"
	pion "github.com/pion/webrtc/v4"
)

// maxRemoteCandidates bounds the candidates a client may give one call,
// in its offer and trickled: each is paired with every local candidate and
// checked by the ICE agent, so an unbounded list costs memory and makes
// the server send checks wherever the client says. A browser gives a few
// per interface (host, server-reflexive, relay; UDP and TCP).
const maxRemoteCandidates = 50

// Offer is a validated offer: its SDP, the payload type the offer gives
// Opus, and whether the audio m-line says the client sends.
type Offer struct {
	SDP string
	// OpusPayloadType is the payload type of the first Opus format of the
	// first audio m-line that offers it.
	OpusPayloadType uint8
}

// sessionDescription is the JSON shape of an offer and of an answer (the
// browser's RTCSessionDescriptionInit, plus the call id in answers).
type sessionDescription struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	Call string `json:"call,omitempty"`
}

// ParseOffer reads and validates an offer body: a JSON object
// {"sdp": "...", "type": "offer"} of at most maxBytes, whose SDP parses and
// has an audio m-line offering Opus at 48 kHz. It returns ErrOfferTooLarge,
// ErrBadOffer, ErrBadSDP, ErrNoAudio or ErrNoOpus (wrapped, with a reason that quotes
// nothing of the body: SDP holds addresses). It does not touch the network.
func ParseOffer(body []byte, maxBytes int64) (Offer, error) {
	if int64(len(body)) > maxBytes {
		return Offer{}, fmt.Errorf("%w: %d bytes, at most %d", ErrOfferTooLarge, len(body), maxBytes)
	}
	var desc sessionDescription
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&desc); err != nil {
		return Offer{}, fmt.Errorf("%w: body is not the json object {sdp, type}", ErrBadOffer)
	}
	if dec.More() {
		return Offer{}, fmt.Errorf("%w: trailing data after the json object", ErrBadOffer)
	}
	if desc.Type != "offer" {
		return Offer{}, fmt.Errorf("%w: type is not \"offer\"", ErrBadOffer)
	}
	if strings.TrimSpace(desc.SDP) == "" {
		return Offer{}, fmt.Errorf("%w: empty sdp", ErrBadSDP)
	}
	parsed, err := (&pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: desc.SDP}).Unmarshal()
	if err != nil {
		return Offer{}, fmt.Errorf("%w: sdp does not parse", ErrBadSDP)
	}
	cands := 0
	for _, md := range parsed.MediaDescriptions {
		if md == nil {
			continue
		}
		for _, a := range md.Attributes {
			if a.Key == "candidate" {
				cands++
			}
		}
	}
	if cands > maxRemoteCandidates {
		return Offer{}, fmt.Errorf("%w: %d candidates, at most %d", ErrBadSDP, cands, maxRemoteCandidates)
	}
	audio := false
	for _, md := range parsed.MediaDescriptions {
		if md == nil || md.MediaName.Media != "audio" {
			continue
		}
		audio = true
		if pt, ok := opusPayloadType(md.MediaName.Formats, md.Attributes); ok {
			return Offer{SDP: desc.SDP, OpusPayloadType: pt}, nil
		}
	}
	if !audio {
		return Offer{}, fmt.Errorf("%w: no audio m-line", ErrNoAudio)
	}
	return Offer{}, fmt.Errorf("%w: the audio m-lines offer no opus/48000", ErrNoOpus)
}

// opusPayloadType finds an rtpmap "<pt> opus/48000[/2]" whose payload type
// is among the m-line's formats.
func opusPayloadType(formats []string, attrs []sdp.Attribute) (uint8, bool) {
	for _, a := range attrs {
		if a.Key != "rtpmap" {
			continue
		}
		ptText, codec, ok := strings.Cut(a.Value, " ")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(strings.TrimSpace(codec), "/")
		rate, _, _ := strings.Cut(rest, "/")
		if !strings.EqualFold(name, "opus") || rate != "48000" {
			continue
		}
		pt, err := strconv.ParseUint(ptText, 10, 7)
		if err != nil {
			continue
		}
		for _, f := range formats {
			if f == ptText {
				return uint8(pt), true
			}
		}
	}
	return 0, false
}
