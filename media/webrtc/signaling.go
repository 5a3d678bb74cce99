package webrtc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/coder/websocket"
	pion "github.com/pion/webrtc/v4"
)

// statusOf maps an error of the signaling to its HTTP status and counter.
func statusOf(err error) (int, counter) {
	switch {
	case errors.Is(err, ErrOfferTooLarge):
		return http.StatusRequestEntityTooLarge, cBadOfferTooLarge
	case errors.Is(err, ErrContentType):
		return http.StatusUnsupportedMediaType, cBadOfferContentType
	case errors.Is(err, ErrNoOpus):
		return http.StatusUnsupportedMediaType, cBadOfferNoOpus
	case errors.Is(err, ErrNoAudio):
		return http.StatusBadRequest, cBadOfferNoAudio
	case errors.Is(err, errPeerRefused):
		return http.StatusBadRequest, cBadOfferRefusedByPeer
	case errors.Is(err, ErrBadSDP):
		return http.StatusBadRequest, cBadOfferSDP
	case errors.Is(err, ErrBadOffer):
		return http.StatusBadRequest, cBadOfferJSON
	case errors.Is(err, ErrOrigin):
		return http.StatusForbidden, cOriginRefused
	case errors.Is(err, ErrUnknownCall):
		return http.StatusNotFound, cWSUnknownCall
	case errors.Is(err, ErrWSTaken):
		return http.StatusConflict, cWSSecond
	}
	return http.StatusInternalServerError, cRefused
}

// errClientLeft: the offer's request ended (the client went) before the
// answer was ready.
var errClientLeft = errors.New("webrtc: the client left before the answer")

