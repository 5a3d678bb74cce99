package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/pion/ice/v4"
	pion "github.com/pion/webrtc/v4"
)

// clientOffer makes a real offer body (audio, Opus, host candidates on
// 127.0.0.1) from a pion peer connection, then closes it: a call made of
// it never connects, as a client that went before ICE connected.
func clientOffer(t *testing.T) string {
	t.Helper()
	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(pion.RTPCodecParameters{RTPCodecCapability: opusCodec, PayloadType: opusPT}, pion.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	se := pion.SettingEngine{}
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	pc, err := pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se)).NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.AddTransceiverFromKind(pion.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	return offerBody(pc.LocalDescription().SDP)
}

// burstResult is one answer of a burst.
type burstResult struct {
	status     int
	retryAfter string
	cause      string
}

// postAll posts every body at once (released together) and returns the
// answers in order.
func postAll(t *testing.T, ctx context.Context, base string, bodies []string, contentType string) []burstResult {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(bodies)}}
	defer client.CloseIdleConnections()
	out := make([]burstResult, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/offer", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Content-Type", contentType)
			<-start
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("offer %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			var m map[string]string
			_ = json.Unmarshal(data, &m)
			out[i] = burstResult{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), cause: m["cause"]}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// TestBurstAdmission: 100 offers at once against a limit of 5: exactly 5
// answered 200, the other 95 503 with Retry-After and the cause; offers
// that fail after admission (SDP pion refuses, too large, not JSON) and
// calls whose client went before ICE connected give their slots back, so
// that afterwards the whole limit is admitted again and none leaked.
// Mutations caught: `defer adm.Release()` dropped (the failed offers
// leak their slots: 5 still reserved after them), the slot not handed to
// the call (OnCall finds no reserved slot), a refusal without Retry-After
// or cause.
func TestBurstAdmission(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets: 100 offers at once")
	}
	const limit, burst = 5, 100
	adm := &countingAdmitter{limit: limit, retry: 2 * time.Second}
	cfg := testConfig()
	cfg.ConnectTimeout = 4 * time.Second
	cfg.Admit = adm.Admit
	ts := startServer(t, cfg)
	calls := make(chan *Call, burst)
	ts.srv.cfg.OnCall = func(c *Call) {
		if !adm.start(c.Admission()) {
			t.Error("a call came without a reserved slot")
		}
		calls <- c
	}
	ctx := testCtx(t, 60*time.Second)
	offer := clientOffer(t)
	// endAll waits for n calls to end on their own (nobody connects) and
	// frees their slots as the server would.
	endAll := func(n int, want error) {
		t.Helper()
		for range n {
			var c *Call
			select {
			case c = <-calls:
			case <-ctx.Done():
				t.Fatal("a call was not handed over")
			}
			if err := drainUntilEnd(ctx, c); !errors.Is(err, want) || !errors.Is(err, conn.ErrVanished) {
				t.Fatalf("call ended with %v, want %v (vanished)", err, want)
			}
			c.Close()
			adm.end()
		}
	}

	bodies := make([]string, burst)
	for i := range bodies {
		bodies[i] = offer
	}
	res := postAll(t, ctx, ts.base, bodies, "application/json")
	ok, refused := 0, 0
	for i, r := range res {
		switch {
		case r.status == http.StatusOK:
			ok++
		case r.status == http.StatusServiceUnavailable && r.retryAfter == "2" && r.cause == "full":
			refused++
		default:
			t.Errorf("offer %d: %+v, want 200 or 503 with Retry-After 2 and cause full", i, r)
		}
	}
	if ok != limit || refused != burst-limit {
		t.Fatalf("%d answered, %d refused; want exactly %d and %d", ok, refused, limit, burst-limit)
	}
	endAll(limit, ErrConnectTimeout)
	if r, l, peak := adm.counts(); r != 0 || l != 0 || peak > limit {
		t.Fatalf("after the calls: %d reserved, %d live, peak %d; want 0, 0, <= %d", r, l, peak, limit)
	}

	// Offers that fail after admission, all at once.
	peerRefused := offerBody(sdpLines("v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0",
		"m=audio 9 UDP/TLS/RTP/SAVPF 111", "c=IN IP4 0.0.0.0", "a=mid:0", "a=sendrecv", "a=rtpmap:111 opus/48000/2"))
	var bad []string
	for i := range 40 {
		switch i % 3 {
		case 0:
			bad = append(bad, peerRefused)
		case 1:
			bad = append(bad, offerBody(strings.Repeat("a", 70<<10)))
		default:
			bad = append(bad, `{"type":"offer",`)
		}
	}
	for i, r := range postAll(t, ctx, ts.base, bad, "application/json") {
		if r.status != http.StatusBadRequest && r.status != http.StatusRequestEntityTooLarge && r.status != http.StatusServiceUnavailable {
			t.Errorf("bad offer %d: %+v, want 400, 413 or 503", i, r)
		}
	}
	if r, l, _ := adm.counts(); r != 0 || l != 0 || len(calls) != 0 {
		t.Fatalf("after the bad offers: %d reserved, %d live, %d calls; want none", r, l, len(calls))
	}

	// Every slot is free again: the whole limit is admitted.
	for i, r := range postAll(t, ctx, ts.base, bodies[:limit], "application/json") {
		if r.status != http.StatusOK {
			t.Fatalf("offer %d after the bursts: %+v, want 200 (a slot leaked)", i, r)
		}
	}
	endAll(limit, ErrConnectTimeout)
	if r, l, peak := adm.counts(); r != 0 || l != 0 || peak > limit {
		t.Fatalf("at the end: %d reserved, %d live, peak %d", r, l, peak)
	}
	st := ts.srv.Stats()
	t.Logf("burst of %d against %d: %d admitted, %d refused; stats %d offers, %d refused", burst, limit, ok, refused, st["offers"], st["offers_refused"])
}

