package twilio

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// TestStreamRoundTrip: a stream in Twilio's shapes, end to end. The
// caller's tone comes out of ReadFrame in order, bot audio goes out as
// media messages whose payload decodes to what was written, a mark's
// echo reaches OnMarkEcho, Clear sends clear, a mark sent before a clear
// is not confirmed, DTMF reaches OnDTMF, stop ends ReadFrame with
// ErrClosed and the server closes normally. Mutations caught (each seen
// failing): the echo not handed on (Core.Echo dropping it), Clear not
// flagging the sent mark (its echo confirmed), stop not closing the
// inbox with its reason (the hang-up's reason instead), WriteFrame encoding
// with the wrong G.711 law.
func TestStreamRoundTrip(t *testing.T) {
	inBubble(t, Config{}, func(r *rig) {
		f, call := r.open()
		if call.StreamSID() != testStreamSID || call.CallSID() != testCallSID || call.AccountSID() != testAccount {
			t.Fatalf("sids %q %q %q", call.StreamSID(), call.CallSID(), call.AccountSID())
		}
		if !maps.Equal(call.CustomParameters(), map[string]string{"caller": "+15550100"}) {
			t.Fatalf("custom parameters %v", call.CustomParameters())
		}
		if !strings.HasPrefix(call.ID(), "tw-") || len(call.ID()) != 19 {
			t.Fatalf("call id %q", call.ID())
		}
		echoes := make(chan string, 4)
		call.OnMarkEcho(func(name string) { echoes <- name })
		digits := make(chan messages.DTMF, 4)
		call.OnDTMF(func(d messages.DTMF) { digits <- d })

		// Caller audio: 10 chunks of 20 ms.
		const chunks = 10
		var want []int16
		for i := range chunks {
			mu := mulawOf(tone(i*160, 160))
			want = append(want, heard(mu)...)
			f.media(mu, i+1, i*20)
		}
		fr := messages.NewPooledFrame(Rate, nil)
		var got []int16
		var first time.Time
		for i := range chunks {
			if err := call.ReadFrame(context.Background(), fr); err != nil {
				t.Fatalf("frame %d: %v", i, err)
			}
			if i == 0 {
				first = fr.Start
			}
			if fr.Seq != uint64(i) || fr.Rate != Rate || !fr.Start.Equal(first.Add(time.Duration(i)*messages.FrameDuration)) {
				t.Fatalf("frame %d: seq %d rate %d start +%v", i, fr.Seq, fr.Rate, fr.Start.Sub(first))
			}
			got = append(got, fr.PCM...)
		}
		if !slices.Equal(got, want) {
			t.Fatal("the frames read are not the caller's tone")
		}

		// Bot audio, then a mark and its echo.
		for i := range 3 {
			out := &messages.OutputAudio{Epoch: 1, Rate: Rate, PCM: tone(1000+i*160, 160)}
			if err := call.WriteFrame(out); err != nil {
				t.Fatal(err)
			}
			o := f.read()
			mu, _ := base64.StdEncoding.DecodeString(o.Media.Payload)
			if o.Event != "media" || !slices.Equal(mu, mulawOf(out.PCM)) {
				t.Fatalf("frame %d went out as %s with %d bytes not the written audio", i, o.Event, len(mu))
			}
		}
		if err := call.Mark("end-1"); err != nil {
			t.Fatal(err)
		}
		if o := f.read(); o.Event != "mark" || o.Mark.Name != "end-1" {
			t.Fatalf("after Mark: %+v", o)
		}
		f.mark("end-1")
		if name := <-echoes; name != "end-1" {
			t.Fatalf("echo %q", name)
		}

		// A mark sent, then a barge-in: Twilio echoes it at once, and that
		// echo must not read as "played".
		_ = call.WriteFrame(&messages.OutputAudio{Epoch: 2, Rate: Rate, PCM: tone(0, 160)})
		_ = call.Mark("end-2")
		f.read()
		f.read()
		if err := call.Clear(3); err != nil {
			t.Fatal(err)
		}
		if o := f.read(); o.Event != "clear" {
			t.Fatalf("after Clear: %+v", o)
		}
		f.mark("end-2")
		f.dtmf("5")
		if d := <-digits; d.Digit != '5' || d.Source != messages.DTMFCarrier || d.At.IsZero() {
			t.Fatalf("key press %+v", d)
		}
		synctest.Wait()
		select {
		case name := <-echoes:
			t.Fatalf("the echo of %q, cleared, was handed on", name)
		default:
		}

		f.stop()
		err := call.ReadFrame(context.Background(), fr)
		if !errors.Is(err, conn.ErrClosed) || !strings.Contains(err.Error(), "Twilio stopped the stream") {
			t.Fatalf("after stop: %v", err)
		}
		if ce := f.readClose(); ce.Code != websocket.StatusNormalClosure {
			t.Fatalf("close %v", ce)
		}
		<-call.Done()
		if err := call.WriteFrame(&messages.OutputAudio{Epoch: 4, Rate: Rate, PCM: tone(0, 160)}); !errors.Is(err, conn.ErrClosed) {
			t.Fatalf("WriteFrame after the end: %v", err)
		}
		st := r.h.Stats()
		wantStats := map[string]uint64{"calls": 1, "frames_in": chunks, "marks": 2, "mark_echoes": 1, "marks_cleared": 1,
			"clears": 1, "dtmf": 1, "stops": 1, "connected": 1, "hangups": 1}
		for k, v := range wantStats {
			if st[k] != v {
				t.Errorf("%s = %d, want %d", k, st[k], v)
			}
		}
	})
}

