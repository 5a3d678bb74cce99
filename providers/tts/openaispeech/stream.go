package openaispeech

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// The phases of a request, each with its deadline and Timeout.
const (
	phaseHeaders = iota
	phaseFirstByte
	phaseIdle
)

// requestState is what the requests of a session share: the Timeout of
// each phase, made once.
type requestState struct {
	timeouts [3]*providers.Timeout
}

func (r *requestState) init(*Adapter) {
	r.timeouts = [3]*providers.Timeout{
		phaseHeaders:   {Op: "speech response headers"},
		phaseFirstByte: {Op: "first audio byte"},
		phaseIdle:      {Op: "gap between audio reads"},
	}
}

// speak makes one request for input of context c and sends its audio as
// it arrives. It is nil when the body was read whole or Cancel ended the
// request; a failure is a typed provider error. One timer bounds each
// phase: ConnectTimeout to the headers, FirstByteTimeout from the request
// to the first bytes, IdleTimeout between reads; it is stopped while an event waits
// for the reader, whose pace is not the service's fault.
func (s *session) speak(c *ttsContext, input string) error {
	cfg := &s.a.cfg
	body, err := requestBody(cfg, input)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	rctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	var phase atomic.Int32
	start := time.Now()
	timer := time.AfterFunc(cfg.ConnectTimeout, func() { cancel(s.req.timeouts[phase.Load()]) })
	defer timer.Stop()

	s.mu.Lock()
	if c.cancelled {
		s.mu.Unlock()
		return nil
	}
	s.inFlight, s.cancelReq = c, cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight, s.cancelReq = nil, nil
		s.mu.Unlock()
	}()

	req, err := http.NewRequestWithContext(rctx, http.MethodPost, s.a.speechURL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.a.auth != "" {
		req.Header.Set("Authorization", s.a.auth)
	}
	resp, err := s.a.http.Do(req)
	if err != nil {
		return s.failed(rctx, &providers.Disconnected{Cause: err})
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return s.failed(rctx, httpx.Rejected(resp, s.a.key))
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" || ct == "text/event-stream" || ct == "text/html" {
		return s.failed(rctx, &providers.Protocol{Detail: "the response is " + ct + ", not audio"})
	}

	s.dec.reset(cfg.Format == FormatWAV, cfg.PCMRate)
	phase.Store(phaseFirstByte)
	// The first audio is owed FirstByteTimeout after the request went
	// out, the wait for the headers included: the caller waits from its
	// text, whatever the phases.
	wait := max(cfg.FirstByteTimeout-time.Since(start), 0)
	for {
		timer.Reset(wait)
		n, rerr := resp.Body.Read(s.buf)
		timer.Stop()
		if n > 0 {
			phase.Store(phaseIdle)
			wait = cfg.IdleTimeout
			pcm, derr := s.dec.decode(s.buf[:n])
			if derr != nil {
				return s.failed(rctx, derr)
			}
			if pcm != nil && !s.send(providers.TTSEvent{Kind: providers.TTSAudio, ContextID: c.id, Rate: s.dec.Rate(), PCM: pcm}, c) {
				return context.Cause(s.ctx)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return s.failed(rctx, s.dec.end())
		}
		if rerr != nil {
			return s.failed(rctx, &providers.Disconnected{Cause: fmt.Errorf("speech body cut: %w", rerr)})
		}
	}
}

// failed maps the failure err (nil: none) of a request by what ended the
// request first: the session's end (its cause), Cancel (nil: the context
// is acknowledged, not failed), a deadline (its Timeout); else err as it
// is.
func (s *session) failed(rctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return context.Cause(s.ctx)
	}
	cause := context.Cause(rctx)
	if errors.Is(cause, errCancelled) {
		return nil
	}
	var t *providers.Timeout
	if errors.As(cause, &t) {
		return t
	}
	return err
}

// requestErr maps a failed Warm: the caller's end, the deadline, else a
// lost connection.
func requestErr(parent, ctx context.Context, err error) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	var t *providers.Timeout
	if errors.As(context.Cause(ctx), &t) {
		return t
	}
	return &providers.Disconnected{Cause: err}
}