// TestOfferAbandoned: a client that goes while the answer waits for
// gathering makes no call, and its slot is free at once (not after
// ConnectTimeout). Gathering is held up by a STUN server that never
// answers.
// Mutation caught: the request's context not checked after the gather
// wait (the call is made and handed over for nobody: a live slot).
func TestOfferAbandoned(t *testing.T) {
	if testing.Short() {
		t.Skip("real sockets")
	}
	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	adm := &countingAdmitter{limit: 1, retry: time.Second}
	admitted := make(chan struct{}, 1)
	cfg := testConfig()
	cfg.GatherTimeout = 8 * time.Second
	cfg.STUNServers = []string{"stun:" + silent.LocalAddr().String()}
	cfg.Admit = func() (conn.Admission, error) {
		a, err := adm.Admit()
		admitted <- struct{}{}
		return a, err
	}
	ts := startServer(t, cfg)
	ts.srv.cfg.OnCall = func(c *Call) {
		adm.start(c.Admission())
		ts.calls <- c
	}
	ctx := testCtx(t, 30*time.Second)
	offer := clientOffer(t)
	reqCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(reqCtx, http.MethodPost, ts.base+"/offer", strings.NewReader(offer))
		req.Header.Set("Content-Type", "application/json")
		client := &http.Client{Transport: &http.Transport{}}
		defer client.CloseIdleConnections()
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-admitted
	// The body is in flight with the request; give the server a moment
	// to be in the gather wait (a cancel while it reads the body is
	// counted as a bad offer, with the same invariant).
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the offer was answered before the client left: gathering was not held up")
	}
	for {
		if r, _, _ := adm.counts(); r == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the abandoned offer's slot was never released")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, live, _ := adm.counts(); live != 0 || len(ts.calls) != 0 {
		t.Fatalf("an abandoned offer became a call (%d live)", live)
	}
	st := ts.srv.Stats()
	if st["offers_abandoned"]+st["bad_offer_json"] != 1 {
		t.Fatalf("not counted: %v", st)
	}
	t.Logf("abandoned: %d, while reading the body: %d", st["offers_abandoned"], st["bad_offer_json"])
}
