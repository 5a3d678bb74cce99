package pocketsphinx

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/providers/tts/flite"
)

// Timing of the dialogue of TestDecoderHoldFraction, on the caller's
// channel.
const (
	// answerLatency is the caller's silence from the end of their words to
	// the agent's first audio: the VAD's stop (300 ms of hangover) and the
	// turn, model and first TTS audio after it.
	answerLatency = 900 * time.Millisecond
	// replyLead is the caller's pause after the agent stops before
	// speaking.
	replyLead = 400 * time.Millisecond
	// localGreeting is the keyless agent's greeting (examples/agents/
	// local.toml).
	localGreeting = "Hello, this is Bistro Brisvox. How can I help you?"
	// toolAnswer stands in for the spoken answer of a turn the rules model
	// answers with a tool call only (the line comes after the result).
	toolAnswer = "It is a quarter past three in the afternoon."
)

// TestDecoderHoldFraction measures how much of a call a caller holds a
// decoder, which is what CallsPerDecoder rests on. The call is the keyless
// agent's dialogue: the agent greets, and for each of agentTurns the
// caller speaks (flite's slt voice) and then is silent while the agent
// answers (the rules model's answer, spoken by flite, after
// answerLatency). The caller's channel goes through the energy VAD with
// its defaults, as the vad stage runs it: its starts are SpeechStarted,
// its stops Finalize. The hold fraction is Stats.Decoded over Stats.Audio
// (with the pre-roll, which the decoder hears too). It must stay under one
// half, or two calls would often wait for one decoder.
// Mutations caught: a session that holds its decoder past the final (the
// fraction goes to about 1), the VAD's marks not reaching the session (no
// turn heard), a pre-roll not decoded (the Decoded figure drops and turns
// lose their first word: fewer turns heard right).
func TestDecoderHoldFraction(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("synthesizes and decodes a whole dialogue (skipped under -short and -race)")
	}
	engineOrSkip(t)
	synctest.Test(t, func(t *testing.T) {
		tts, err := flite.New(flite.Config{Voice: "slt", Rate: 16000})
		if errors.Is(err, flite.ErrNoCgo) {
			t.Skipf("flite needs cgo: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		voice, err := tts.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer voice.Close()
		n := 0
		say := func(text string) []int16 {
			n++
			id := fmt.Sprintf("say-%d", n)
			if err := voice.Push(id, text); err != nil {
				t.Fatal(err)
			}
			if err := voice.Flush(id); err != nil {
				t.Fatal(err)
			}
			return speech(t, voice, id)
		}
		quiet := func(d time.Duration) []int16 { return make([]int16, int(d*16000/time.Second)) }
		l := newRules(t)
		turns := agentTurns()
		// The caller's channel: silence while the agent speaks.
		pcm := quiet(time.Duration(len(say(localGreeting))) * time.Second / 16000)
		var callerSpeech time.Duration
		for _, u := range turns {
			pcm = append(pcm, quiet(replyLead)...)
			words := say(u.text)
			callerSpeech += time.Duration(len(words)) * time.Second / 16000
			pcm = append(pcm, words...)
			reply, _, _ := strings.Cut(answer(t, l, u.history, u.text), " [")
			if reply = strings.TrimSpace(reply); reply == "" || strings.HasPrefix(reply, "[") {
				reply = toolAnswer
			}
			pcm = append(pcm, quiet(answerLatency)...)
			pcm = append(pcm, quiet(time.Duration(len(say(reply)))*time.Second/16000)...)
		}

		e, err := New(Config{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := connect(t, e, t.Context())
		defer s.Close()
		vad, err := media.NewEnergyVAD(media.EnergyVADConfig{})
		if err != nil {
			t.Fatal(err)
		}
		var finals []string
		at := time.Unix(0, 0)
		for i := 0; i+frame <= len(pcm); i += frame {
			chunk := pcm[i : i+frame]
			ev, _ := vad.Process(chunk, at, 20*time.Millisecond)
			at = at.Add(20 * time.Millisecond)
			if err := s.SendAudio(chunk); err != nil {
				t.Fatal(err)
			}
			// In real time, as a call sends it: the bubble's clock moves on
			// once the worker has decoded what it has, so nothing is dropped
			// and the run is the same each time.
			time.Sleep(20 * time.Millisecond)
			switch ev {
			case media.VADStart:
				if err := s.SpeechStarted(); err != nil {
					t.Fatal(err)
				}
			case media.VADStop:
				if err := s.Finalize(); err != nil {
					t.Fatal(err)
				}
				_, final := untilFinal(t, s)
				finals = append(finals, words(final.Text))
			}
		}
		synctest.Wait() // the worker has taken the audio after the last final
		heard := 0
		for _, u := range turns {
			for _, f := range finals {
				if f == words(u.text) {
					heard++
					break
				}
			}
		}
		st := e.Stats()
		hold := float64(st.Decoded) / float64(st.Audio)
		total := time.Duration(len(pcm)) * time.Second / 16000
		t.Logf("call %v, caller speaking %v (%.0f%%); decoder held for %v of %v of audio: %.0f%%; %d finals, %d of %d turns heard word for word",
			total.Round(time.Millisecond), callerSpeech.Round(time.Millisecond), 100*float64(callerSpeech)/float64(total),
			st.Decoded.Round(time.Millisecond), st.Audio.Round(time.Millisecond), 100*hold, len(finals), heard, len(turns))
		if hold <= 0.1 || hold >= 0.5 {
			t.Errorf("decoder held %.0f%% of the call, want between 10%% and 50%% (CallsPerDecoder = %d rests on it)", 100*hold, CallsPerDecoder)
		}
		if heard < len(turns)*2/3 {
			t.Errorf("%d of %d turns heard word for word (finals %q), want at least two thirds", heard, len(turns), finals)
		}
		if d := s.Dropped(); d != 0 {
			t.Errorf("%d samples dropped", d)
		}
		if st.Acquired != uint64(len(finals)) || st.Loaded != 1 || st.Idle != 1 {
			t.Errorf("stats %+v, want a decoder taken per utterance (%d) and given back", st, len(finals))
		}
	})
}
