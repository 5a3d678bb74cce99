package sdp

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAnswerCodec: the codec is the first of our preference the offer
// has, with telephone-event and CN only at its clock.
// Mutation caught: choosing by the offer's order (baresip's PCMU first
// would win over G.722), or taking telephone-event/8000 beside Opus.
func TestAnswerCodec(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		offer  string
		codec  Codec
		pt     uint8
		clock  int
		rate   int
		chans  int
		events int // -1: none
		cn     int // -1: none
	}{
		{"sipp uac: PCMU only", Config{}, offerSippUAC, PCMU, 0, 8000, 8000, 1, -1, -1},
		{"sipp pcap: PCMA and events", Config{}, offerSippPcap, PCMA, 8, 8000, 8000, 1, 101, -1},
		{"baresip: opus over its PCMU first", Config{}, offerBaresip, Opus, 96, 48000, 48000, 2, -1, -1},
		{"baresip: G722 when preferred", Config{Codecs: []Codec{G722, Opus}}, offerBaresip, G722, 9, 8000, 16000, 1, 101, -1},
		{"baresip: PreferEvents skips opus without te/48000", Config{PreferEvents: true}, offerBaresip, G722, 9, 8000, 16000, 1, 101, -1},
		{"baresip opus-only: PreferEvents falls to PCMU", Config{PreferEvents: true}, offerBaresipOpus, PCMU, 0, 8000, 8000, 1, 101, -1},
		{"twilio: PCMU", Config{}, offerTwilio, PCMU, 0, 8000, 8000, 1, 101, -1},
		{"twilio: PCMA when preferred", Config{Codecs: []Codec{PCMA, PCMU}}, offerTwilio, PCMA, 8, 8000, 8000, 1, 101, -1},
		{"asterisk: G722", Config{}, offerAsterisk, G722, 9, 8000, 16000, 1, 101, -1},
		{"gateway: opus with te/48000", Config{}, offerOpusEvents48, Opus, 111, 48000, 48000, 1, 110, -1},
		{"gateway: PCMU with te/8000 and CN", Config{Codecs: []Codec{PCMU}}, offerOpusEvents48, PCMU, 0, 8000, 8000, 1, 126, 13},
		{"gateway: CN declined", Config{Codecs: []Codec{PCMU}, NoComfortNoise: true}, offerOpusEvents48, PCMU, 0, 8000, 8000, 1, 126, -1},
		{"events declined", Config{NoTelephoneEvents: true}, offerTwilio, PCMU, 0, 8000, 8000, 1, -1, -1},
		{"rtpmap names in any case", Config{}, strings.NewReplacer("opus/", "OPUS/", "telephone-event/48000", "Telephone-Event/48000").Replace(offerOpusEvents48), Opus, 111, 48000, 48000, 1, 110, -1},
		{"static PT without rtpmap", Config{Codecs: []Codec{PCMA}}, offerAudioVideo, PCMA, 8, 8000, 8000, 1, 101, -1},
		{"dynamic PT for PCMU", Config{}, strings.NewReplacer("RTP/AVP 0 101", "RTP/AVP 100 101", "rtpmap:0 PCMU", "rtpmap:100 PCMU").Replace(offerIPv6), PCMU, 100, 8000, 8000, 1, 101, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := local4
			if strings.Contains(tt.offer, "IP6") {
				l = local6
			}
			s := newSession(t, tt.cfg, l)
			answer, n, err := s.Answer([]byte(tt.offer))
			if err != nil {
				t.Fatal(err)
			}
			if n.Codec != tt.codec || n.PayloadType != tt.pt || n.ClockRate != tt.clock || n.SampleRate != tt.rate || n.Channels != tt.chans {
				t.Fatalf("got %s pt %d clock %d rate %d channels %d", n.Codec, n.PayloadType, n.ClockRate, n.SampleRate, n.Channels)
			}
			if n.HasEvents != (tt.events >= 0) || (n.HasEvents && int(n.EventPT) != tt.events) {
				t.Fatalf("events %v pt %d, want %d", n.HasEvents, n.EventPT, tt.events)
			}
			if n.HasCN != (tt.cn >= 0) || (n.HasCN && int(n.CNPT) != tt.cn) {
				t.Fatalf("cn %v pt %d, want %d", n.HasCN, n.CNPT, tt.cn)
			}
			// The answer lists exactly the agreed formats, each with its
			// rtpmap at the codec's clock.
			sd := reparse(t, answer)
			md := sd.MediaDescriptions[n.MediaIndex]
			want := []string{itoa(tt.pt)}
			if tt.events >= 0 {
				want = append(want, itoa(uint8(tt.events)))
			}
			if tt.cn >= 0 {
				want = append(want, itoa(uint8(tt.cn)))
			}
			if !slices.Equal(md.MediaName.Formats, want) {
				t.Fatalf("answer formats %v, want %v", md.MediaName.Formats, want)
			}
			in, _ := tt.codec.info()
			if c, err := sd.GetCodecForPayloadType(tt.pt); err != nil || !strings.EqualFold(c.Name, in.name) || int(c.ClockRate) != tt.clock {
				t.Fatalf("answer's rtpmap for %d: %+v %v", tt.pt, c, err)
			}
			if tt.events >= 0 {
				c, err := sd.GetCodecForPayloadType(uint8(tt.events))
				if err != nil || c.Name != "telephone-event" || int(c.ClockRate) != tt.clock || c.Fmtp != "0-15" {
					t.Fatalf("answer's telephone-event: %+v %v", c, err)
				}
			}
		})
	}
}

