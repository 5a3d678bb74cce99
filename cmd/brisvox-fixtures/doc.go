// Command brisvox-fixtures composes speech fixtures for the VAD tests from
// utterances a synthesizer has already spoken (scripts/fixtures.sh runs
// flite and espeak-ng, resamples with sox, then calls this command). It
// trims each utterance to where its audio is, lays the utterances out with
// digital-silence gaps of known length, and writes the WAV together with a
// sidecar JSON of ground-truth segments computed from the samples:
//
//	brisvox-fixtures -plan plan.tsv -out DIR/name.wav -language en
//
// plan.tsv has one utterance per line: language, WAV path, text, separated
// by tabs. The sidecar DIR/name.json is
//
//	{"rate":16000, "language":"en", "segments":[{"start_sample":8000,
//	 "end_sample":41230, "text":"...", "language":"en", ...}], "transcript":"..."}
//
// with end_sample exclusive.
package main
