package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/stt/pocketsphinx"
)

// Framing of an utterance as a call's audio path gives it to the
// recognizer: 20 ms chunks, some silence before the speech (the VAD's
// pre-roll holds it) and a hangover of silence after it, then Finalize.
const (
	asrFrame = 320              // 20 ms at 16 kHz
	asrLead  = asrRate * 3 / 10 // 300 ms
	asrTail  = asrRate * 3 / 10 // 300 ms, Silero's hangover
	// asrQueue holds a whole utterance with its silence in the session's
	// queue: the bench sends it at once, faster than real time.
	asrQueue = 30 * time.Second
	// asrMaxSpeech bounds an utterance's audio within asrQueue.
	asrMaxSpeech = 25 * asrRate
	// asrFinalWait is a watchdog on one utterance's final.
	asrFinalWait = 2 * time.Minute
)

// decodeGroup decodes utterances in order through one session of a fresh
// pocketsphinx engine with one decoder, as one caller's turns of a call:
// the decoder's cepstral mean carries from one utterance to the next, so
// a fixed order and a fresh engine per group make the figures the same on
// every run whatever the pool of groups does. It returns each utterance's
// final transcript.
func decodeGroup(ctx context.Context, cfg pocketsphinx.Config, audio [][]int16) ([]string, error) {
	cfg.PoolSize = 1
	cfg.Queue = asrQueue
	e, err := pocketsphinx.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	defer e.Close()
	s, err := e.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	defer s.Close()
	marker, ok := s.(providers.SpeechMarker)
	if !ok {
		return nil, fmt.Errorf("%w: the pocketsphinx session marks no speech start", ErrDecode)
	}
	out := make([]string, len(audio))
	silence := make([]int16, max(asrLead, asrTail))
	for i, pcm := range audio {
		if len(pcm) > asrMaxSpeech {
			return nil, fmt.Errorf("%w: utterance %d is %d samples, over %d", ErrDecode, i, len(pcm), asrMaxSpeech)
		}
		if err := marker.SpeechStarted(); err != nil {
			return nil, fmt.Errorf("%w: speech start: %v", ErrDecode, err)
		}
		for _, part := range [][]int16{silence[:asrLead], pcm, silence[:asrTail]} {
			for j := 0; j < len(part); j += asrFrame {
				if err := s.SendAudio(part[j:min(j+asrFrame, len(part))]); err != nil {
					return nil, fmt.Errorf("%w: send: %v", ErrDecode, err)
				}
			}
		}
		if err := s.Finalize(); err != nil {
			return nil, fmt.Errorf("%w: finalize: %v", ErrDecode, err)
		}
		text, err := finalOf(ctx, s)
		if err != nil {
			return nil, err
		}
		out[i] = strings.Join(strings.Fields(text), " ")
	}
	if ps, ok := s.(*pocketsphinx.Session); ok && ps.Dropped() != 0 {
		return nil, fmt.Errorf("%w: %d samples dropped by the session's queue", ErrDecode, ps.Dropped())
	}
	return out, nil
}

// finalOf reads events up to the final that answers a Finalize.
func finalOf(ctx context.Context, s providers.STTSession) (string, error) {
	watchdog := time.NewTimer(asrFinalWait)
	defer watchdog.Stop()
	for {
		select {
		case ev, ok := <-s.Events():
			switch {
			case !ok:
				return "", fmt.Errorf("%w: the session ended before its final", ErrDecode)
			case ev.Err != nil:
				return "", fmt.Errorf("%w: %v", ErrDecode, ev.Err)
			case ev.Final && ev.FromFinalize:
				return ev.Text, nil
			case ev.Final:
				return "", fmt.Errorf("%w: a final not asked for (the utterance outran MaxUtterance)", ErrDecode)
			}
		case <-ctx.Done():
			return "", fmt.Errorf("%w: %v", ErrDecode, context.Cause(ctx))
		case <-watchdog.C:
			return "", fmt.Errorf("%w: no final within %v", ErrDecode, asrFinalWait)
		}
	}
}

// The models.
const (
	modelGeneral = "general" // the Debian en-us n-gram model
	modelDomain  = "domain"  // biased to the rules provider's domain
)

var asrModels = []string{modelGeneral, modelDomain}

// modelConfig is the recognizer's config of a model: the domain model
// is the keyless agent's, the rules provider's phrases interpolated with
// the general model at weight (0: the provider's default), as an agent
// file's [stt] domain = "llm" sets it up.
func modelConfig(name string, weight float64) (pocketsphinx.Config, error) {
	switch name {
	case modelGeneral:
		return pocketsphinx.Config{}, nil
	case modelDomain:
		return pocketsphinx.Config{Domain: rules.Phrases(), DomainWeight: weight, DomainFrom: pocketsphinx.DomainFromLLM}, nil
	}
	return pocketsphinx.Config{}, fmt.Errorf("%w: %q unknown (want %s)", ErrModel, name, strings.Join(asrModels, ", "))
}
