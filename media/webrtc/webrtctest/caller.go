package webrtctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/opus"
	"github.com/coder/websocket"
	"github.com/pion/ice/v4"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
	"github.com/rs/zerolog"
)

// Rate is the rate of the audio a Caller receives (Received) and streams:
// Opus's 48 kHz.
const Rate = 48000

const (
	frame       = Rate / 50
	frameLength = 20 * time.Millisecond
	// maxConceal bounds the frames concealed for one sequence gap.
	maxConceal = 50
)

// Options shape a Caller. Zero values take the defaults.
type Options struct {
	// ListenAddr is the caller's UDP socket (default "127.0.0.1:0").
	ListenAddr string
	// NoWebsocket: no trickle; the offer waits for gathering and carries
	// the caller's candidates, and the answer must carry the server's.
	NoWebsocket bool
	// Unreachable shuts the caller's socket from the start: ICE never
	// connects.
	Unreachable bool
	// BadFingerprint changes the DTLS fingerprint in the offer: ICE
	// connects, the server's DTLS check of the caller's certificate fails.
	BadFingerprint bool
	// OpusBitrate of the caller's encoder (default 32000).
	OpusBitrate int
	// HTTPClient for the offer and the websocket (default: a client of
	// its own, whose idle connections Close closes).
	HTTPClient *http.Client
	// Logger receives pion's lines (default Nop).
	Logger zerolog.Logger
	// ArrivalsOnly records the packets' arrival times without decoding
	// them (Received stays empty): a load generator's caller, whose CPU
	// should go to the server under test.
	ArrivalsOnly bool
	// KernelTimestamps takes the arrival times from the kernel (when the
	// datagram reached the socket) instead of when the track's reader got
	// it, so that the caller's own scheduling does not count as the
	// server's jitter. Dial fails where the socket cannot do it.
	KernelTimestamps bool
}

// Caller is one call placed from Go against a media/webrtc Server.
type Caller struct {
	opts   Options
	callID string
	answer string
	http   *http.Client
	ownsHC bool
	gate   *gateConn
	mux    ice.UDPMux
	pc     *pion.PeerConnection
	track  *pion.TrackLocalStaticRTP
	ws     *websocket.Conn

	ctx       context.Context
	cancel    context.CancelFunc
	connected chan struct{}
	connOnce  sync.Once

	mu        sync.Mutex
	closing   bool
	wg        sync.WaitGroup
	trackSeen bool
	play      []int16
	received  []int16
	arrivals  []time.Time
	events    []map[string]any
	cands     []*pion.ICECandidateInit
	candsEnd  bool
	candWake  chan struct{}
	notify    chan struct{}
	closeOnce sync.Once
	// mute stops the RTP the caller sends; ICE and DTLS go on.
	mute atomic.Bool
}

