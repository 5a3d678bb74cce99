package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
	"github.com/brisvox/brisvox/sip/trunk"
	"github.com/rs/zerolog"
)

// `brisvox-bench calls --transport sip`: the server's side. The calls
// come in over SIP (UDP on 127.0.0.1) with G.711 PCMU RTP, and the
// call's stages run at 8 kHz (the Silero pool at 8 kHz, the mock TTS at
// 8 kHz). Each caller signals and sends its RTP from its own loopback
// address, sipCallerAddr(i): the agent reads the caller's index from the
// call's signalling source (sip.Call's Describe, "signalled"), as the
// PCM websocket's from ?caller=i.

// callsSIPRate is the rate of a SIP call's stages: G.711 is 8 kHz.
const callsSIPRate = 8000

// sipCallerAddr is caller i's own loopback address, 127.1.x.y with x.y
// = i+1 (all of 127/8 is the loopback on Linux; 127.1/16 keeps clear of
// the 127.0.0.x the other loopback tests use).
func sipCallerAddr(i int) netip.Addr {
	v := i + 1
	return netip.AddrFrom4([4]byte{127, 1, byte(v >> 8), byte(v)})
}

// sipCallerOf is the caller index of a loopback address sipCallerAddr
// gave (ok false: not one of them).
func sipCallerOf(a netip.Addr) (int, bool) {
	a = a.Unmap()
	if !a.Is4() {
		return 0, false
	}
	b := a.As4()
	v := int(b[2])<<8 | int(b[3])
	if b[0] != 127 || b[1] != 1 || v == 0 {
		return 0, false
	}
	return v - 1, true
}

// errNoSIPCaller is a SIP call whose source is no caller's address.
var errNoSIPCaller = errors.New("calls: the SIP call's signalling source is no caller's address (127.1.x.y)")

// sipCallOf is the caller index of a SIP call (a conn.Describer whose
// "signalled" is the INVITE's source address).
func sipCallOf(c conn.Conn) (int, error) {
	d, ok := c.(conn.Describer)
	if !ok {
		return 0, fmt.Errorf("calls: a %T call (want the PCM websocket or SIP)", c)
	}
	_, info, _ := d.Describe()
	ap, err := netip.ParseAddrPort(info["signalled"])
	if err != nil {
		return 0, errNoSIPCaller
	}
	i, ok := sipCallerOf(ap.Addr())
	if !ok {
		return 0, errNoSIPCaller
	}
	return i, nil
}

