package webrtc

import (
	"errors"
	"strings"
	"testing"
)

// realOffer is the shape of a browser's audio offer.
var realOffer = sdpLines(append(append([]string{}, sdpHead...),
	"m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126",
	"c=IN IP4 0.0.0.0",
	"a=rtcp:9 IN IP4 0.0.0.0",
	"a=candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host generation 0",
	"a=mid:0",
	"a=sendrecv",
	"a=rtcp-mux",
	"a=rtpmap:111 opus/48000/2",
	"a=rtcp-fb:111 transport-cc",
	"a=fmtp:111 minptime=10;useinbandfec=1",
	"a=rtpmap:0 PCMU/8000",
	"a=rtpmap:126 telephone-event/8000",
	"a=setup:actpass",
)...)

// FuzzOffer: the offer parser never panics, fails only with its
// sentinels, and what it accepts names an Opus payload type of the offer.
func FuzzOffer(f *testing.F) {
	f.Add([]byte(offerBody(realOffer)))
	f.Add([]byte(`{"type":"offer","sdp":"v=0\r\n"}`))
	f.Add([]byte(`{"type":"offer","sdp":""}`))
	f.Add([]byte(`{"type":"answer","sdp":"v=0"}`))
	f.Add([]byte(`{"type":"offer"} {}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(offerBody(strings.Replace(realOffer, "opus/48000/2", "OPUS/48000", 1))))
	f.Add([]byte(offerBody(strings.Replace(realOffer, "m=audio", "m=video", 1))))
	f.Add([]byte(offerBody(strings.Replace(realOffer, "rtpmap:111", "rtpmap:300", 1))))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseOffer(body, DefaultMaxOfferBytes)
		if err != nil {
			for _, s := range []error{ErrOfferTooLarge, ErrBadOffer, ErrBadSDP, ErrNoAudio, ErrNoOpus} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if o.OpusPayloadType > 127 || o.SDP == "" {
			t.Fatalf("accepted %+v", o)
		}
		if !strings.Contains(strings.ToLower(o.SDP), "opus/48000") {
			t.Fatal("accepted an offer without opus/48000")
		}
	})
}

// FuzzWSMessage: the websocket parser never panics, fails only with
// ErrBadMessage, and what it accepts is a bye or a bounded candidate.
func FuzzWSMessage(f *testing.F) {
	f.Add([]byte(`{"type":"candidate","candidate":{"candidate":"candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host","sdpMid":"0","sdpMLineIndex":0}}`))
	f.Add([]byte(`{"type":"candidate","candidate":null}`))
	f.Add([]byte(`{"type":"candidate"}`))
	f.Add([]byte(`{"type":"bye","reason":"x"}`))
	f.Add([]byte(`{"type":"dance"}`))
	f.Add([]byte(`{"type":7}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseWSMessage(data)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) {
				t.Fatalf("error %v does not wrap ErrBadMessage", err)
			}
			return
		}
		switch m.Type {
		case MsgBye:
		case MsgCandidate:
			if m.Candidate != nil && len(m.Candidate.Candidate) > maxCandidateBytes {
				t.Fatalf("candidate of %d bytes accepted", len(m.Candidate.Candidate))
			}
		default:
			t.Fatalf("accepted type %q", m.Type)
		}
	})
}

// TestParseWSMessage covers the message kinds by name.
// Mutations caught: a null candidate taken as a parse error, an unknown
// type accepted, the candidate bound dropped.
func TestParseWSMessage(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		typ     string
		hasCand bool
		bad     bool
	}{
		{"candidate", `{"type":"candidate","candidate":{"candidate":"candidate:1 1 udp 1 127.0.0.1 5 typ host","sdpMid":"0"}}`, MsgCandidate, true, false},
		{"end of candidates", `{"type":"candidate","candidate":null}`, MsgCandidate, false, false},
		{"bye", `{"type":"bye"}`, MsgBye, false, false},
		{"extra fields ignored", `{"type":"bye","why":1}`, MsgBye, false, false},
		{"candidate missing", `{"type":"candidate"}`, "", false, true},
		{"candidate not an object", `{"type":"candidate","candidate":5}`, "", false, true},
		{"candidate too long", `{"type":"candidate","candidate":{"candidate":"` + strings.Repeat("a", 2000) + `"}}`, "", false, true},
		{"unknown type", `{"type":"offer"}`, "", false, true},
		{"no type", `{"candidate":null}`, "", false, true},
		{"type not a string", `{"type":1}`, "", false, true},
		{"trailing data", `{"type":"bye"}x`, "", false, true},
		{"not json", `bye`, "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseWSMessage([]byte(tc.in))
			if tc.bad {
				if !errors.Is(err, ErrBadMessage) {
					t.Fatalf("err %v, want ErrBadMessage", err)
				}
				if strings.Contains(err.Error(), "aaaa") {
					t.Fatal("the reason quotes the message")
				}
				return
			}
			if err != nil || m.Type != tc.typ || (m.Candidate != nil) != tc.hasCand {
				t.Fatalf("got %+v, %v", m, err)
			}
		})
	}
}

// TestParseOffer: a browser-shaped offer is accepted with its Opus payload
// type. Mutation caught: the payload type taken from the wrong rtpmap.
func TestParseOffer(t *testing.T) {
	o, err := ParseOffer([]byte(offerBody(strings.ReplaceAll(realOffer, "111", "109"))), DefaultMaxOfferBytes)
	if err != nil {
		t.Fatal(err)
	}
	if o.OpusPayloadType != 109 {
		t.Fatalf("opus payload type %d, want 109", o.OpusPayloadType)
	}
}
