package sdp

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// fuzzSeeds are the real-world offers, hold forms and a few broken ones;
// the checked-in corpus in testdata/fuzz holds the same and more.
var fuzzSeeds = []string{
	offerSippUAC, offerSippPcap, offerBaresip, offerBaresipOpus, offerTwilio,
	offerAsterisk, offerIPv6, offerOpusEvents48, offerAudioVideo,
	offerHoldSendonly, offerHoldZero,
	"v=0\r\n", "", "v=0\r\no=- 1 1 IN IP4 1.2.3.4\r\ns=-\r\nt=0 0\r\nm=audio 1 RTP/AVP 0",
}

// offerErrors are the errors Answer may fail with on any input.
var offerErrors = []error{ErrTooLarge, ErrMalformed, ErrNoAudio, ErrUnsupportedProfile, ErrUnsupportedAddress, ErrNoCommonCodec}

// FuzzParse: the parser never panics, fails only with ErrTooLarge or
// ErrMalformed, and what it accepts is within the bounds.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	cfg := Config{}.withDefaults()
	f.Fuzz(func(t *testing.T, body []byte) {
		sd, err := parse(body, &cfg)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v wraps neither ErrTooLarge nor ErrMalformed", err)
			}
			return
		}
		if len(body) > cfg.MaxSize || len(sd.MediaDescriptions) > cfg.MaxMedia {
			t.Fatalf("accepted %d bytes, %d m-lines", len(body), len(sd.MediaDescriptions))
		}
		for _, md := range sd.MediaDescriptions {
			if len(md.MediaName.Formats) > cfg.MaxFormats {
				t.Fatalf("accepted %d formats", len(md.MediaName.Formats))
			}
			for _, p := range payloads(md) {
				if p.pt > 127 || p.clock <= 0 || p.name == "" {
					t.Fatalf("payload %+v", p)
				}
			}
		}
	})
}

// FuzzNegotiate: Answer never panics and fails only with its sentinels;
// an answer it gives is one pion reads back, with one m-line per offered
// one, our port on exactly the chosen one, the chosen payload type first,
// and a packet time we can send. The same body as an answer to our offer
// never panics either, and fails only with the answer errors.
func FuzzNegotiate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := New(Config{}, local4, WithRand(rand.NewChaCha8([32]byte{})))
		if err != nil {
			t.Fatal(err)
		}
		answer, n, err := s.Answer(body)
		if err != nil {
			if !slices.ContainsFunc(offerErrors, func(e error) bool { return errors.Is(err, e) }) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if c := StatusCode(err); c != 400 && c != 413 && c != 488 {
				t.Fatalf("StatusCode %d for %v", c, err)
			}
		} else {
			checkAnswer(t, s, body, answer, n)
		}

		s2, err := New(Config{}, local4, WithRand(rand.NewChaCha8([32]byte{})))
		if err != nil {
			t.Fatal(err)
		}
		s2.Offer()
		n2, err := s2.AcceptAnswer(body)
		if err != nil {
			if !errors.Is(err, ErrAnswerMismatch) && !slices.ContainsFunc(offerErrors, func(e error) bool { return errors.Is(err, e) }) {
				t.Fatalf("answer error %v wraps no sentinel", err)
			}
			return
		}
		if !slices.ContainsFunc(s2.offerFmts, func(f ourFormat) bool { return f.pt == n2.PayloadType }) {
			t.Fatalf("accepted payload type %d we did not offer", n2.PayloadType)
		}
	})
}

func checkAnswer(t *testing.T, s *Session, offer, answer []byte, n Negotiated) {
	t.Helper()
	sd, err := parse(offer, &s.cfg)
	if err != nil {
		t.Fatalf("answered an offer parse refuses: %v", err)
	}
	got := reparse(t, answer)
	if len(got.MediaDescriptions) != len(sd.MediaDescriptions) {
		t.Fatalf("%d m-lines answer %d", len(got.MediaDescriptions), len(sd.MediaDescriptions))
	}
	for i, md := range got.MediaDescriptions {
		if md.MediaName.Media != sd.MediaDescriptions[i].MediaName.Media {
			t.Fatalf("m-line %d is %s, offered %s", i, md.MediaName.Media, sd.MediaDescriptions[i].MediaName.Media)
		}
		if (md.MediaName.Port.Value != 0) != (i == n.MediaIndex) {
			t.Fatalf("m-line %d has port %d; the chosen one is %d", i, md.MediaName.Port.Value, n.MediaIndex)
		}
	}
	md := got.MediaDescriptions[n.MediaIndex]
	if md.MediaName.Port.Value != int(local4.Addr.Port()) || md.MediaName.Formats[0] != strconv.Itoa(int(n.PayloadType)) {
		t.Fatalf("chosen m-line %s for %+v", md.MediaName.String(), n)
	}
	if !validPtimeOut(n.Codec, n.PtimeOut) || n.PtimeIn < MinPtime || n.PtimeIn > MaxPtime {
		t.Fatalf("ptime out %v in %v for %s", n.PtimeOut, n.PtimeIn, n.Codec)
	}
	if n.Remote.Port() == 0 || !n.Remote.Addr().IsValid() || n.Send != n.Direction.Send() || n.Receive != n.Direction.Receive() {
		t.Fatalf("settled %+v", n)
	}
	if n.HasEvents && n.EventPT == n.PayloadType {
		t.Fatalf("events share the audio payload type: %+v", n)
	}
	// Our re-offer keeps the m-lines and maps each payload type once,
	// the ones in use as they were.
	re := reparse(t, s.Offer())
	if len(re.MediaDescriptions) != len(sd.MediaDescriptions) {
		t.Fatalf("re-offer has %d m-lines for %d", len(re.MediaDescriptions), len(sd.MediaDescriptions))
	}
	rmd := re.MediaDescriptions[n.MediaIndex]
	seen := map[string]bool{}
	for _, f := range rmd.MediaName.Formats {
		if seen[f] {
			t.Fatalf("re-offer lists payload type %s twice", f)
		}
		seen[f] = true
	}
	if c, err := re.GetCodecForPayloadType(n.PayloadType); err != nil || !n.Codec.matches(c.Name, int(c.ClockRate), 0) {
		t.Fatalf("re-offer maps %d to %+v (%v), in use for %s", n.PayloadType, c, err, n.Codec)
	}
	s.CancelOffer()
}
