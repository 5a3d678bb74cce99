package twilio

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/coder/websocket"
)

// TestBurstAdmission: the pcmws burst, for Twilio streams (the admitted
// ones send connected and start). 200 websockets opened at once against
// a limit of 20: exactly 20 are upgraded and every other one is answered 503 with
// Retry-After and the cause "full"; after the calls end, and after
// admitted requests whose upgrade fails and streams that never send
// "start", all 20 slots are free again (a second burst admits
// 20 again) and none was given back twice. The defect: 22 to 49 of 200
// were upgraded with --max-calls 20, and the extra ones closed with
// 1000. Mutations caught (each seen failing): the handler not releasing
// the slot of a stream that never started (slots leaked), admission asked after the
// upgrade, the refused closed with 1000 (all 200 upgraded), the slot of a
// failed upgrade not released (slots leaked).
func TestBurstAdmission(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	before := goleak.IgnoreCurrent()
	const limit, burst = 20, 200
	adm := &carriertest.Admitter{Limit: limit, RetryAfter: 2 * time.Second}
	var owners sync.WaitGroup
	h, err := New(Config{Admit: adm.Admit, OnCall: func(c *Call) {
		// What the server does: the call took its slot; it frees it when
		// the call ends.
		slot := c.Admission().(*carriertest.Slot)
		slot.Start()
		owners.Go(func() { <-c.Done(); slot.End() })
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := carriertest.NewLoopbackServer(h)
	ctx := context.Background()

	var started uint64
	round := func() {
		t.Helper()
		open, refused, errs := carriertest.Burst(ctx, srv, burst, "/twilio")
		if len(errs) > 0 {
			t.Fatalf("%d dials failed: %v", len(errs), errs[0])
		}
		if len(open) != limit || len(refused) != burst-limit {
			t.Fatalf("%d upgraded, %d refused; want exactly %d upgraded", len(open), len(refused), limit)
		}
		for _, r := range refused {
			if r.Status != http.StatusServiceUnavailable || r.RetryAfter != "2" || r.Cause != "full" {
				t.Fatalf("refusal %+v", r)
			}
		}
		if adm.InUse() != limit {
			t.Fatalf("%d slots in use with %d calls", adm.InUse(), limit)
		}
		for _, ws := range open {
			f := &fakeTwilio{t: t, ws: ws}
			f.connected()
			f.start("audio/x-mulaw", 8000, 1, nil)
		}
		if !carriertest.WaitFor(10*time.Second, func() bool { return h.Stats()["calls"] >= started+limit }) {
			t.Fatalf("%d calls started, want %d", h.Stats()["calls"], started+limit)
		}
		started += limit
		for _, ws := range open {
			_ = ws.Close(websocket.StatusNormalClosure, "")
		}
		if !carriertest.WaitFor(10*time.Second, func() bool { return adm.InUse() == 0 }) {
			t.Fatalf("%d slots still in use after the calls ended", adm.InUse())
		}
	}
	round()

	// Admitted requests that go no further: an upgrade that fails (a
	// websocket version we do not speak) and clients that close at once.
	var wg sync.WaitGroup
	for i := range 2 * limit {
		wg.Go(func() {
			if i%2 == 0 {
				_, resp, _, _ := carriertest.DialRaw(ctx, srv, "/twilio", carriertest.Header("Sec-WebSocket-Version", "12"))
				if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
					t.Errorf("a bad upgrade answered %v", resp)
				}
				return
			}
			if c, _, _, err := carriertest.DialRaw(ctx, srv, "/twilio", nil); err == nil {
				_ = c.Write(carriertest.OpText, []byte(`{"event":"connected"}`))
				c.Close() // no start
			}
		})
	}
	wg.Wait()
	if !carriertest.WaitFor(10*time.Second, func() bool { return adm.InUse() == 0 }) {
		t.Fatalf("%d slots leaked by failed upgrades and early closes", adm.InUse())
	}
	round()

	if adm.Twice() != 0 {
		t.Fatalf("%d slots given back twice", adm.Twice())
	}
	if st := h.Stats(); st["bad_upgrades"] < limit/2 {
		t.Fatalf("bad_upgrades %d: the failed upgrades were not tried", st["bad_upgrades"])
	}
	h.Close()
	srv.Close()
	owners.Wait()
	goleak.VerifyNone(t, before)
}