// Dial places a call: it makes the offer, posts it to baseURL+"/offer",
// applies the answer and (unless NoWebsocket) opens baseURL+"/ws" for
// trickle ICE and events. It returns once the answer is applied; use
// WaitConnected to wait for media.
func Dial(ctx context.Context, baseURL string, opts Options) (*Caller, error) {
	if opts.ListenAddr == "" {
		opts.ListenAddr = "127.0.0.1:0"
	}
	c := &Caller{opts: opts, http: opts.HTTPClient, connected: make(chan struct{}),
		candWake: make(chan struct{}, 1), notify: make(chan struct{}, 1)}
	if c.http == nil {
		c.http, c.ownsHC = &http.Client{Transport: &http.Transport{}}, true
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if err := c.setup(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.signal(ctx, baseURL); err != nil {
		c.Close()
		return nil, err
	}
	c.goTracked(c.sendLoop)
	return c, nil
}

// setup makes the socket and the peer connection.
func (c *Caller) setup() error {
	conn, err := net.ListenPacket("udp4", c.opts.ListenAddr)
	if err != nil {
		return fmt.Errorf("webrtctest: listen: %w", err)
	}
	c.gate = &gateConn{PacketConn: conn}
	c.gate.shut.Store(c.opts.Unreachable)
	if c.opts.KernelTimestamps && !c.gate.stampKernel() {
		_ = conn.Close()
		return errors.New("webrtctest: kernel receive timestamps are not available on this socket")
	}
	logs := loggers{log: c.opts.Logger}
	c.mux = pion.NewICEUDPMux(logs.NewLogger("udpmux"), c.gate)

	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(pion.RTPCodecParameters{
		RTPCodecCapability: pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"},
		PayloadType:        111,
	}, pion.RTPCodecTypeAudio); err != nil {
		return err
	}
	se := pion.SettingEngine{LoggerFactory: logs}
	se.SetICEUDPMux(c.mux)
	se.SetIncludeLoopbackCandidate(true)
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	api := pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se))
	if c.pc, err = api.NewPeerConnection(pion.Configuration{}); err != nil {
		return err
	}
	c.track, err = pion.NewTrackLocalStaticRTP(pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2}, "audio", "caller")
	if err != nil {
		return err
	}
	if _, err := c.pc.AddTrack(c.track); err != nil {
		return err
	}
	c.pc.OnConnectionStateChange(func(s pion.PeerConnectionState) {
		if s == pion.PeerConnectionStateConnected {
			c.connOnce.Do(func() { close(c.connected) })
		}
	})
	c.pc.OnTrack(func(t *pion.TrackRemote, _ *pion.RTPReceiver) {
		c.mu.Lock()
		first := !c.trackSeen
		c.trackSeen = true
		c.mu.Unlock()
		if first {
			c.goTracked(func() { c.readTrack(t) })
		}
	})
	c.pc.OnICECandidate(func(cand *pion.ICECandidate) {
		c.mu.Lock()
		if cand == nil {
			c.candsEnd = true
		} else {
			init := cand.ToJSON()
			c.cands = append(c.cands, &init)
		}
		c.mu.Unlock()
		select {
		case c.candWake <- struct{}{}:
		default:
		}
	})
	return nil
}

// goTracked starts fn as a goroutine Close waits for, unless closing.
func (c *Caller) goTracked(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

type description struct {
	SDP  string `json:"sdp"`
	Type string `json:"type"`
	Call string `json:"call,omitempty"`
}

// signal runs the offer/answer and opens the websocket.
func (c *Caller) signal(ctx context.Context, baseURL string) error {
	offer, err := c.pc.CreateOffer(nil)
	if err != nil {
		return err
	}
	gathered := pion.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(offer); err != nil {
		return err
	}
	if c.opts.NoWebsocket {
		select {
		case <-gathered:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	sdp := c.pc.LocalDescription().SDP
	if c.opts.BadFingerprint {
		sdp = badFingerprint(sdp)
	}
	body, _ := json.Marshal(description{SDP: sdp, Type: "offer"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/offer", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: post offer: %w", ErrSignaling, err)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%w: read answer: %w", ErrSignaling, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: status %d: %s", ErrSignaling, resp.StatusCode, bytes.TrimSpace(data))
	}
	var answer description
	if err := json.Unmarshal(data, &answer); err != nil || answer.Type != "answer" || answer.Call == "" {
		return fmt.Errorf("%w: answer is not {sdp, type: answer, call}", ErrSignaling)
	}
	c.callID, c.answer = answer.Call, answer.SDP
	if err := c.pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: answer.SDP}); err != nil {
		return fmt.Errorf("%w: answer refused: %w", ErrSignaling, err)
	}
	if c.opts.NoWebsocket {
		return nil
	}
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/ws")
	if err != nil {
		return err
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.RawQuery = url.Values{"call": {c.callID}}.Encode()
	ws, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.http})
	if err != nil {
		return fmt.Errorf("%w: websocket: %w", ErrSignaling, err)
	}
	ws.SetReadLimit(1 << 20)
	c.ws = ws
	c.goTracked(c.readWS)
	c.goTracked(c.writeWS)
	return nil
}

