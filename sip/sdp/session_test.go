package sdp

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestHoldResumeCycle runs one dialog through re-INVITEs: hold (sendonly),
// resume, the old hold form, resume, a move to a new address, an
// unchanged refresh, and checks the codec stays, RemoteChanged is true
// only for a real move, and our version moves only when our SDP does.
// Mutation caught: RemoteChanged set on resume after c=0.0.0.0 (the RTP
// layer would drop its latch for nothing) or on every answer, and the
// version bumped for an unchanged answer or never.
func TestHoldResumeCycle(t *testing.T) {
	s := newSession(t, Config{Codecs: []Codec{G722, PCMU}}, local4)
	moved := strings.ReplaceAll(offerAsterisk, "198.51.100.7", "198.51.100.8")
	reorder := strings.Replace(offerAsterisk, "RTP/AVP 9 0 8 101", "RTP/AVP 0 9 8 101", 1)
	steps := []struct {
		name    string
		offer   string
		dir     Direction
		changed bool
		version uint64
		remote  string
	}{
		{"initial", offerAsterisk, SendRecv, true, 1, "198.51.100.7:18230"},
		{"refresh, same offer", offerAsterisk, SendRecv, false, 1, "198.51.100.7:18230"},
		{"hold: sendonly", strings.Replace(offerAsterisk, "a=sendrecv", "a=sendonly", 1), RecvOnly, false, 2, "198.51.100.7:18230"},
		{"resume", offerAsterisk, SendRecv, false, 3, "198.51.100.7:18230"},
		{"old hold: c=0.0.0.0", strings.Replace(offerAsterisk, "c=IN IP4 198.51.100.7", "c=IN IP4 0.0.0.0", 1), RecvOnly, false, 4, "0.0.0.0:18230"},
		{"resume from the old hold", offerAsterisk, SendRecv, false, 5, "198.51.100.7:18230"},
		{"inactive", strings.Replace(offerAsterisk, "a=sendrecv", "a=inactive", 1), Inactive, false, 6, "198.51.100.7:18230"},
		{"moved", moved, SendRecv, true, 7, "198.51.100.8:18230"},
		{"PCMU first now: G722 stays", strings.ReplaceAll(reorder, "198.51.100.7", "198.51.100.8"), SendRecv, false, 7, "198.51.100.8:18230"},
		{"new port only", strings.Replace(moved, "m=audio 18230", "m=audio 18300", 1), SendRecv, true, 7, "198.51.100.8:18300"},
	}
	var id uint64
	for i, st := range steps {
		answer, n, err := s.Answer([]byte(st.offer))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		sd := reparse(t, answer)
		if i == 0 {
			id = sd.Origin.SessionID
		}
		if sd.Origin.SessionID != id || sd.Origin.SessionVersion != st.version {
			t.Errorf("%s: o= id %d version %d, want %d %d", st.name, sd.Origin.SessionID, sd.Origin.SessionVersion, id, st.version)
		}
		if n.Direction != st.dir || n.RemoteChanged != st.changed || n.Remote.String() != st.remote {
			t.Errorf("%s: %v changed %v remote %v, want %v %v %s", st.name, n.Direction, n.RemoteChanged, n.Remote, st.dir, st.changed, st.remote)
		}
		if n.Codec != G722 {
			t.Errorf("%s: codec %s, want G722 kept", st.name, n.Codec)
		}
		if cur, ok := s.Current(); !ok || cur != n {
			t.Errorf("%s: Current %+v", st.name, cur)
		}
	}
	// A refused re-offer changes nothing: the version and the current
	// result stay.
	before, _ := s.Current()
	if _, _, err := s.Answer([]byte(strings.Replace(offerAsterisk, "RTP/AVP 9 0 8 101", "RTP/SAVP 9", 1))); !errors.Is(err, ErrUnsupportedProfile) {
		t.Fatalf("SRTP re-offer: %v", err)
	}
	if cur, _ := s.Current(); cur != before {
		t.Fatal("a refused re-offer changed the current result")
	}
	answer, _, err := s.Answer([]byte(strings.Replace(moved, "m=audio 18230", "m=audio 18300", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if v := reparse(t, answer).Origin.SessionVersion; v != 7 {
		t.Fatalf("version %d after a refused re-offer, want 7", v)
	}
}

// TestHoldFirst: a dialog whose very first offer is the old hold form has
// nothing to latch yet; the first real address then counts as a change.
// Mutation caught: RemoteChanged false on the first usable address.
func TestHoldFirst(t *testing.T) {
	s := newSession(t, Config{}, local4)
	_, n, err := s.Answer([]byte(offerHoldZero))
	if err != nil || !n.RemoteChanged || n.Send {
		t.Fatalf("first, on hold: %+v %v", n, err)
	}
	_, n, err = s.Answer([]byte(offerTwilio))
	if err != nil || !n.RemoteChanged || !n.Send {
		t.Fatalf("resumed: %+v %v", n, err)
	}
}

// TestCodecSticky: a re-offer keeps the codec in use while it is offered,
// whatever our preference says; once it is gone, the preference decides.
// Mutation caught: a re-offer choosing by preference alone (the codec,
// its decoder and resampler, switched mid-call by a hold).
func TestCodecSticky(t *testing.T) {
	s := newSession(t, Config{}, local4)
	steps := []struct {
		offer string
		codec Codec
	}{
		{offerTwilio, PCMU},   // G.711 only: PCMU
		{offerAsterisk, PCMU}, // G.722 offered too: PCMU stays
		{strings.Replace(offerAsterisk, "RTP/AVP 9 0 8 101", "RTP/AVP 9 8 101", 1), G722}, // PCMU gone
		{offerAsterisk, G722},
	}
	for i, st := range steps {
		if _, n, err := s.Answer([]byte(st.offer)); err != nil || n.Codec != st.codec {
			t.Fatalf("step %d: %s %v, want %s", i, n.Codec, err, st.codec)
		}
	}
}

// TestSessionID: the id comes from the random source, fits 62 bits, and
// differs between seeds; a failing source fails New.
// Mutation caught: a constant id, or the reader's error ignored.
func TestSessionID(t *testing.T) {
	ids := map[uint64]bool{}
	for seed := range byte(20) {
		s, err := New(Config{}, local4, WithRand(rand.NewChaCha8([32]byte{seed})))
		if err != nil {
			t.Fatal(err)
		}
		if s.id >= 1<<62 {
			t.Fatalf("id %d does not fit 62 bits", s.id)
		}
		ids[s.id] = true
	}
	if len(ids) != 20 {
		t.Fatalf("%d distinct ids of 20 seeds", len(ids))
	}
	if _, err := New(Config{}, local4, WithRand(bytes.NewReader([]byte{1, 2, 3}))); !errors.Is(err, ErrRandom) {
		t.Fatalf("short random source: %v", err)
	}
	// The default source works.
	if _, err := New(Config{}, local4); err != nil {
		t.Fatal(err)
	}
}

// TestLateOfferRoundTrip: an INVITE without SDP. Our offer goes in the
// 200; another Session of ours plays the caller and answers it; the answer
// comes back in the ACK.
// Mutation caught: the offer missing a configured codec or its
// telephone-event.
func TestLateOfferRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		ours    Config
		theirs  Config
		codec   Codec
		eventPT int
		formats []string
	}{
		{"default both", Config{}, Config{}, Opus, 110, []string{"111", "9", "0", "8", "110", "101"}},
		{"caller wants PCMA", Config{}, Config{Codecs: []Codec{PCMA}}, PCMA, 101, []string{"111", "9", "0", "8", "110", "101"}},
		{"narrowband only", Config{Codecs: []Codec{PCMU, PCMA}}, Config{}, PCMU, 101, []string{"0", "8", "101"}},
		{"opus only, no events", Config{Codecs: []Codec{Opus}, NoTelephoneEvents: true}, Config{}, Opus, -1, []string{"111"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			us := newSession(t, tt.ours, local4)
			caller := newSession(t, tt.theirs, Local{Addr: netip.MustParseAddrPort("192.0.2.50:30000")})
			offer := us.Offer()
			sd := reparse(t, offer)
			if len(sd.MediaDescriptions) != 1 {
				t.Fatalf("%d m-lines", len(sd.MediaDescriptions))
			}
			md := sd.MediaDescriptions[0]
			if !slices.Equal(md.MediaName.Formats, tt.formats) || proto(md) != "RTP/AVP" || md.MediaName.Port.Value != 20000 {
				t.Fatalf("offer m= %s, want formats %v", md.MediaName.String(), tt.formats)
			}
			if !hasAttr(md, "sendrecv") || !hasAttr(md, "rtcp-mux") {
				t.Fatalf("offer attributes %v", mediaAttrs(md))
			}
			for _, f := range tt.formats {
				if _, err := sd.GetCodecForPayloadType(uint8(atoi(f))); err != nil {
					t.Fatalf("no rtpmap for %s: %v", f, err)
				}
			}
			answer, theirN, err := caller.Answer(offer)
			if err != nil {
				t.Fatal(err)
			}
			n, err := us.AcceptAnswer(answer)
			if err != nil {
				t.Fatal(err)
			}
			if n.Codec != tt.codec || n.Codec != theirN.Codec || n.PayloadType != theirN.PayloadType {
				t.Fatalf("we settled %s/%d, they %s/%d, want %s", n.Codec, n.PayloadType, theirN.Codec, theirN.PayloadType, tt.codec)
			}
			if n.HasEvents != (tt.eventPT >= 0) || (n.HasEvents && int(n.EventPT) != tt.eventPT) || n.HasEvents != theirN.HasEvents || n.EventPT != theirN.EventPT {
				t.Fatalf("events: ours %v/%d theirs %v/%d, want %d", n.HasEvents, n.EventPT, theirN.HasEvents, theirN.EventPT, tt.eventPT)
			}
			if n.Remote.String() != "192.0.2.50:30000" || !n.RTCPMux || n.RemoteRTCP != n.Remote || !n.RemoteChanged || n.Direction != SendRecv {
				t.Fatalf("settled %+v", n)
			}
			if theirN.Remote.String() != "192.0.2.100:20000" || !theirN.RTCPMux {
				t.Fatalf("the caller settled %+v", theirN)
			}
			// Done: a second answer answers nothing.
			if _, err := us.AcceptAnswer(answer); !errors.Is(err, ErrNoOffer) || StatusCode(err) != 0 {
				t.Fatalf("second AcceptAnswer: %v", err)
			}
		})
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestAcceptAnswerMismatch: answers that do not fit our offer.
// Mutation caught: accepting a payload type we did not offer, PT 111
// answered as another codec, or AcceptAnswer taking our preference
// instead of the answer's first codec.
func TestAcceptAnswerMismatch(t *testing.T) {
	head := []string{"v=0", "o=- 7 7 IN IP4 192.0.2.60", "s=-", "c=IN IP4 192.0.2.60", "t=0 0"}
	ans := func(lines ...string) string { return sdpText(append(slices.Clone(head), lines...)...) }
	tests := []struct {
		name  string
		body  string
		err   error
		codec Codec // when accepted
		dir   Direction
	}{
		{"PCMU", ans("m=audio 4000 RTP/AVP 0 101", "a=rtpmap:101 telephone-event/8000"), nil, PCMU, SendRecv},
		{"answer's first wins", ans("m=audio 4000 RTP/AVP 8 111", "a=rtpmap:111 opus/48000/2"), nil, PCMA, SendRecv},
		{"rtpmap may be left out", ans("m=audio 4000 RTP/AVP 111"), nil, Opus, SendRecv},
		{"they hold us", ans("m=audio 4000 RTP/AVP 0", "a=recvonly"), nil, PCMU, SendOnly},
		{"old hold in the answer", strings.Replace(ans("m=audio 4000 RTP/AVP 0"), "c=IN IP4 192.0.2.60", "c=IN IP4 0.0.0.0", 1), nil, PCMU, RecvOnly},
		{"a codec we did not offer", ans("m=audio 4000 RTP/AVP 18", "a=rtpmap:18 G729/8000"), ErrAnswerMismatch, "", 0},
		{"a static PT we did not offer, without rtpmap", ans("m=audio 4000 RTP/AVP 18"), ErrAnswerMismatch, "", 0},
		{"a dynamic PT we did not offer", ans("m=audio 4000 RTP/AVP 96", "a=rtpmap:96 opus/48000/2"), ErrAnswerMismatch, "", 0},
		{"our PT as another codec", ans("m=audio 4000 RTP/AVP 111", "a=rtpmap:111 PCMU/8000"), ErrAnswerMismatch, "", 0},
		{"events at another clock", ans("m=audio 4000 RTP/AVP 0 101", "a=rtpmap:101 telephone-event/48000"), ErrAnswerMismatch, "", 0},
		{"not a payload type", ans("m=audio 4000 RTP/AVP x"), ErrAnswerMismatch, "", 0},
		{"two m-lines", ans("m=audio 4000 RTP/AVP 0", "m=video 0 RTP/AVP 96"), ErrAnswerMismatch, "", 0},
		{"no m-line", ans(), ErrAnswerMismatch, "", 0},
		{"another profile", ans("m=audio 4000 RTP/SAVP 0"), ErrAnswerMismatch, "", 0},
		{"video instead", ans("m=video 4000 RTP/AVP 0"), ErrAnswerMismatch, "", 0},
		{"audio refused", ans("m=audio 0 RTP/AVP 0"), ErrNoCommonCodec, "", 0},
		{"only events", ans("m=audio 4000 RTP/AVP 101"), ErrNoCommonCodec, "", 0},
		{"malformed", "v=0\r\nx\r\n", ErrMalformed, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, Config{}, local4)
			offer := s.Offer()
			n, err := s.AcceptAnswer([]byte(tt.body))
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if err != nil {
				// The offer stays pending: the same offer again, and
				// CancelOffer drops it.
				if again := s.Offer(); !bytes.Equal(again, offer) {
					t.Fatal("a failed answer changed our offer")
				}
				if _, ok := s.Current(); ok {
					t.Fatal("a failed answer left a negotiated state")
				}
				s.CancelOffer()
				if _, err := s.AcceptAnswer([]byte(tt.body)); !errors.Is(err, ErrNoOffer) {
					t.Fatalf("after CancelOffer: %v", err)
				}
				return
			}
			if n.Codec != tt.codec || n.Direction != tt.dir {
				t.Fatalf("settled %s %v, want %s %v", n.Codec, n.Direction, tt.codec, tt.dir)
			}
		})
	}
}

// TestOfferlessReInvite: after an audio+video call, our offer keeps both
// m-lines (video at port 0) and the answer must too.
// Mutation caught: a re-offer with fewer m-lines than the last exchange
// (RFC 3264 §8), or a version not moved by our new offer.
func TestOfferlessReInvite(t *testing.T) {
	s := newSession(t, Config{}, local4)
	answer, _, err := s.Answer([]byte(offerAudioVideo))
	if err != nil {
		t.Fatal(err)
	}
	v1 := reparse(t, answer).Origin.SessionVersion
	offer := s.Offer()
	sd := reparse(t, offer)
	if len(sd.MediaDescriptions) != 2 || sd.MediaDescriptions[1].MediaName.Port.Value != 0 || sd.MediaDescriptions[1].MediaName.Media != "video" {
		t.Fatalf("re-offer m-lines: %v", sd.MediaDescriptions)
	}
	if sd.Origin.SessionVersion != v1+1 {
		t.Fatalf("re-offer version %d, want %d", sd.Origin.SessionVersion, v1+1)
	}
	if again := s.Offer(); !bytes.Equal(again, offer) {
		t.Fatal("the same offer twice differs")
	}
	// Glare: their offer while ours waits.
	if _, _, err := s.Answer([]byte(offerAudioVideo)); !errors.Is(err, ErrOfferPending) || StatusCode(err) != 491 {
		t.Fatalf("glare: %v", err)
	}
	head := "v=0\r\no=- 1 2 IN IP4 192.0.2.40\r\ns=-\r\nc=IN IP4 192.0.2.41\r\nt=0 0\r\n"
	if _, err := s.AcceptAnswer([]byte(head + "m=audio 7078 RTP/AVP 0\r\n")); !errors.Is(err, ErrAnswerMismatch) {
		t.Fatalf("one m-line for two: %v", err)
	}
	if _, err := s.AcceptAnswer([]byte(head + "m=audio 7078 RTP/AVP 0\r\nm=video 9078 RTP/AVP 96\r\n")); !errors.Is(err, ErrAnswerMismatch) {
		t.Fatalf("video given a port: %v", err)
	}
	n, err := s.AcceptAnswer([]byte(head + "m=audio 7078 RTP/AVP 0\r\nm=video 0 RTP/AVP 96\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Codec != PCMU || n.Remote.String() != "192.0.2.41:7078" || !n.RemoteChanged || n.MediaIndex != 0 {
		t.Fatalf("settled %+v", n)
	}
	// Their offer is welcome again.
	if _, _, err := s.Answer([]byte(offerAudioVideo)); err != nil {
		t.Fatal(err)
	}
}

// TestOfferVersion: an unchanged offer keeps the version, a changed one
// moves it by one; an answer identical to the last SDP keeps it too.
// Mutation caught: bumping on every SDP, or never.
func TestOfferVersion(t *testing.T) {
	s := newSession(t, Config{Codecs: []Codec{PCMU}}, local4)
	version := func(b []byte) uint64 { return reparse(t, b).Origin.SessionVersion }
	o1 := s.Offer()
	s.CancelOffer()
	o2 := s.Offer()
	if version(o1) != 1 || !bytes.Equal(o1, o2) {
		t.Fatalf("unchanged offer: %d, equal %v", version(o2), bytes.Equal(o1, o2))
	}
	s.CancelOffer()
	// An answer differs from our offer (one codec, no rtcp-mux): +1.
	a1, _, err := s.Answer([]byte(offerSippUAC))
	if err != nil {
		t.Fatal(err)
	}
	a2, _, err := s.Answer([]byte(offerSippUAC))
	if err != nil {
		t.Fatal(err)
	}
	if version(a1) != 2 || version(a2) != 2 {
		t.Fatalf("answers %d %d, want 2 2", version(a1), version(a2))
	}
}

// TestConfig: Validate and New refuse what cannot work.
// Mutation caught: a Local bound to 0.0.0.0 accepted without PublicAddr
// (our c= would say 0.0.0.0: hold, for the remote).
func TestConfig(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		local Local
		ok    bool
	}{
		{"zero", Config{}, local4, true},
		{"all set", Config{Codecs: []Codec{PCMA}, PtimeOut: 60 * ms, PublicAddr: netip.MustParseAddr("203.0.113.1"), MaxSize: 4096, MaxMedia: 2, MaxFormats: 8, SessionName: "agent one"}, local4, true},
		{"unknown codec", Config{Codecs: []Codec{"G729"}}, local4, false},
		{"codec twice", Config{Codecs: []Codec{PCMU, PCMU}}, local4, false},
		{"ptime 30", Config{PtimeOut: 30 * ms}, local4, false},
		{"ptime 15", Config{PtimeOut: 15 * ms}, local4, false},
		{"negative size", Config{MaxSize: -1}, local4, false},
		{"tiny size", Config{MaxSize: 100}, local4, false},
		{"huge size", Config{MaxSize: 2 << 20}, local4, false},
		{"too many media", Config{MaxMedia: 65}, local4, false},
		{"too many formats", Config{MaxFormats: 129}, local4, false},
		{"name with CRLF", Config{SessionName: "x\r\nm=audio"}, local4, false},
		{"long name", Config{SessionName: strings.Repeat("x", 65)}, local4, false},
		{"unspecified public", Config{PublicAddr: netip.IPv4Unspecified()}, local4, false},
		{"multicast public", Config{PublicAddr: netip.MustParseAddr("239.0.0.1")}, local4, false},
		{"no local", Config{}, Local{}, false},
		{"port 0", Config{}, Local{Addr: netip.MustParseAddrPort("192.0.2.1:0")}, false},
		{"unspecified local", Config{}, Local{Addr: netip.MustParseAddrPort("0.0.0.0:20000")}, false},
		{"unspecified local with public", Config{PublicAddr: netip.MustParseAddr("203.0.113.1")}, Local{Addr: netip.MustParseAddrPort("0.0.0.0:20000")}, true},
		{"port 65535 without RTCP port", Config{}, Local{Addr: netip.MustParseAddrPort("192.0.2.1:65535")}, false},
		{"port 65535 with RTCP port", Config{}, Local{Addr: netip.MustParseAddrPort("192.0.2.1:65535"), RTCPPort: 65534}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, tt.local, WithRand(rand.NewChaCha8([32]byte{})))
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("New: %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestParseCodec: agent-file names in any case.
func TestParseCodec(t *testing.T) {
	for in, want := range map[string]Codec{"pcmu": PCMU, "PCMA": PCMA, "g722": G722, "Opus": Opus, "OPUS": Opus} {
		if c, err := ParseCodec(in); err != nil || c != want {
			t.Errorf("%s: %s %v", in, c, err)
		}
	}
	if _, err := ParseCodec("G729"); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("G729: %v", err)
	}
	if got := []string{Opus.Format(), G722.Format(), PCMU.Format()}; !slices.Equal(got, []string{"opus/48000/2", "G722/8000", "PCMU/8000"}) {
		t.Fatalf("formats %v", got)
	}
	if !slices.Equal(newSession(t, Config{}, local4).Accepted(), DefaultCodecs()) {
		t.Fatal("Accepted is not the default order")
	}
}

// TestStatusCode covers the mapping beyond the refusals above.
func TestStatusCode(t *testing.T) {
	for err, want := range map[error]int{
		nil:                   0,
		ErrAnswerMismatch:     0,
		ErrNoOffer:            0,
		ErrOfferPending:       491,
		io.EOF:                500,
		ErrTooLarge:           413,
		ErrUnsupportedAddress: 488,
	} {
		if got := StatusCode(err); got != want {
			t.Errorf("%v: %d, want %d", err, got, want)
		}
	}
}

// TestReofferKeepsPayloadTypes: our offer after an exchange keeps the
// payload types in use and gives no other format a number the exchange
// used for something else (RFC 3264 §8.3.2).
// Mutation caught: the re-offer using our fixed numbers (opus at 111
// while the call runs it at 96; telephone-event/48000 at 110 where the
// exchange put telephone-event/8000).
func TestReofferKeepsPayloadTypes(t *testing.T) {
	tests := []struct {
		name  string
		offer string
		want  map[string]string // payload type: rtpmap in our re-offer
	}{
		{"baresip opus at 96", offerBaresipOpus, map[string]string{
			"96": "opus/48000/2", "9": "G722/8000", "0": "PCMU/8000", "8": "PCMA/8000", "110": "telephone-event/48000", "101": "telephone-event/8000"}},
		{"events/8000 at 110", strings.Replace(strings.Replace(offerTwilio, "101", "110", 2), "fmtp:101", "fmtp:110", 1), map[string]string{
			"111": "opus/48000/2", "9": "G722/8000", "0": "PCMU/8000", "8": "PCMA/8000", "96": "telephone-event/48000", "110": "telephone-event/8000"}},
		{"PCMU at dynamic 111", strings.NewReplacer("RTP/AVP 0 8 101", "RTP/AVP 111 101", "rtpmap:0 PCMU", "rtpmap:111 PCMU").Replace(offerTwilio), map[string]string{
			"96": "opus/48000/2", "9": "G722/8000", "111": "PCMU/8000", "8": "PCMA/8000", "110": "telephone-event/48000", "101": "telephone-event/8000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, Config{}, local4)
			if _, _, err := s.Answer([]byte(tt.offer)); err != nil {
				t.Fatal(err)
			}
			md := reparse(t, s.Offer()).MediaDescriptions[0]
			got := map[string]string{}
			for _, a := range md.Attributes {
				if a.Key == "rtpmap" {
					pt, m, _ := strings.Cut(a.Value, " ")
					got[pt] = m
				}
			}
			if len(got) != len(tt.want) || len(md.MediaName.Formats) != len(tt.want) {
				t.Fatalf("re-offer %v, want %v", got, tt.want)
			}
			for pt, m := range tt.want {
				if got[pt] != m {
					t.Fatalf("re-offer %v, want %v", got, tt.want)
				}
			}
		})
	}
}
