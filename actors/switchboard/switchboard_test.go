package switchboard_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
)

// harness is a switchboard with calls that listen to silence.
type harness struct {
	t     *testing.T
	sys   *kit.System
	board *actor.PID
	ended chan messages.CallEnded
	base  leaktest.Set
}

// dispatchers are the systems the tests run on: with the long-lived
// workers the server uses, and with protoactor's goroutine per schedule.
var dispatchers = []struct {
	name string
	opts []kit.SystemOption
}{
	{"workers", []kit.SystemOption{kit.WithWorkers(0)}},
	{"goroutines", nil},
}

// eachDispatcher runs test in a synctest bubble once per dispatcher.
func eachDispatcher(t *testing.T, test func(t *testing.T, h *harness)) {
	for _, d := range dispatchers {
		t.Run(d.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys := kit.NewSystem(zerolog.Nop(), d.opts...)
				h := &harness{t: t, sys: sys, board: sys.Root.Spawn(switchboard.Props()), ended: make(chan messages.CallEnded, 16), base: base}
				test(t, h)
				h.stop()
			})
		})
	}
}

func (h *harness) ask(msg any) any {
	h.t.Helper()
	v, err := h.sys.Root.RequestFuture(h.board, msg, time.Second).Result()
	if err != nil {
		h.t.Fatalf("%T: %v", msg, err)
	}
	return v
}

func (h *harness) start(id messages.CallID) *switchboard.CallStarted {
	h.t.Helper()
	s := sim.NewScenario(string(id)).Silence(time.Second)
	props, err := session.Props(session.Config{
		Call: id, Conn: sim.NewLoopback(sim.LoopbackConfig{}, s, time.Now()),
		STT: providertest.NewMockSTT(providertest.STTConfig{}, nil), LLM: providertest.NewMockLLM(providertest.LLMConfig{}), TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
		Log: zerolog.Nop(), OnEnd: func(e messages.CallEnded) { h.ended <- e },
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return h.ask(&switchboard.StartCall{Call: id, Props: props}).(*switchboard.CallStarted)
}

func (h *harness) calls() []messages.CallID {
	return h.ask(&messages.ListCalls{}).(*messages.CallList).Calls
}

// stop ends the calls and the switchboard and shuts the system down (which
// also lets protoactor's dead-letter throttle run out), and checks that no
// goroutine is left.
func (h *harness) stop() {
	if err := h.sys.Root.StopFuture(h.board).Wait(); err != nil {
		h.t.Fatal(err)
	}
	h.sys.Shutdown()
	synctest.Wait() // a goroutine per schedule may be on its way out
	if n := leaktest.Snapshot().NewSince(h.base); n != 0 {
		h.t.Errorf("%d goroutines left after Shutdown", n)
	}
}

// TestAdmission: calls are admitted up to the limit, a live id is refused,
// the list is sorted, and a hung-up call frees its place. (Mutations seen
// failing: the limit check off by one; Terminated not forgetting the call.)
func TestAdmission(t *testing.T) {
	eachDispatcher(t, func(t *testing.T, h *harness) {
		if r := h.start("b"); r.Err != nil || r.PID == nil {
			t.Fatalf("first call: %+v", r)
		}
		if r := h.start("b"); !errors.Is(r.Err, switchboard.ErrDuplicate) {
			t.Fatalf("same id again: %v, want ErrDuplicate", r.Err)
		}
		if r := h.start("a"); r.Err != nil {
			t.Fatalf("second call: %v", r.Err)
		}
		if got := h.calls(); !slices.Equal(got, []messages.CallID{"a", "b"}) {
			t.Fatalf("calls %v, want [a b]", got)
		}
		h.sys.Root.Send(h.board, &switchboard.ToCall{Call: "a", Msg: &messages.Hangup{Reason: "test"}})
		if e := <-h.ended; e.Call != "a" || e.Reason != "hangup: test" {
			t.Fatalf("ended %+v", e)
		}
		synctest.Wait()
		if got := h.calls(); !slices.Equal(got, []messages.CallID{"b"}) {
			t.Fatalf("after the hang-up: calls %v, want [b]", got)
		}
		if r := h.start("c"); r.Err != nil {
			t.Fatalf("a call after one ended: %v", r.Err)
		}
	})
}

// TestRouting: operator commands reach the call's session through the
// switchboard and are answered to the asker; an unknown call is answered
// with ErrUnknownCall instead of a timeout.
func TestRouting(t *testing.T) {
	eachDispatcher(t, func(t *testing.T, h *harness) {
		h.start("x")
		d, ok := h.ask(&switchboard.ToCall{Call: "x", Msg: &messages.Describe{}}).(*messages.Description)
		if !ok || len(d.Children) != len(messages.Stages()) {
			t.Fatalf("describe: %+v", d)
		}
		res, ok := h.ask(&switchboard.ToCall{Call: "x", Msg: &messages.Restart{Stage: messages.StageVAD}}).(*messages.RestartResult)
		if !ok || res.Err != nil {
			t.Fatalf("restart: %+v", res)
		}
		unk, ok := h.ask(&switchboard.ToCall{Call: "nope", Msg: &messages.Describe{}}).(*switchboard.CallStarted)
		if !ok || !errors.Is(unk.Err, switchboard.ErrUnknownCall) {
			t.Fatalf("unknown call: %+v", unk)
		}
	})
}
