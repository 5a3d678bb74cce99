package sdp

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	pion "github.com/pion/sdp/v3"
	"go.uber.org/goleak"
)

// The package starts no goroutine; this keeps it so.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sdpText joins lines with CRLF, the last one included.
func sdpText(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

// Real-world offers. Addresses are the documentation ranges (RFC 5737,
// RFC 3849); everything else is as the peer sent it.
var (
	// sipp 3.6.1 `-sd uac`.
	offerSippUAC = sdpText(
		"v=0",
		"o=user1 53655765 2353687637 IN IP4 127.0.0.1",
		"s=-",
		"c=IN IP4 127.0.0.1",
		"t=0 0",
		"m=audio 6000 RTP/AVP 0",
		"a=rtpmap:0 PCMU/8000",
		"")
	// sipp 3.6.1 `-sd uac_pcap` (it plays g711a.pcap, 30 ms packets).
	offerSippPcap = sdpText(
		"v=0",
		"o=user1 53655765 2353687637 IN IP4 127.0.0.1",
		"s=-",
		"c=IN IP4 127.0.0.1",
		"t=0 0",
		"m=audio 6000 RTP/AVP 8 101",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-11,16",
		"")
	// baresip 1.0.0, default codecs (g711, g722, opus modules), captured
	// on loopback.
	offerBaresip = sdpText(
		"v=0",
		"o=- 2312997163 100799027 IN IP4 192.0.2.2",
		"s=-",
		"c=IN IP4 192.0.2.2",
		"t=0 0",
		"a=tool:baresip 1.0.0",
		"m=audio 13374 RTP/AVP 0 8 9 96 101",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:9 G722/8000",
		"a=rtpmap:96 opus/48000/2",
		"a=fmtp:96 stereo=1;sprop-stereo=1",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-15",
		"a=sendrecv",
		"a=label:1",
		"a=rtcp-rsize",
		"a=ssrc:4166402834 cname:sip:bot@127.0.0.1",
		"a=minptime:20",
		"a=ptime:20")
	// baresip 1.0.0 with audio_codecs=opus/48000/2,G722,PCMU,PCMA (its
	// G722 name did not match: it offers no G.722).
	offerBaresipOpus = sdpText(
		"v=0",
		"o=- 93919442 1574945628 IN IP4 192.0.2.2",
		"s=-",
		"c=IN IP4 192.0.2.2",
		"t=0 0",
		"a=tool:baresip 1.0.0",
		"m=audio 12594 RTP/AVP 96 0 8 101",
		"a=rtpmap:96 opus/48000/2",
		"a=fmtp:96 stereo=1;sprop-stereo=1",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-15",
		"a=sendrecv",
		"a=label:1",
		"a=rtcp-rsize",
		"a=ssrc:2817378416 cname:sip:bot@127.0.0.1",
		"a=minptime:20",
		"a=ptime:20")
	// Twilio Elastic SIP Trunking's shape: G.711 both laws and
	// telephone-event 0-16, maxptime 150.
	offerTwilio = sdpText(
		"v=0",
		"o=root 1795237112 1795237112 IN IP4 203.0.113.10",
		"s=Twilio Media Gateway",
		"c=IN IP4 203.0.113.10",
		"t=0 0",
		"m=audio 14962 RTP/AVP 0 8 101",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-16",
		"a=ptime:20",
		"a=maxptime:150",
		"a=sendrecv")
	// Asterisk (chan_pjsip) with rtcp_mux and G.722 first.
	offerAsterisk = sdpText(
		"v=0",
		"o=- 1716314401 1716314401 IN IP4 198.51.100.7",
		"s=Asterisk",
		"c=IN IP4 198.51.100.7",
		"t=0 0",
		"m=audio 18230 RTP/AVP 9 0 8 101",
		"a=rtpmap:9 G722/8000",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-16",
		"a=ptime:20",
		"a=maxptime:150",
		"a=rtcp:18231",
		"a=rtcp-mux",
		"a=sendrecv")
	// Asterisk on IPv6, media-level c= and an a=rtcp with an address.
	offerIPv6 = sdpText(
		"v=0",
		"o=- 1716314402 1716314402 IN IP6 2001:db8::7",
		"s=Asterisk",
		"t=0 0",
		"m=audio 18232 RTP/AVP 0 101",
		"c=IN IP6 2001:db8::7",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:101 telephone-event/8000",
		"a=fmtp:101 0-16",
		"a=rtcp:18240 IN IP6 2001:db8::8",
		"a=sendrecv")
	// A WebRTC gateway's SIP leg: Opus with telephone-event/48000 and
	// CN at both clocks.
	offerOpusEvents48 = sdpText(
		"v=0",
		"o=- 4611731400430051336 2 IN IP4 192.0.2.30",
		"s=-",
		"c=IN IP4 192.0.2.30",
		"t=0 0",
		"m=audio 40000 RTP/AVP 111 9 0 8 13 110 126",
		"a=rtpmap:111 opus/48000/2",
		"a=fmtp:111 minptime=10;useinbandfec=1",
		"a=rtpmap:9 G722/8000",
		"a=rtpmap:0 PCMU/8000",
		"a=rtpmap:8 PCMA/8000",
		"a=rtpmap:13 CN/8000",
		"a=rtpmap:110 telephone-event/48000",
		"a=rtpmap:126 telephone-event/8000",
		"a=ptime:20")
	// A softphone with video beside audio.
	offerAudioVideo = sdpText(
		"v=0",
		"o=- 1 1 IN IP4 192.0.2.40",
		"s=-",
		"c=IN IP4 192.0.2.40",
		"t=0 0",
		"m=audio 7078 RTP/AVP 0 8 101",
		"a=rtpmap:101 telephone-event/8000",
		"m=video 9078 RTP/AVP 96",
		"a=rtpmap:96 VP8/90000")
	// A hold re-offer of sipp-style G.711: sendonly (music on hold).
	offerHoldSendonly = strings.Replace(offerTwilio, "a=sendrecv", "a=sendonly", 1)
	// The old hold form (RFC 2543): c=0.0.0.0.
	offerHoldZero = strings.Replace(offerTwilio, "c=IN IP4 203.0.113.10", "c=IN IP4 0.0.0.0", 1)
)

// Our local RTP socket in the tests.
var (
	local4 = Local{Addr: netip.MustParseAddrPort("192.0.2.100:20000")}
	local6 = Local{Addr: netip.MustParseAddrPort("[2001:db8::100]:20000")}
)

// newSession builds a session with a seeded session id.
func newSession(t testing.TB, cfg Config, l Local) *Session {
	t.Helper()
	s, err := New(cfg, l, WithRand(rand.NewChaCha8([32]byte{1})))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reparse reads one of our descriptions with pion/sdp, failing the test if
// it cannot.
func reparse(t testing.TB, body []byte) *pion.SessionDescription {
	t.Helper()
	var sd pion.SessionDescription
	if err := sd.Unmarshal(body); err != nil {
		t.Fatalf("pion cannot read our SDP: %v\n%s", err, body)
	}
	return &sd
}

// mediaAttrs is the key[:value] list of an m-line's attributes.
func mediaAttrs(md *pion.MediaDescription) []string {
	out := make([]string, len(md.Attributes))
	for i, a := range md.Attributes {
		out[i] = a.String()
	}
	return out
}