// badFingerprint flips the last hex digit of every fingerprint line.
func badFingerprint(sdp string) string {
	lines := strings.Split(sdp, "\r\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "a=fingerprint:") && len(l) > 0 {
			last := l[len(l)-1]
			flip := byte('0')
			if last == '0' {
				flip = '1'
			}
			lines[i] = l[:len(l)-1] + string(flip)
		}
	}
	return strings.Join(lines, "\r\n")
}

// CallID is the id the server gave the call.
func (c *Caller) CallID() string { return c.callID }

// Answer is the server's answer SDP.
func (c *Caller) Answer() string { return c.answer }

// WaitConnected waits until ICE and DTLS are connected.
func (c *Caller) WaitConnected(ctx context.Context) error {
	select {
	case <-c.connected:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
}

// writeWS trickles the caller's candidates.
func (c *Caller) writeWS() {
	sent := 0
	endSent := false
	for {
		c.mu.Lock()
		pending := slices.Clone(c.cands[sent:])
		end := c.candsEnd
		c.mu.Unlock()
		for _, cand := range pending {
			if c.sendWS(map[string]any{"type": "candidate", "candidate": cand}) != nil {
				return
			}
			sent++
		}
		if end && !endSent {
			if c.sendWS(map[string]any{"type": "candidate", "candidate": nil}) != nil {
				return
			}
			endSent = true
		}
		select {
		case <-c.candWake:
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *Caller) sendWS(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// Bye sends {"type":"bye"} on the websocket: the caller hangs up.
func (c *Caller) Bye() error {
	if c.ws == nil {
		return fmt.Errorf("%w: no websocket", ErrSignaling)
	}
	return c.sendWS(map[string]string{"type": "bye"})
}

// readWS applies the server's candidates and records every other message.
func (c *Caller) readWS() {
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return
		}
		var msg map[string]any
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		if msg["type"] == "candidate" {
			var m struct {
				Candidate *pion.ICECandidateInit `json:"candidate"`
			}
			if json.Unmarshal(data, &m) == nil {
				init := pion.ICECandidateInit{}
				if m.Candidate != nil {
					init = *m.Candidate
				}
				_ = c.pc.AddICECandidate(init)
			}
			continue
		}
		c.mu.Lock()
		c.events = append(c.events, msg)
		c.mu.Unlock()
		c.poke()
	}
}

func (c *Caller) poke() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Notify is poked (one slot) whenever audio or an event arrives.
func (c *Caller) Notify() <-chan struct{} { return c.notify }

// Events returns the websocket messages seen so far other than
// candidates: the server's events, errors and bye, decoded.
func (c *Caller) Events() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.events)
}

// Play queues pcm at rate (8000, 16000, 24000 or 48000) to be streamed
// after what is already queued.
func (c *Caller) Play(pcm []int16, rate int) error {
	r, err := media.NewResampler(rate, Rate, media.ResamplerConfig{})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRate, err)
	}
	out := make([]int16, r.MaxOutLen(len(pcm)))
	n, _ := r.Process(out, pcm)
	c.mu.Lock()
	c.play = append(c.play, out[:n]...)
	c.mu.Unlock()
	return nil
}

// Queued is how many samples (48 kHz) of played audio are still to send.
func (c *Caller) Queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.play)
}

