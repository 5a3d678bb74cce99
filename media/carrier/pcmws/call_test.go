package pcmws

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// TestCallRoundTrip: for each rate, the client's audio in messages of
// any length comes out of ReadFrame as 20 ms frames in order; bot audio
// goes out as binary s16le; a mark's echo reaches OnMarkEcho; Clear sends
// clear and the echo of a mark sent before it is swallowed; Publish sends
// an event; the client's hangup ends ReadFrame with ErrClosed and the
// server closes normally. Mutations caught (each seen failing): decoding
// big-endian, WriteFrame writing the samples' low bytes only, the hangup
// control not closing the inbox with its reason, Publish not wrapping
// the data.
func TestCallRoundTrip(t *testing.T) {
	for _, rate := range []int{8000, 16000, 24000, 48000} {
		t.Run(itoa(rate), func(t *testing.T) {
			inBubble(t, Config{}, func(r *rig) {
				f, call := r.open("/pcm?rate=" + itoa(rate) + "&agent=demo")
				if call.InputRate() != rate || call.OutputRate() != rate || call.Query().Get("agent") != "demo" {
					t.Fatalf("rates %d/%d, query %v", call.InputRate(), call.OutputRate(), call.Query())
				}
				if !strings.HasPrefix(call.ID(), "pw-") {
					t.Fatalf("id %q", call.ID())
				}
				echoes := make(chan string, 4)
				call.OnMarkEcho(func(n string) { echoes <- n })
				spf := rate / 50
				// 5 frames of audio in messages of 0.3, 1.7, 1, 2 frames.
				want := tone(rate, 0, 5*spf)
				cuts := []int{0, spf * 3 / 10, spf * 2, spf * 3, 5 * spf}
				for i := 1; i < len(cuts); i++ {
					f.audio(want[cuts[i-1]:cuts[i]])
				}
				fr := messages.NewPooledFrame(rate, nil)
				var got []int16
				for i := range 5 {
					if err := call.ReadFrame(context.Background(), fr); err != nil {
						t.Fatal(err)
					}
					if fr.Seq != uint64(i) || fr.Rate != rate {
						t.Fatalf("frame %d: seq %d rate %d", i, fr.Seq, fr.Rate)
					}
					got = append(got, fr.PCM...)
				}
				if !slices.Equal(got, want) {
					t.Fatal("frames differ from the audio sent")
				}

				out := tone(rate, 777, spf)
				out[0], out[1] = -32768, 32767
				if err := call.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: rate, PCM: out}); err != nil {
					t.Fatal(err)
				}
				if m := f.read(); m.Type != "audio" || !slices.Equal(m.PCM, out) {
					t.Fatalf("audio out: %s of %d samples", m.Type, len(m.PCM))
				}
				if err := call.WriteFrame(&messages.OutputAudio{Epoch: 1, Rate: rate + 1, PCM: out}); !errors.Is(err, ErrRate) {
					t.Fatalf("WriteFrame at another rate: %v", err)
				}
				_ = call.Mark("end-1")
				if m := f.read(); m.Type != "mark" || m.Name != "end-1" {
					t.Fatalf("mark out: %+v", m)
				}
				f.control(map[string]string{"type": "mark", "name": "end-1"})
				if n := <-echoes; n != "end-1" {
					t.Fatalf("echo %q", n)
				}
				_ = call.Mark("end-2")
				f.read()
				_ = call.Clear(2)
				if m := f.read(); m.Type != "clear" {
					t.Fatalf("clear out: %+v", m)
				}
				f.control(map[string]string{"type": "mark", "name": "end-2"})
				if err := call.Publish(map[string]any{"kind": "transcript", "final": true}); err != nil {
					t.Fatal(err)
				}
				if m := f.read(); m.Type != "event" || string(m.Data) != `{"final":true,"kind":"transcript"}` {
					t.Fatalf("event out: %+v %s", m, m.Data)
				}
				synctest.Wait()
				select {
				case n := <-echoes:
					t.Fatalf("the echo of %q, cleared, was handed on", n)
				default:
				}
				f.control(map[string]string{"type": "hangup"})
				err := call.ReadFrame(context.Background(), fr)
				if !errors.Is(err, conn.ErrClosed) || !strings.Contains(err.Error(), "the client hung up") {
					t.Fatalf("after hangup: %v", err)
				}
				if ce := f.readClose(); ce.Code != websocket.StatusNormalClosure {
					t.Fatalf("close %+v", ce)
				}
				<-call.Done()
				st := r.h.Stats()
				for k, v := range map[string]uint64{"calls": 1, "frames_in": 5, "mark_echoes": 1, "marks_cleared": 1,
					"client_hangups": 1, "events_out": 1} {
					if st[k] != v {
						t.Errorf("%s = %d, want %d", k, st[k], v)
					}
				}
			})
		})
	}
}