// errPeerRefused: the SDP parsed but pion could not take it as an offer
// (no ICE credentials, no fingerprint, ...).
var errPeerRefused = fmt.Errorf("%w: refused by the peer connection", ErrBadSDP)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers err with its status and a JSON {"error": reason}, and
// counts it. Reasons never quote the request.
func (s *Server) fail(w http.ResponseWriter, err error) {
	status, k := statusOf(err)
	s.stats.inc(k)
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

// refusedCounter is the counter of a refusal's cause.
func refusedCounter(c conn.RefusalCause) (counter, bool) {
	switch c {
	case conn.RefusedFull:
		return cRefusedFull, true
	case conn.RefusedDraining:
		return cRefusedDraining, true
	case conn.RefusedResource:
		return cRefusedResource, true
	case conn.RefusedRateLimited:
		return cRefusedRateLimited, true
	case conn.RefusedOverloaded:
		return cRefusedOverloaded, true
	}
	return 0, false
}

// refuse answers an offer that was not admitted: 503 with Retry-After and
// {"error": reason, "cause": cause}. It is counted and tallied, never
// logged on its own: a flood of refusals writes a line per interval.
func (s *Server) refuse(w http.ResponseWriter, r *conn.Refusal) {
	s.stats.inc(cRefused)
	if k, ok := refusedCounter(r.Cause); ok {
		s.stats.inc(k)
	}
	s.refusals.Add(string(r.Cause))
	w.Header().Set("Retry-After", strconv.Itoa(r.RetryAfterSeconds()))
	writeJSON(w, http.StatusServiceUnavailable, refusalBody{Error: r.Error(), Cause: string(r.Cause)})
}

// refusalBody is the JSON of a 503.
type refusalBody struct {
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// closedRefusal is the refusal of a closed server.
func (s *Server) closedRefusal() *conn.Refusal {
	return &conn.Refusal{Cause: conn.RefusedDraining, Detail: "server closed", RetryAfter: s.cfg.RetryAfter}
}

// serveOffer handles POST /offer: the origin is checked, then a slot is
// reserved before the body is read; every path that makes no call of the
// offer releases it.
func (s *Server) serveOffer(w http.ResponseWriter, r *http.Request) {
	s.stats.inc(cOffers)
	w.Header().Add("Vary", "Origin")
	cross, err := s.checkOrigin(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	allowCORS(w, cross)
	if s.isClosed() {
		s.refuse(w, s.closedRefusal())
		return
	}
	var adm conn.Admission = noAdmission{}
	if s.cfg.Admit != nil {
		a, err := s.cfg.Admit()
		if err != nil {
			s.refuse(w, conn.RefusalOf(err))
			return
		}
		adm = a
	}
	// An offer that does not become a call gives its slot back; once the
	// call started, the server frees it when the call ends.
	defer adm.Release()
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			s.fail(w, fmt.Errorf("%w: content type is not application/json", ErrContentType))
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxOfferBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			s.fail(w, fmt.Errorf("%w: more than %d bytes", ErrOfferTooLarge, s.cfg.MaxOfferBytes))
		} else {
			s.fail(w, fmt.Errorf("%w: body not read", ErrBadOffer))
		}
		return
	}
	offer, err := ParseOffer(body, s.cfg.MaxOfferBytes)
	if err != nil {
		s.fail(w, err)
		return
	}
	c, answer, err := s.newCall(r.Context(), offer)
	switch {
	case errors.Is(err, ErrServerClosed):
		s.refuse(w, s.closedRefusal())
		return
	case errors.Is(err, errClientLeft):
		// Nobody reads the answer: no status to write.
		s.stats.inc(cOfferAbandoned)
		s.rejects.Add(counterNames[cOfferAbandoned])
		return
	case err != nil:
		status, k := statusOf(err)
		if status == http.StatusInternalServerError {
			s.log.Warn().Err(err).Msg("webrtc offer not answered")
		} else {
			s.rejects.Add(counterNames[k])
		}
		s.fail(w, err)
		return
	}
	s.stats.inc(cCalls)
	c.adm = adm
	s.cfg.OnCall(c)
	writeJSON(w, http.StatusOK, sessionDescription{SDP: answer, Type: "answer", Call: c.id})
}

// newCall builds the call for a validated offer and its answer. The answer
// waits for candidate gathering up to GatherTimeout, so it holds the host
// candidates: a client without the websocket can connect with it alone.
func (s *Server) newCall(ctx context.Context, offer Offer) (*Call, string, error) {
	id := newCallID()
	log := s.log.With().Str("call_id", id).Logger()
	api, err := s.newAPI(pionLoggers{log: log, budget: newLineBudget(func() { s.stats.inc(cPionLinesDropped) })})
	if err != nil {
		return nil, "", fmt.Errorf("webrtc: pion api: %w", err)
	}
	pc, err := api.NewPeerConnection(s.pionConfiguration())
	if err != nil {
		return nil, "", fmt.Errorf("webrtc: new peer connection: %w", err)
	}
	c := &Call{
		id: id, srv: s, cfg: s.cfg, log: log, pc: pc,
		done: make(chan struct{}), connected: make(chan struct{}),
		stateWake: make(chan struct{}, 1), finished: make(chan struct{}),
		ws:  wsState{byeDone: make(chan struct{})},
		sig: newSignalQueue(s.cfg.EventBuffer),
	}
	fail := func(err error) (*Call, string, error) {
		if cerr := pc.GracefulClose(); cerr != nil {
			log.Warn().Err(cerr).Msg("webrtc peer connection close failed")
		}
		return nil, "", err
	}
	if err := c.in.init(s.cfg); err != nil {
		return fail(err)
	}
	if err := c.out.init(s.cfg); err != nil {
		return fail(err)
	}
	c.track, err = pion.NewTrackLocalStaticSample(opusCodec, "audio", "brisvox")
	if err != nil {
		return fail(fmt.Errorf("webrtc: local track: %w", err))
	}
	pc.OnICECandidate(c.onCandidate)
	pc.OnConnectionStateChange(func(pion.PeerConnectionState) { c.pokeState() })
	pc.OnTrack(c.onTrack)
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeOffer, SDP: offer.SDP}); err != nil {
		log.Debug().Err(err).Msg("webrtc offer refused by pion")
		return fail(errPeerRefused)
	}
	if c.sender, err = pc.AddTrack(c.track); err != nil {
		return fail(fmt.Errorf("%w: no audio transceiver to answer with", errPeerRefused))
	}
	if t := c.sender.Transport(); t != nil {
		// Called under pion's lock: only record.
		t.OnStateChange(func(s pion.DTLSTransportState) {
			if s == pion.DTLSTransportStateFailed {
				c.dtlsFailed.Store(true)
				c.pokeState()
			}
		})
	}
	for _, t := range pc.GetTransceivers() {
		if t.Sender() == c.sender {
			c.receiver = t.Receiver()
			// The offer's Opus matched the media engine's already, so
			// the preference matches too.
			if err := t.SetCodecPreferences([]pion.RTPCodecParameters{opusAnswer}); err != nil {
				return fail(fmt.Errorf("webrtc: codec preference: %w", err))
			}
		}
	}
	answer, err := pc.CreateAnswer(nil)
	if err != nil {
		return fail(fmt.Errorf("%w: no answer", errPeerRefused))
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(answer); err != nil {
		return fail(fmt.Errorf("webrtc: set local description: %w", err))
	}
	wait := time.NewTimer(s.cfg.GatherTimeout)
	select {
	case <-gathered:
	case <-wait.C:
	case <-ctx.Done():
	}
	wait.Stop()
	if ctx.Err() != nil {
		// The client went while the answer waited: no call of it, so its
		// slot is free at once, not after ConnectTimeout.
		return fail(errClientLeft)
	}
	local := c.answered()
	if local == nil {
		return fail(fmt.Errorf("webrtc: no local description"))
	}
	if !s.register(c) {
		return fail(ErrServerClosed)
	}
	c.start()
	log.Debug().Int("answer_bytes", len(local.SDP)).Msg("webrtc offer answered")
	return c, local.SDP, nil
}