// sendLoop streams 20 ms per tick from connection on: queued audio, else
// silence.
func (c *Caller) sendLoop() {
	select {
	case <-c.connected:
	case <-c.ctx.Done():
		return
	}
	enc, err := opus.NewEncoder(opus.EncoderConfig{Bitrate: c.opts.OpusBitrate})
	if err != nil {
		return
	}
	pcm := make([]int16, frame)
	packet := make([]byte, 1500)
	// Silence is one packet made once: the same bytes every 20 ms decode
	// to the same silence, without an encoder run per frame.
	silence, err := silencePacket(c.opts.OpusBitrate)
	if err != nil {
		return
	}
	dtx := newDTX(usesDTX(c.answer), silence)
	// The caller packetizes itself: a frame not sent (DTX) still moves the
	// RTP timestamp on, not the sequence number.
	// Fixed starting points (a test caller's runs repeat), the sequence
	// one wrapping within seconds.
	out := &rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: 65000, Timestamp: 1 << 20}}
	send := func(payload []byte) {
		out.Payload = payload
		_ = c.track.WriteRTP(out)
		out.SequenceNumber++
	}
	tick := time.NewTicker(frameLength)
	defer tick.Stop()
	for ; ; out.Timestamp += frame {
		select {
		case <-tick.C:
		case <-c.ctx.Done():
			return
		}
		if c.mute.Load() {
			continue
		}
		c.mu.Lock()
		n := copy(pcm, c.play)
		c.play = c.play[n:]
		c.mu.Unlock()
		if n == 0 {
			if data := dtx.silent(); data != nil {
				send(data)
			}
			continue
		}
		dtx.speech()
		clear(pcm[n:])
		k, err := enc.Encode(pcm, packet)
		if err != nil {
			continue
		}
		send(packet[:k])
	}
}

// DTX as a browser's Opus sender does it when the answer asks for it
// (usedtx=1; libopus 1.3 with WebRTC's sending rule): after dtxHangover
// frames of silence sent as usual the encoder goes into DTX, whose first
// packet (the TOC byte alone) is sent and the next ones are not; every
// dtxEvery frames a frame of comfort noise is sent, and the DTX packet
// after it. The RTP timestamps go on over the pause, the sequence numbers
// do not skip.
const (
	dtxHangover = 10
	dtxEvery    = 20
)

// dtxState decides, frame by frame, what a silent caller sends.
type dtxState struct {
	on      bool
	silence []byte // a frame of silence (the comfort noise update)
	toc     []byte // the DTX packet: silence's TOC byte, code 0
	quiet   int    // silent frames since the last speech
}

func newDTX(on bool, silence []byte) *dtxState {
	return &dtxState{on: on, silence: silence, toc: []byte{silence[0] &^ 3}}
}

// usesDTX tells whether the answer asks the caller to send with DTX.
func usesDTX(answer string) bool {
	for line := range strings.SplitSeq(answer, "\n") {
		if strings.HasPrefix(line, "a=fmtp:") && strings.Contains(line, "usedtx=1") {
			return true
		}
	}
	return false
}

// speech notes a frame of audio.
func (d *dtxState) speech() { d.quiet = 0 }

// silent returns the packet to send for a silent frame (nil: send
// nothing this frame).
func (d *dtxState) silent() []byte {
	d.quiet++
	if !d.on || d.quiet <= dtxHangover {
		return d.silence
	}
	switch (d.quiet - dtxHangover - 1) % dtxEvery {
	case 0:
		return d.toc
	case dtxEvery - 1:
		return d.silence
	}
	return nil
}

// silencePacket encodes 20 ms of silence.
func silencePacket(bitrate int) ([]byte, error) {
	enc, err := opus.NewEncoder(opus.EncoderConfig{Bitrate: bitrate})
	if err != nil {
		return nil, err
	}
	packet := make([]byte, 1500)
	k, err := enc.Encode(make([]int16, frame), packet)
	if err != nil {
		return nil, err
	}
	return packet[:k], nil
}