func itoa(v uint8) string { return string(appendUint(nil, uint64(v))) }

func appendUint(b []byte, v uint64) []byte {
	if v >= 10 {
		b = appendUint(b, v/10)
	}
	return append(b, byte('0'+v%10))
}

// TestAnswerKeepsMLines: every m-line of the offer is answered, in order;
// all but the chosen audio one with port 0 and the offer's profile.
// Mutation caught: dropping refused m-lines (RFC 3264 §6), or answering
// the SRTP stream.
func TestAnswerKeepsMLines(t *testing.T) {
	offer := sdpText(
		"v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0",
		"m=video 5000 RTP/AVP 96", "a=rtpmap:96 H264/90000",
		"m=audio 5002 RTP/SAVP 0", "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAAA",
		"m=audio 5004 RTP/AVP 8",
		"m=audio 5006 RTP/AVP 0",
		"m=application 5008 UDP/DTLS/SCTP webrtc-datachannel",
		"m=audio 0 RTP/AVP 0")
	s := newSession(t, Config{}, local4)
	answer, n, err := s.Answer([]byte(offer))
	if err != nil {
		t.Fatal(err)
	}
	if n.MediaIndex != 2 || n.Codec != PCMA {
		t.Fatalf("took m-line %d codec %s, want 2 PCMA", n.MediaIndex, n.Codec)
	}
	sd := reparse(t, answer)
	want := []struct {
		media, proto string
		port         int
	}{
		{"video", "RTP/AVP", 0}, {"audio", "RTP/SAVP", 0}, {"audio", "RTP/AVP", 20000},
		{"audio", "RTP/AVP", 0}, {"application", "UDP/DTLS/SCTP", 0}, {"audio", "RTP/AVP", 0},
	}
	if len(sd.MediaDescriptions) != len(want) {
		t.Fatalf("%d m-lines, want %d", len(sd.MediaDescriptions), len(want))
	}
	for i, w := range want {
		md := sd.MediaDescriptions[i]
		if md.MediaName.Media != w.media || proto(md) != w.proto || md.MediaName.Port.Value != w.port || len(md.MediaName.Formats) == 0 {
			t.Errorf("m-line %d: %s, want %+v", i, md.MediaName.String(), w)
		}
		if w.port == 0 && len(md.Attributes) != 0 {
			t.Errorf("refused m-line %d has attributes %v", i, mediaAttrs(md))
		}
	}
	if c := sd.ConnectionInformation; c == nil || c.Address.Address != "192.0.2.100" || c.AddressType != "IP4" {
		t.Fatalf("answer c= %+v", c)
	}
	if sd.Origin.UnicastAddress != "192.0.2.100" || sd.SessionName != "brisvox" {
		t.Fatalf("o= %+v s= %q", sd.Origin, sd.SessionName)
	}
}