// chunk is one media message of a shaping case: samples of the tone
// from off (or silence when off < 0), with chunk number and timestamp (-1:
// absent).
type chunk struct {
	off, n    int
	num, tsMS int
}

// TestMediaTimeline: chunks of other lengths are re-chunked, and gaps in
// the timestamps (or, without them, in the chunk numbers) become
// silence, so frame n is always n x 20 ms into the stream. Mutations
// caught (each seen failing): no silence for a timestamp gap, the chunk
// fallback off, the tolerance ignored (a 1 ms jitter inserting a
// sample), a bogus jump inserting ten minutes of silence.
func TestMediaTimeline(t *testing.T) {
	cases := []struct {
		name   string
		chunks []chunk
		// timeline: (tone offset, samples) runs, -1 for silence.
		timeline [][2]int
		gaps     uint64
	}{
		{name: "20 ms", chunks: []chunk{{0, 160, 1, 0}, {160, 160, 2, 20}, {320, 160, 3, 40}},
			timeline: [][2]int{{0, 480}}},
		{name: "10 ms", chunks: []chunk{{0, 80, 1, 0}, {80, 80, 2, 10}, {160, 80, 3, 20}, {240, 80, 4, 30}},
			timeline: [][2]int{{0, 320}}},
		{name: "30 ms", chunks: []chunk{{0, 240, 1, 0}, {240, 240, 2, 30}},
			timeline: [][2]int{{0, 480}}},
		{name: "timestamp gap", chunks: []chunk{{0, 160, 1, 0}, {160, 160, 2, 20}, {800, 160, 6, 100}},
			timeline: [][2]int{{0, 320}, {-1, 480}, {800, 160}}, gaps: 1},
		{name: "timestamps from 5 ms", chunks: []chunk{{0, 160, 1, 5}, {480, 160, 4, 65}},
			timeline: [][2]int{{0, 160}, {-1, 320}, {480, 160}}, gaps: 1},
		{name: "jitter within tolerance", chunks: []chunk{{0, 160, 1, 0}, {160, 160, 2, 21}, {320, 160, 3, 40}},
			timeline: [][2]int{{0, 480}}},
		{name: "chunk number gap", chunks: []chunk{{0, 160, 1, -1}, {160, 160, 2, -1}, {640, 160, 5, -1}},
			timeline: [][2]int{{0, 320}, {-1, 320}, {640, 160}}, gaps: 1},
		{name: "bogus jump", chunks: []chunk{{0, 160, 1, 0}, {160, 160, 2, 3_600_000}, {320, 160, 3, 3_600_020}},
			timeline: [][2]int{{0, 480}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, Config{}, func(r *rig) {
				f, call := r.open()
				var want []int16
				for _, run := range tc.timeline {
					if run[0] < 0 {
						want = append(want, make([]int16, run[1])...)
					} else {
						want = append(want, heard(mulawOf(tone(run[0], run[1])))...)
					}
				}
				for _, c := range tc.chunks {
					f.media(mulawOf(tone(c.off, c.n)), c.num, c.tsMS)
				}
				f.stop()
				var got []int16
				fr := messages.NewPooledFrame(Rate, nil)
				for {
					err := call.ReadFrame(context.Background(), fr)
					if errors.Is(err, conn.ErrClosed) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, fr.PCM...)
				}
				if len(got) != len(want) || !slices.Equal(got, want) {
					t.Fatalf("timeline of %d samples, want %d (equal: %v)", len(got), len(want), slices.Equal(got, want))
				}
				if g := r.h.Stats()["gaps"]; g != tc.gaps {
					t.Fatalf("gaps %d, want %d", g, tc.gaps)
				}
				f.readClose()
			})
		})
	}
}