// startCallsSIPServer serves agent under cfg with the SIP transport on
// 127.0.0.1 (UDP; RTP ports from 20000 to 40000 there) and serve's HTTP
// (/stats) on a loopback TCP port. The callsServer's addr is the SIP
// address.
func startCallsSIPServer(cfg serve.Config, agent serve.Agent, n int) (*callsServer, error) {
	srv, err := serve.New(cfg, agent)
	if err != nil {
		return nil, err
	}
	sipSrv, err := sip.New(sip.Config{
		Signal: signal.Config{Listen: []signal.Listen{{Network: "udp", Addr: sipServerIP + ":0"}}, Ringing: "none"},
		Trunk: trunk.Config{
			Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			// One source per caller: its INVITE, ACK, retransmissions, BYE.
			Rate: 50, Burst: 100, MaxDialogsPerSource: 4, MaxSources: max(trunk.DefaultMaxSources, 2*n),
		},
		SDP:    sdp.Config{Codecs: []sdp.Codec{sdp.PCMU}},
		Ports:  rtp.PortsConfig{Addr: netip.MustParseAddr(sipServerIP), Min: 20000, Max: 40000},
		Rate:   callsSIPRate,
		Admit:  srv.Admit,
		OnCall: func(c *sip.Call) { srv.Start(c) },
		Log:    zerolog.Nop(),
	})
	if err != nil {
		return nil, err
	}
	if err := sipSrv.Start(); err != nil {
		return nil, err
	}
	srv.Attach("sip", sipSrv.Stats, sipSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sipSrv.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &callsServer{srv: srv, ln: ln, addr: sipSrv.Addrs()[0].Addr.String(), cancel: cancel, served: make(chan error, 1), sipStats: sipSrv.Stats}
	go func() { s.served <- srv.Serve(ctx, ln) }()
	return s, nil
}

// callsSIPNotMeasured are the figures of the pcm path that RTP cannot
// give, left out of a SIP run's JSON: the server's read of frame 0 (the
// SIP server owns its RTP socket) and so the audio-time mapping's error,
// the framing wait, the callers' lateness at the deciding frame and the
// stages (all need the deciding frame, found from the server's frame 0),
// the merged kernel times (TCP's; every datagram has its own) and the
// stale frames (no clear message on RTP: the barge-in's silence is
// measured instead).
var callsSIPNotMeasured = []string{"framing_wait_ms", "frame0_offset_ms", "frame0_write_to_read_ms",
	"callers_send_late_ms", "unstamped_gaps", "merged_first_audio", "stale_frames"}

// sipJoinEpochs gives each SIP caller's turn the epoch of the server's
// turn it made, which the pcm path has from the user_turn event: the
// earliest epoch whose VAD decision (MarkVADDetected) came after the
// turn's utterance ended and before the next one's ended. A barge-in
// the callers saw speak on ("spoke") is "cut" when the server
// interrupted at it (MarkInterrupt of the barge-in's epoch), else
// "not_cut".
func sipJoinEpochs(out *callersOut, obs *callsObserver) {
	for ci := range out.Callers {
		cr := &out.Callers[ci]
		obs.mu.Lock()
		sc := obs.byCaller[cr.Caller]
		obs.mu.Unlock()
		if sc == nil {
			continue
		}
		sc.mu.Lock()
		for j := range cr.Turns {
			t := &cr.Turns[j]
			next := int64(1<<63 - 1)
			if j+1 < len(cr.Turns) {
				next = cr.Turns[j+1].EndNS
			}
			var best int64
			for e, marks := range sc.marks {
				det, ok := marks[messages.MarkVADDetected]
				if !ok {
					continue
				}
				at := det.UnixNano()
				if at > t.EndNS && at <= next && (best == 0 || at < best) {
					best, t.Epoch = at, uint64(e)
				}
			}
			if t.Barge == "spoke" {
				t.Barge = "not_cut"
				if _, ok := sc.marks[messages.Epoch(t.Epoch)][messages.MarkInterrupt]; ok && t.Epoch != 0 {
					t.Barge = "cut"
				}
			}
		}
		sc.mu.Unlock()
	}
}

// decimateSpeech is the fixture's 16 kHz utterances at 8 kHz, s16le:
// each through a fresh resampler, its group delay dropped at the start
// and flushed with zeros at the end, so an utterance's 8 kHz audio
// starts and ends where the 16 kHz one does.
func decimateSpeech(fx callFixture) ([][]byte, error) {
	out := make([][]byte, len(fx.PCM))
	for i, pcm := range fx.PCM {
		r, err := media.NewResampler(16000, callsSIPRate, media.ResamplerConfig{})
		if err != nil {
			return nil, err
		}
		delay := int(r.Delay() + 0.5)
		in := append(append([]int16(nil), pcm...), make([]int16, 2*delay+2)...)
		dst := make([]int16, r.MaxOutLen(len(in)))
		n, _ := r.Process(dst, in)
		want := len(pcm) / 2
		if n < delay+want {
			return nil, fmt.Errorf("calls: the resampler gave %d samples for %d", n, len(pcm))
		}
		s := dst[delay : delay+want]
		b := make([]byte, 2*len(s))
		for j, v := range s {
			b[2*j], b[2*j+1] = byte(v), byte(uint16(v)>>8)
		}
		out[i] = b
	}
	return out, nil
}

// analyseSIP fills the turn records of a SIP caller from the bot's
// non-silent packets (frames: their kernel times): turn j's answer is
// those that came after its utterance ended and up to the next
// utterance's end (an answer starts only after its utterance ends; the
// next utterance starts after the answer's end, or within it for a
// barge-in). First audio is its first packet; jitter gets the gaps
// between its consecutive packets within [from, to]. A barge-in turn is
// "no_answer" (the turn before had no answer), "over" (that answer's
// last packet had played before the VAD could decide the barge-in) or
// "spoke", with the answer's last packet: sipJoinEpochs decides cut or
// not from the server's interrupt.
func (c *convCaller) analyseSIP(from, to int64, jitter *[]float64) callerRec {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := callerRec{Caller: c.idx, BaseNS: c.base.UnixNano(), Frame0NS: c.frame0.UnixNano(), End: c.end}
	type answer struct{ first, last, n int }
	answers := make([]answer, len(c.turns))
	k := 0
	for j := range c.turns {
		lo := c.turns[j].EndNS
		hi := int64(1<<63 - 1)
		if j+1 < len(c.turns) {
			hi = c.turns[j+1].EndNS
		}
		a := answer{first: -1, last: -1}
		for k < len(c.frames) && c.frames[k] <= lo {
			k++
		}
		for ; k < len(c.frames) && c.frames[k] <= hi; k++ {
			if a.first < 0 {
				a.first = k
			} else if f := c.frames[k]; c.frames[k-1] >= from && f <= to {
				d := float64(f-c.frames[k-1])/1e6 - 20
				*jitter = append(*jitter, max(d, -d))
			}
			a.last, a.n = k, a.n+1
		}
		answers[j] = a
	}
	for j := range c.turns {
		t := &c.turns[j]
		if a := answers[j]; a.first >= 0 {
			t.FirstNS, t.Frames = c.frames[a.first], a.n
		}
		t.StopLateUS, t.StartLateUS = c.lateWindow(t.EndSeq, callsStopWindow), c.lateWindow(t.StartSeq, callsStartWindow)
		if c.script.Turns[t.K].BargeIn {
			switch {
			case j == 0 || answers[j-1].first < 0:
				t.Barge = "no_answer"
			case c.frames[answers[j-1].last]+int64(messages.FrameDuration) < t.StartNS+int64(c.minSpeech):
				t.Barge = "over"
			default:
				t.Barge, t.CutLastNS = "spoke", c.frames[answers[j-1].last]
			}
		}
		rec.Turns = append(rec.Turns, *t)
	}
	return rec
}

// sipCallersTimeout bounds a SIP transaction of the callers (RFC 3261's
// timer B and F: 64 T1).
const sipCallersTimeout = 32 * time.Second

// sipStages splits a joined plain turn's engine-added time by the
// server's marks as the pcm path does for a referenced turn, from the
// VAD's decision (its audio time: on SIP the frames' times are their
// playout from the jitter buffer, so vad_stt starts there).
func sipStages(m *turnMeasure, t callerTurnRec, st callTurn, sc *serverCall) {
	if !m.joined || st.Tool || m.stages != nil {
		return
	}
	marks := sc.marks[messages.Epoch(t.Epoch)]
	det, ok := marks[messages.MarkVADDetected]
	if !ok {
		return
	}
	m.stages = callsStages(marks, det.UnixNano(), t.FirstNS, sc.script)
	if v, ok := m.stages["llm"]; ok {
		m.stages["llm"] = v - float64(st.LLMFirst)/1e6
	}
}