// TestAnswerRefusals: what is refused, with which error, response code
// and Warning.
// Mutation caught: an SRTP-only offer answered as no codec (the 488 would
// say the wrong thing), or a codec matched by name at the wrong clock.
func TestAnswerRefusals(t *testing.T) {
	head := []string{"v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0"}
	off := func(lines ...string) string { return sdpText(append(slices.Clone(head), lines...)...) }
	tests := []struct {
		name    string
		cfg     Config
		offer   string
		err     error
		code    int
		warning string // prefix; "" for none
	}{
		{"no common codec", Config{}, off("m=audio 5000 RTP/AVP 3 18", "a=rtpmap:18 G729/8000"), ErrNoCommonCodec, 488,
			`305 brisvox "Incompatible media format: we accept opus/48000/2 G722/8000 PCMU/8000 PCMA/8000"`},
		{"only our excluded codec", Config{Codecs: []Codec{Opus}}, offerTwilio, ErrNoCommonCodec, 488, `305 brisvox "Incompatible media format: we accept opus/48000/2"`},
		{"only telephone-event", Config{}, off("m=audio 5000 RTP/AVP 101", "a=rtpmap:101 telephone-event/8000"), ErrNoCommonCodec, 488, "305 "},
		{"opus at the wrong clock", Config{}, off("m=audio 5000 RTP/AVP 96", "a=rtpmap:96 opus/16000/2"), ErrNoCommonCodec, 488, "305 "},
		{"PCMU stereo", Config{}, off("m=audio 5000 RTP/AVP 0", "a=rtpmap:0 PCMU/8000/2"), ErrNoCommonCodec, 488, "305 "},
		{"dynamic PT without rtpmap", Config{}, off("m=audio 5000 RTP/AVP 96"), ErrNoCommonCodec, 488, "305 "},
		{"SRTP only", Config{}, off("m=audio 5000 RTP/SAVP 0", "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAAA"), ErrUnsupportedProfile, 488, "302 "},
		{"WebRTC only", Config{}, off("m=audio 9 UDP/TLS/RTP/SAVPF 111", "a=rtpmap:111 opus/48000/2"), ErrUnsupportedProfile, 488, "302 "},
		{"port range", Config{}, off("m=audio 5000/2 RTP/AVP 0"), ErrUnsupportedProfile, 488, "302 "},
		{"video only", Config{}, off("m=video 5000 RTP/AVP 96", "a=rtpmap:96 VP8/90000"), ErrNoAudio, 488, "304 "},
		{"audio disabled", Config{}, off("m=audio 0 RTP/AVP 0"), ErrNoAudio, 488, "304 "},
		{"no media", Config{}, off(), ErrNoAudio, 488, "304 "},
		{"host name", Config{}, strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP4 pbx.example.com", 1), ErrUnsupportedAddress, 488, "301 "},
		{"multicast with TTL", Config{}, strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP4 224.2.1.1/127", 1), ErrUnsupportedAddress, 488, "301 "},
		{"multicast", Config{}, strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP4 224.2.1.1", 1), ErrUnsupportedAddress, 488, "301 "},
		{"IPv6 to our IPv4", Config{}, offerIPv6, ErrUnsupportedAddress, 488, `301 brisvox "Incompatible network address formats: we accept IPv4`},
		{"scoped address", Config{}, strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP6 fe80::1%eth0", 1), ErrUnsupportedAddress, 488, "301 "},
		{"IP4 with an IPv6 literal", Config{}, strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP4 2001:db8::1", 1), ErrMalformed, 400, ""},
		{"no c= at all", Config{}, sdpText("v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "t=0 0", "m=audio 5000 RTP/AVP 0"), ErrMalformed, 400, ""},
		{"bad a=rtcp", Config{}, strings.Replace(offerSippUAC, "a=rtpmap:0 PCMU/8000", "a=rtcp:x", 1), ErrMalformed, 400, ""},
		{"a=rtcp port 0", Config{}, strings.Replace(offerSippUAC, "a=rtpmap:0 PCMU/8000", "a=rtcp:0", 1), ErrMalformed, 400, ""},
		{"not SDP", Config{}, "hello\r\n", ErrMalformed, 400, ""},
		{"empty", Config{}, "\r\n", ErrMalformed, 400, ""},
		{"no t= line", Config{}, sdpText("v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "m=audio 5000 RTP/AVP 0"), ErrMalformed, 400, ""},
		{"NUL in a value", Config{}, strings.Replace(offerSippUAC, "s=-", "s=a\x00b", 1), ErrMalformed, 400, ""},
		{"bare CR inside a line", Config{}, strings.Replace(offerSippUAC, "s=-", "s=a\rb", 1), ErrMalformed, 400, ""},
		{"too large", Config{}, offerSippUAC + strings.Repeat("a=x-pad:"+strings.Repeat("x", 100)+"\r\n", 170), ErrTooLarge, 413, ""},
		{"too many m-lines", Config{}, off(slices.Repeat([]string{"m=video 0 RTP/AVP 96"}, 9)...), ErrTooLarge, 413, ""},
		{"too many formats", Config{MaxFormats: 4}, off("m=audio 5000 RTP/AVP 0 8 9 3 18"), ErrTooLarge, 413, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, tt.cfg, local4)
			answer, n, err := s.Answer([]byte(tt.offer))
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if answer != nil || n != (Negotiated{}) {
				t.Fatalf("an answer beside the error: %q %+v", answer, n)
			}
			if c := StatusCode(err); c != tt.code {
				t.Fatalf("StatusCode %d, want %d", c, tt.code)
			}
			w := s.Warning(err)
			if (tt.warning == "") != (w == "") || !strings.HasPrefix(w, tt.warning) {
				t.Fatalf("Warning %q, want %q...", w, tt.warning)
			}
			if _, ok := s.Current(); ok {
				t.Fatal("a refused offer left a negotiated state")
			}
		})
	}
}

// TestErrorsQuoteNothing: no error carries the SDP's content (addresses,
// names, the o= user): it goes to logs.
// Mutation caught: wrapping pion's error text, which quotes the input.
func TestErrorsQuoteNothing(t *testing.T) {
	secret := "secret4155550100"
	bodies := []string{
		"v=0\r\no=" + secret + " x 1 IN IP4 192.0.2.1\r\n",
		strings.Replace(offerSippUAC, "c=IN IP4 127.0.0.1", "c=IN IP4 "+secret+".example.com", 1),
		strings.Replace(offerSippUAC, "m=audio 6000", "m="+secret+" 6000", 1),
		strings.Replace(offerSippUAC, "c=IN IP4", "c=IN "+secret, 1),
		strings.Replace(offerSippUAC, "a=rtpmap:0 PCMU/8000", "a=rtcp:"+secret, 1),
	}
	for i, b := range bodies {
		s := newSession(t, Config{}, local4)
		_, _, err := s.Answer([]byte(b))
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "4155550100") {
			t.Errorf("body %d: err %v", i, err)
		}
	}
}

// TestPtime: what we send and expect for each a=ptime and a=maxptime.
// Mutation caught: 30 ms sent with Opus (not one frame), a=ptime:100 sent
// as is (or expected as is), or maxptime ignored.
func TestPtime(t *testing.T) {
	tests := []struct {
		name          string
		cfg           Config
		codecs        []Codec
		attrs         []string
		out, in       time.Duration
		answerPtimeMs string
	}{
		{"none: ours", Config{}, nil, nil, 20 * ms, 20 * ms, "20"},
		{"ours configured", Config{PtimeOut: 40 * ms}, nil, nil, 40 * ms, 40 * ms, "40"},
		{"sipp 30 ms asked", Config{}, nil, []string{"a=ptime:30"}, 30 * ms, 30 * ms, "30"},
		{"10 ms asked", Config{}, nil, []string{"a=ptime:10"}, 10 * ms, 10 * ms, "10"},
		{"60 ms asked", Config{}, nil, []string{"a=ptime:60"}, 60 * ms, 60 * ms, "60"},
		{"100 ms clamped", Config{}, nil, []string{"a=ptime:100"}, 60 * ms, 60 * ms, "60"},
		{"5 ms clamped", Config{}, nil, []string{"a=ptime:5"}, 10 * ms, 10 * ms, "10"},
		{"25 ms: the size below", Config{}, nil, []string{"a=ptime:25"}, 20 * ms, 25 * ms, "20"},
		{"decimal", Config{}, nil, []string{"a=ptime:30.0"}, 30 * ms, 30 * ms, "30"},
		{"unreadable: ours", Config{}, nil, []string{"a=ptime:abc"}, 20 * ms, 20 * ms, "20"},
		{"maxptime caps ours", Config{PtimeOut: 40 * ms}, nil, []string{"a=maxptime:30"}, 30 * ms, 30 * ms, "30"},
		{"maxptime caps the ask", Config{}, nil, []string{"a=ptime:60", "a=maxptime:40"}, 40 * ms, 60 * ms, "40"},
		{"maxptime 5: at least 10", Config{}, nil, []string{"a=maxptime:5"}, 10 * ms, 10 * ms, "10"},
		{"maxptime 150 (Twilio)", Config{}, nil, []string{"a=ptime:20", "a=maxptime:150"}, 20 * ms, 20 * ms, "20"},
		{"session level", Config{}, nil, []string{"session:a=ptime:30"}, 30 * ms, 30 * ms, "30"},
		{"opus 30 asked: 20", Config{}, []Codec{Opus}, []string{"a=ptime:30"}, 20 * ms, 30 * ms, "20"},
		{"opus 50 asked: 40", Config{}, []Codec{Opus}, []string{"a=ptime:50"}, 40 * ms, 50 * ms, "40"},
		{"opus 60 asked", Config{}, []Codec{Opus}, []string{"a=ptime:60"}, 60 * ms, 60 * ms, "60"},
		{"opus maxptime 30: 20", Config{PtimeOut: 40 * ms}, []Codec{Opus}, []string{"a=maxptime:30"}, 20 * ms, 20 * ms, "20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{"v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0"}
			var media []string
			for _, a := range tt.attrs {
				if rest, ok := strings.CutPrefix(a, "session:"); ok {
					lines = append(lines, rest)
				} else {
					media = append(media, a)
				}
			}
			lines = append(lines, "m=audio 5000 RTP/AVP 111 0", "a=rtpmap:111 opus/48000/2")
			lines = append(lines, media...)
			cfg := tt.cfg
			cfg.Codecs = tt.codecs
			if cfg.Codecs == nil {
				cfg.Codecs = []Codec{PCMU}
			}
			s := newSession(t, cfg, local4)
			answer, n, err := s.Answer([]byte(sdpText(lines...)))
			if err != nil {
				t.Fatal(err)
			}
			if n.PtimeOut != tt.out || n.PtimeIn != tt.in {
				t.Fatalf("out %v in %v, want %v %v", n.PtimeOut, n.PtimeIn, tt.out, tt.in)
			}
			md := reparse(t, answer).MediaDescriptions[0]
			if v, _ := md.Attribute("ptime"); v != tt.answerPtimeMs {
				t.Fatalf("answer a=ptime:%s, want %s", v, tt.answerPtimeMs)
			}
			if v, _ := md.Attribute("maxptime"); v != "60" {
				t.Fatalf("answer a=maxptime:%s, want 60", v)
			}
		})
	}
}

const ms = time.Millisecond

// TestRTCP: where the remote's RTCP goes, and what our answer says.
// Mutation caught: rtcp-mux accepted while NoRTCPMux, a=rtcp's address
// ignored, or the port + 1 rule missing.
func TestRTCP(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		local      Local
		offer      string
		rtcp       string
		mux        bool
		answerMux  bool
		answerRTCP string // a=rtcp value in our answer, "" none
	}{
		{"port + 1", Config{}, local4, offerTwilio, "203.0.113.10:14963", false, false, ""},
		{"a=rtcp-mux wins over a=rtcp", Config{}, local4, offerAsterisk, "198.51.100.7:18230", true, true, ""},
		{"mux declined: a=rtcp", Config{NoRTCPMux: true}, local4, offerAsterisk, "198.51.100.7:18231", false, false, ""},
		{"a=rtcp with address", Config{}, local6, offerIPv6, "[2001:db8::8]:18240", false, false, ""},
		{"port 65535: none", Config{}, local4, strings.Replace(offerTwilio, "m=audio 14962", "m=audio 65535", 1), "invalid AddrPort", false, false, ""},
		{"our RTCP on another port", Config{}, Local{Addr: local4.Addr, RTCPPort: 20011}, offerTwilio, "203.0.113.10:14963", false, false, "20011"},
		{"our RTCP on port + 1: no a=rtcp", Config{}, Local{Addr: local4.Addr, RTCPPort: 20001}, offerTwilio, "203.0.113.10:14963", false, false, ""},
		{"muxed: no a=rtcp of ours", Config{}, Local{Addr: local4.Addr, RTCPPort: 20011}, offerAsterisk, "198.51.100.7:18230", true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, tt.cfg, tt.local)
			answer, n, err := s.Answer([]byte(tt.offer))
			if err != nil {
				t.Fatal(err)
			}
			if n.RemoteRTCP.String() != tt.rtcp || n.RTCPMux != tt.mux {
				t.Fatalf("rtcp %v mux %v, want %s %v", n.RemoteRTCP, n.RTCPMux, tt.rtcp, tt.mux)
			}
			md := reparse(t, answer).MediaDescriptions[0]
			if hasAttr(md, "rtcp-mux") != tt.answerMux {
				t.Fatalf("answer rtcp-mux %v, want %v", hasAttr(md, "rtcp-mux"), tt.answerMux)
			}
			if v, _ := md.Attribute("rtcp"); v != tt.answerRTCP {
				t.Fatalf("answer a=rtcp:%s, want %q", v, tt.answerRTCP)
			}
		})
	}
}

// TestDirection: each direction of an offer, at media or session level,
// and the old hold form, with what we answer.
// Mutation caught: sendonly answered sendonly, c=0.0.0.0 taken as an
// address to send to, or the session-level attribute ignored.
func TestDirection(t *testing.T) {
	tests := []struct {
		name       string
		offer      string
		dir        Direction
		send, recv bool
		answerAttr string
		remote     string
	}{
		{"none: sendrecv", offerSippUAC, SendRecv, true, true, "sendrecv", "127.0.0.1:6000"},
		{"sendrecv", offerTwilio, SendRecv, true, true, "sendrecv", "203.0.113.10:14962"},
		{"sendonly: music on hold", offerHoldSendonly, RecvOnly, false, true, "recvonly", "203.0.113.10:14962"},
		{"recvonly: we are held", strings.Replace(offerTwilio, "a=sendrecv", "a=recvonly", 1), SendOnly, true, false, "sendonly", "203.0.113.10:14962"},
		{"inactive", strings.Replace(offerTwilio, "a=sendrecv", "a=inactive", 1), Inactive, false, false, "inactive", "203.0.113.10:14962"},
		{"c=0.0.0.0", offerHoldZero, RecvOnly, false, true, "recvonly", "0.0.0.0:14962"},
		{"c=0.0.0.0 and recvonly", strings.Replace(offerHoldZero, "a=sendrecv", "a=recvonly", 1), Inactive, false, false, "inactive", "0.0.0.0:14962"},
		{"session-level sendonly", strings.Replace(offerSippUAC, "t=0 0", "t=0 0\r\na=sendonly", 1), RecvOnly, false, true, "recvonly", "127.0.0.1:6000"},
		{"media level wins", strings.Replace(offerTwilio, "t=0 0", "t=0 0\r\na=inactive", 1), SendRecv, true, true, "sendrecv", "203.0.113.10:14962"},
		{"IPv6 hold ::", strings.Replace(strings.Replace(offerIPv6, "c=IN IP6 2001:db8::7", "c=IN IP6 ::", 1), "a=rtcp:18240 IN IP6 2001:db8::8\r\n", "", 1), RecvOnly, false, true, "recvonly", "[::]:18232"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := local4
			if strings.Contains(tt.offer, "IP6") {
				l = local6
			}
			s := newSession(t, Config{}, l)
			answer, n, err := s.Answer([]byte(tt.offer))
			if err != nil {
				t.Fatal(err)
			}
			if n.Direction != tt.dir || n.Send != tt.send || n.Receive != tt.recv || n.Hold != (tt.dir != SendRecv) {
				t.Fatalf("%v send %v recv %v hold %v, want %v %v %v", n.Direction, n.Send, n.Receive, n.Hold, tt.dir, tt.send, tt.recv)
			}
			if n.Direction.Send() != n.Send || n.Direction.Receive() != n.Receive {
				t.Fatal("Direction's halves disagree with Send and Receive")
			}
			if n.Remote.String() != tt.remote {
				t.Fatalf("remote %v, want %s", n.Remote, tt.remote)
			}
			md := reparse(t, answer).MediaDescriptions[0]
			got := ""
			for _, k := range []string{"sendrecv", "sendonly", "recvonly", "inactive"} {
				if hasAttr(md, k) {
					if got != "" {
						t.Fatal("two direction attributes")
					}
					got = k
				}
			}
			if got != tt.answerAttr {
				t.Fatalf("answer says %s, want %s", got, tt.answerAttr)
			}
		})
	}
}

// TestAddresses: c= at either level, IPv6, and our own address.
// Mutation caught: the session-level c= winning over the media's, or our
// c= giving the socket's address although PublicAddr is set.
func TestAddresses(t *testing.T) {
	public := netip.MustParseAddr("203.0.113.99")
	tests := []struct {
		name   string
		cfg    Config
		local  Local
		offer  string
		remote string
		ours   string // our c= and o= address
		typ    string
	}{
		{"session level", Config{}, local4, offerTwilio, "203.0.113.10:14962", "192.0.2.100", "IP4"},
		{"media level wins", Config{}, local4, strings.Replace(offerTwilio, "a=rtpmap:0", "c=IN IP4 203.0.113.11\r\na=rtpmap:0", 1), "203.0.113.11:14962", "192.0.2.100", "IP4"},
		{"IPv6", Config{}, local6, offerIPv6, "[2001:db8::7]:18232", "2001:db8::100", "IP6"},
		{"public address", Config{PublicAddr: public}, Local{Addr: netip.MustParseAddrPort("0.0.0.0:20000")}, offerTwilio, "203.0.113.10:14962", "203.0.113.99", "IP4"},
		{"public address over a private socket", Config{PublicAddr: public}, Local{Addr: netip.MustParseAddrPort("10.0.0.5:20000")}, offerTwilio, "203.0.113.10:14962", "203.0.113.99", "IP4"},
		{"IPv4-mapped socket address", Config{}, Local{Addr: netip.MustParseAddrPort("[::ffff:192.0.2.100]:20000")}, offerTwilio, "203.0.113.10:14962", "192.0.2.100", "IP4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, tt.cfg, tt.local)
			answer, n, err := s.Answer([]byte(tt.offer))
			if err != nil {
				t.Fatal(err)
			}
			if n.Remote.String() != tt.remote {
				t.Fatalf("remote %v, want %s", n.Remote, tt.remote)
			}
			sd := reparse(t, answer)
			c := sd.ConnectionInformation
			if c == nil || c.Address.Address != tt.ours || c.AddressType != tt.typ || sd.Origin.UnicastAddress != tt.ours || sd.Origin.AddressType != tt.typ {
				t.Fatalf("c= %+v o= %+v, want %s %s", c, sd.Origin, tt.typ, tt.ours)
			}
			if p := sd.MediaDescriptions[0].MediaName.Port.Value; p != 20000 {
				t.Fatalf("our port %d", p)
			}
		})
	}
}