// pokeState wakes the supervisor to read the connection state.
func (c *Call) pokeState() {
	select {
	case c.stateWake <- struct{}{}:
	default:
	}
}

// wsState is the websocket side of a call.
type wsState struct {
	claimed bool
	// answered: candidates found from now on are trickled (the earlier
	// ones are in the answer).
	answered bool
	// byeDone closes once the bye was written or the websocket is gone.
	byeDone chan struct{}
}

// answered marks the answer as taken and returns the local description
// it is: candidates reported before are in it, later ones are trickled.
func (c *Call) answered() *pion.SessionDescription {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ws.answered = true
	return c.pc.LocalDescription()
}

// onCandidate is pion's candidate callback: it queues the candidate for the
// websocket if the answer is already gone (nil ends the candidates).
func (c *Call) onCandidate(cand *pion.ICECandidate) {
	c.mu.Lock()
	trickle := c.ws.answered
	c.mu.Unlock()
	if cand == nil {
		c.signal(wsCandidate{Type: MsgCandidate})
		return
	}
	if trickle {
		init := cand.ToJSON()
		c.signal(wsCandidate{Type: MsgCandidate, Candidate: &init})
	}
}

// onTrack is pion's track callback: the first Opus audio track of the
// caller starts the RTP reader; others are counted and left unread.
func (c *Call) onTrack(t *pion.TrackRemote, _ *pion.RTPReceiver) {
	if t.Kind() != pion.RTPCodecTypeAudio {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trackSeen || c.tearing {
		return
	}
	c.trackSeen = true
	jc := c.cfg.Jitter
	jc.ClockRate, jc.SamplesPerFrame = 48000, 960
	jc.PayloadTypes = []uint8{uint8(t.PayloadType())}
	jb, err := media.NewJitterBuffer(jc)
	if err != nil {
		// Validate checked this configuration with another payload type.
		c.log.Error().Err(err).Msg("webrtc jitter buffer")
		return
	}
	c.in.mu.Lock()
	c.in.jb = jb
	c.in.mu.Unlock()
	c.goLocked(func() { c.readTrack(t) })
}

// serveWS handles GET /ws?call=<id>. The origin is checked first, as for
// the offer (Accept's own check is then skipped: it knows host patterns,
// not origins).
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if _, err := s.checkOrigin(r); err != nil {
		s.fail(w, err)
		return
	}
	c := s.lookup(r.URL.Query().Get("call"))
	if c == nil {
		s.fail(w, fmt.Errorf("%w: no live call has this id", ErrUnknownCall))
		return
	}
	if err := c.claimWS(); err != nil {
		s.fail(w, err)
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered the request; the call keeps no websocket.
		c.log.Debug().Err(err).Msg("webrtc websocket not accepted")
		c.wsGone()
		c.wg.Done()
		return
	}
	s.stats.inc(cWSOpened)
	defer c.wg.Done()
	c.runWS(conn)
}

// claimWS takes the call's one websocket slot and counts the handler as a
// goroutine of the call.
func (c *Call) claimWS() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.tearing:
		return fmt.Errorf("%w: the call has ended", ErrUnknownCall)
	case c.ws.claimed:
		return fmt.Errorf("%w: one websocket per call", ErrWSTaken)
	}
	c.ws.claimed = true
	c.wg.Add(1)
	return nil
}

// wsGone says the websocket will write no bye.
func (c *Call) wsGone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.ws.byeDone:
	default:
		close(c.ws.byeDone)
	}
}