// readTrack decodes what the server sends, concealing sequence gaps, and
// records arrival times.
func (c *Caller) readTrack(t *pion.TrackRemote) {
	dec, err := opus.NewDecoder(opus.DecoderConfig{})
	if err != nil {
		return
	}
	pcm := make([]int16, 5760)
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	var last uint16
	first := true
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		now := time.Now()
		if c.opts.ArrivalsOnly {
			c.mu.Lock()
			c.arrivals = append(c.arrivals, now)
			c.mu.Unlock()
			continue
		}
		if pkt.Unmarshal(buf[:n]) != nil {
			continue
		}
		var decoded []int16
		if !first {
			if gap := int(pkt.SequenceNumber - last - 1); gap > 0 && gap <= maxConceal {
				for range gap {
					if k, err := dec.Conceal(pcm); err == nil {
						decoded = append(decoded, pcm[:k]...)
					}
				}
			}
		}
		first, last = false, pkt.SequenceNumber
		if k, err := dec.Decode(pkt.Payload, pcm); err == nil {
			decoded = append(decoded, pcm[:k]...)
		}
		c.mu.Lock()
		c.received = append(c.received, decoded...)
		c.arrivals = append(c.arrivals, now)
		c.mu.Unlock()
		c.poke()
	}
}

// Received returns the audio received so far, decoded at Rate.
func (c *Caller) Received() []int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.received)
}

// Packets is how many RTP packets have arrived.
func (c *Caller) Packets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.arrivals)
}

// Jitter summarises the arrival times of the packets received so far.
type Jitter struct {
	// Packets counted; the deviations are over Packets-1 gaps.
	Packets int
	// P50, P99 and Max of |arrival gap - 20 ms|.
	P50, P99, Max time.Duration
}

// Arrivals returns the arrival times of the packets received so far
// (with KernelTimestamps: of every RTP datagram, as the kernel stamped it).
func (c *Caller) Arrivals() []time.Time {
	if c.opts.KernelTimestamps {
		return c.gate.kernelStamps()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.arrivals)
}

// JitterStats computes the inter-arrival deviation of the packets
// received so far.
func (c *Caller) JitterStats() Jitter {
	return JitterOf(c.Arrivals())
}

// JitterOf computes the deviation of the gaps between arrivals from 20 ms.
func JitterOf(arrivals []time.Time) Jitter {
	j := Jitter{Packets: len(arrivals)}
	if len(arrivals) < 2 {
		return j
	}
	dev := make([]time.Duration, 0, len(arrivals)-1)
	for i := 1; i < len(arrivals); i++ {
		d := arrivals[i].Sub(arrivals[i-1]) - frameLength
		dev = append(dev, max(d, -d))
	}
	slices.Sort(dev)
	pick := func(q float64) time.Duration { return dev[min(len(dev)-1, int(q*float64(len(dev))))] }
	j.P50, j.P99, j.Max = pick(0.50), pick(0.99), dev[len(dev)-1]
	return j
}

// StopMedia stops the caller's RTP for good while its ICE agent goes on
// answering consent checks: a client that stopped its track
// (replaceTrack(null)), or a hostile one that holds a call with nothing.
func (c *Caller) StopMedia() { c.mute.Store(true) }

// Vanish makes the caller disappear from the network at once: its socket
// drops everything, with no DTLS close and no bye.
func (c *Caller) Vanish() { c.gate.shut.Store(true) }

// Close hangs up (a DTLS close, unless the caller vanished), closes the
// websocket and waits for every goroutine of the caller.
func (c *Caller) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		var errs []error
		if c.pc != nil {
			errs = append(errs, c.pc.GracefulClose())
		}
		c.cancel()
		if c.ws != nil {
			_ = c.ws.CloseNow()
		}
		c.wg.Wait()
		if c.mux != nil {
			errs = append(errs, c.mux.Close())
		} else if c.gate != nil {
			_ = c.gate.Close()
		}
		if c.ownsHC {
			c.http.CloseIdleConnections()
		}
		if err := errors.Join(errs...); err != nil {
			c.opts.Logger.Debug().Err(err).Msg("webrtctest close")
		}
	})
	return nil
}