// TestBounds: a description at each bound is read; one over it is not.
// Mutation caught: a bound checked with >= (a real offer at the bound
// refused).
func TestBounds(t *testing.T) {
	head := []string{"v=0", "o=- 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0"}
	withMedia := func(n int) string {
		lines := slices.Clone(head)
		lines = append(lines, "m=audio 5000 RTP/AVP 0")
		for range n - 1 {
			lines = append(lines, "m=video 0 RTP/AVP 96")
		}
		return sdpText(lines...)
	}
	withFormats := func(n int) string {
		f := []string{"0"}
		for i := range n - 1 {
			f = append(f, itoa(uint8(96+i)))
		}
		return sdpText(append(slices.Clone(head), "m=audio 5000 RTP/AVP "+strings.Join(f, " "))...)
	}
	withSize := func(n int) string {
		s := withMedia(1)
		pad := "a=x:" + strings.Repeat("p", n-len(s)-len("a=x:\r\n")) + "\r\n"
		return s + pad
	}
	tests := []struct {
		name string
		body string
		err  error
	}{
		{"8 m-lines", withMedia(DefaultMaxMedia), nil},
		{"9 m-lines", withMedia(DefaultMaxMedia + 1), ErrTooLarge},
		{"32 formats", withFormats(DefaultMaxFormats), nil},
		{"33 formats", withFormats(DefaultMaxFormats + 1), ErrTooLarge},
		{"16 KiB", withSize(DefaultMaxSize), nil},
		{"16 KiB + 1", withSize(DefaultMaxSize + 1), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, Config{}, local4)
			if _, _, err := s.Answer([]byte(tt.body)); !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
		})
	}
}
