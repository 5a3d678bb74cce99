package main

import "errors"

// Sentinel errors of the asr command.
var (
	// ErrCorpus: the corpus file does not parse.
	ErrCorpus = errors.New("asr: bad corpus")
	// ErrToolMissing: flite, espeak-ng or sox is not installed.
	ErrToolMissing = errors.New("asr: a speech tool is missing")
	// ErrSynthesis: a speech tool failed or made unusable audio.
	ErrSynthesis = errors.New("asr: synthesis failed")
	// ErrDecode: the recognizer failed on an utterance.
	ErrDecode = errors.New("asr: decoding failed")
	// ErrModel: an unknown model, or one this build cannot set up.
	ErrModel = errors.New("asr: bad model")
)

// Sentinel errors of the latency command.
var (
	// ErrSpeech: the flite command failed or made no sound.
	ErrSpeech = errors.New("latency: no speech")
	// ErrCall: the call over the PCM websocket failed (dial, the server
	// closed it, the greeting never played out).
	ErrCall = errors.New("latency: the call failed")
)