// runWS reads the client's messages until the websocket closes, while a
// writer goroutine sends the queued signals and events, and the bye.
func (c *Call) runWS(conn *websocket.Conn) {
	conn.SetReadLimit(c.cfg.MaxWSMessageBytes)
	ctx, cancel := context.WithCancel(context.Background())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer cancel()
		c.writeWS(ctx, conn)
	}()
	bad := 0
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			break
		}
		if typ == websocket.MessageText && !utf8.Valid(data) {
			// RFC 6455 8.1: invalid UTF-8 in a text message fails the
			// connection (1007). A browser cannot send one, so this is
			// not a page's mistake: the call ends. Closed first, so that
			// the writer's bye and normal close do not come before it.
			c.inc(cWSInvalidUTF8)
			_ = conn.Close(websocket.StatusInvalidFramePayloadData, "text message is not utf-8")
			c.end(ErrInvalidUTF8)
			break
		}
		if err := c.handleWS(typ, data); err != nil {
			bad++
			c.signal(wsError{Type: MsgError, Error: err.Error()})
			if bad > c.cfg.MaxBadWSMessages {
				c.inc(cWSClosedForAbuse)
				c.log.Warn().Err(err).Int("bad_messages", bad).Msg("webrtc websocket closed for bad messages")
				_ = conn.Close(websocket.StatusPolicyViolation, "too many bad messages")
				break
			}
		}
	}
	cancel()
	<-writerDone
	_ = conn.CloseNow()
}

// handleWS takes one client message.
func (c *Call) handleWS(typ websocket.MessageType, data []byte) error {
	if typ != websocket.MessageText {
		c.inc(cWSBinary)
		return fmt.Errorf("%w: binary messages are not accepted", ErrBadMessage)
	}
	msg, err := ParseWSMessage(data)
	if err != nil {
		c.inc(cWSBadMessages)
		return err
	}
	switch msg.Type {
	case MsgBye:
		c.end(fmt.Errorf("%w: bye on the websocket", ErrPeerClosed))
	case MsgCandidate:
		init := pion.ICECandidateInit{}
		if msg.Candidate != nil {
			init = *msg.Candidate
			if c.stats[cWSCandidates].Load() >= maxRemoteCandidates {
				c.inc(cWSBadMessages)
				return fmt.Errorf("%w: more than %d candidates", ErrBadMessage, maxRemoteCandidates)
			}
		}
		if err := c.pc.AddICECandidate(init); err != nil {
			c.inc(cWSBadMessages)
			c.log.Debug().Err(err).Msg("webrtc candidate refused")
			return fmt.Errorf("%w: candidate refused", ErrBadMessage)
		}
		c.inc(cWSCandidates)
	}
	return nil
}

// wsCloseStatus is the websocket close code of a call ended as kind: a
// call the server could not take or keep for capacity or a drain says
// try again later (1013), never a normal closure.
func wsCloseStatus(kind conn.EndKind) websocket.StatusCode {
	switch kind {
	case conn.EndTryLater:
		return websocket.StatusTryAgainLater
	case conn.EndInternal:
		return websocket.StatusInternalError
	case conn.EndGoingAway:
		return websocket.StatusGoingAway
	}
	return websocket.StatusNormalClosure
}

// writeWS sends what the queue holds until the call ends (then the rest,
// the bye, and a normal close) or the websocket fails.
func (c *Call) writeWS(ctx context.Context, conn *websocket.Conn) {
	defer c.wsGone()
	var batch [][]byte
	write := func(b []byte) bool {
		wctx, cancel := context.WithTimeout(ctx, c.cfg.WSWriteTimeout)
		defer cancel()
		err := conn.Write(wctx, websocket.MessageText, b)
		if err != nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
			// Blocked for the whole timeout: the socket's buffers are
			// full, the client reads nothing. The backlog is bounded
			// (EventBuffer), but a client that stopped reading is not
			// listening to the call either. Not ctx.Err(): the timed-out
			// write closes the connection, so the reader may have
			// cancelled ctx already (wctx keeps its first error).
			c.end(fmt.Errorf("%w: a write blocked for %v", ErrStalled, c.cfg.WSWriteTimeout))
		}
		return err == nil
	}
	for {
		batch = c.sig.take(batch[:0])
		for _, b := range batch {
			if !write(b) {
				return
			}
		}
		clear(batch)
		select {
		case <-c.sig.wake:
			continue
		case <-ctx.Done():
			return
		case <-c.done:
		}
		// The call ended: flush, say bye, close.
		batch = c.sig.take(batch[:0])
		for _, b := range batch {
			if !write(b) {
				return
			}
		}
		bye, _ := json.Marshal(wsBye{Type: MsgBye, Reason: c.cause.Error()})
		if !write(bye) {
			return
		}
		c.wsGone()
		_ = conn.Close(wsCloseStatus(c.kind), "call ended")
		return
	}
}