// TestBadInput: bad input is counted and skipped or ends the call with a
// clear close code or HTTP status; nothing is left behind. Mutations
// caught (each seen failing): odd-length audio pushed (the frames shift
// by a byte), an unknown control counted as bad (the run ends the call),
// the rate not checked, the idle timeout not armed at the start.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		run  func(t *testing.T, r *rig)
		want map[string]uint64
	}{
		{name: "odd length", run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm?rate=8000")
			f.sendRaw(websocket.MessageBinary, []byte{1, 2, 3})
			survives(t, f, call)
		}, want: map[string]uint64{"odd_length": 1}},
		{name: "malformed JSON", run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm?rate=8000")
			f.sendRaw(websocket.MessageText, []byte("{nope"))
			survives(t, f, call)
		}, want: map[string]uint64{"bad_json": 1}},
		{name: "unknown controls", cfg: Config{Limits: Limits{MaxBadMessages: 2}}, run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm?rate=8000")
			f.control(map[string]string{"type": "dance"})
			f.control(map[string]string{"type": "sing"})
			survives(t, f, call)
		}, want: map[string]uint64{"unknown_controls": 2, "too_many_bad": 0}},
		{name: "binary garbage run", cfg: Config{Limits: Limits{MaxBadMessages: 3}}, run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm?rate=8000")
			for range 3 {
				f.sendRaw(websocket.MessageBinary, []byte{0xff})
			}
			ce := f.readClose()
			if ce.Code != websocket.StatusPolicyViolation {
				t.Fatalf("close %+v", ce)
			}
			<-call.Done()
			if !strings.Contains(call.Err().Error(), "too many bad messages") {
				t.Fatalf("end %v", call.Err())
			}
		}, want: map[string]uint64{"odd_length": 3, "too_many_bad": 1}},
		{name: "oversized", cfg: Config{Limits: Limits{MaxMessageBytes: 4096}}, run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm?rate=8000")
			f.sendRaw(websocket.MessageBinary, make([]byte, 5000))
			survives(t, f, call)
		}, want: map[string]uint64{"oversized": 1}},
		{name: "bad rate", run: func(t *testing.T, r *rig) {
			for _, q := range []string{"?rate=44100", "?rate=fast", "?rate=-8000"} {
				_, resp, err := r.srv.Dial(context.Background(), "/pcm"+q)
				if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
					t.Fatalf("dial %s: %v", q, err)
				}
			}
		}, want: map[string]uint64{"bad_rates": 3, "upgrades": 0}},
		{name: "vanished", run: func(t *testing.T, r *rig) {
			f, call := r.open("/pcm")
			_ = f.ws.CloseNow()
			<-call.Done()
			if !strings.Contains(call.Err().Error(), "the connection was lost") {
				t.Fatalf("end %v", call.Err())
			}
		}, want: map[string]uint64{"vanished": 1}},
		{name: "silent client", run: func(t *testing.T, r *rig) {
			began := time.Now()
			_, call := r.open("/pcm")
			<-call.Done()
			if waited := time.Since(began); waited != DefaultIdleTimeout || !strings.Contains(call.Err().Error(), "no message") ||
				!errors.Is(call.Err(), conn.ErrSilentInput) {
				t.Fatalf("ended after %v: %v", waited, call.Err())
			}
		}, want: map[string]uint64{"silent_input": 1}},
		{name: "not admitted", cfg: Config{Admit: func() (conn.Admission, error) { return nil, errors.New("full") }}, run: func(t *testing.T, r *rig) {
			_, resp, err := r.srv.Dial(context.Background(), "/pcm")
			if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("dial: %v", err)
			}
		}, want: map[string]uint64{"refused": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, tc.cfg, func(r *rig) {
				tc.run(t, r)
				st := r.h.Stats()
				for k, v := range tc.want {
					if st[k] != v {
						t.Errorf("%s = %d, want %d", k, st[k], v)
					}
				}
			})
		})
	}
}

// survives: a frame of audio sent now comes out of ReadFrame.
func survives(t *testing.T, f *fakeClient, call *Call) {
	t.Helper()
	pcm := tone(call.InputRate(), 3, call.InputRate()/50)
	f.audio(pcm)
	fr := messages.NewPooledFrame(call.InputRate(), nil)
	if err := call.ReadFrame(context.Background(), fr); err != nil {
		t.Fatalf("the call did not survive: %v", err)
	}
	if !slices.Equal(fr.PCM, pcm) {
		t.Fatal("the frame after the bad message is not the audio sent")
	}
}

func itoa(v int) string { return strconv.Itoa(v) }

// TestCounterNames: every counter the package's code increments is
// registered. Mutation caught: a counter name misspelt in the code.
func TestCounterNames(t *testing.T) {
	h, err := New(Config{OnCall: func(*Call) {}})
	if err != nil {
		t.Fatal(err)
	}
	st := h.Stats()
	for _, n := range carriertest.UsedCounterNames(t, ".", "../internal/wscall") {
		if _, ok := st[n]; !ok {
			t.Errorf("counter %q is used but not registered", n)
		}
	}
}
