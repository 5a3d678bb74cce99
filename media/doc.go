// Package media holds the audio path of a call: frames, codecs, resampling
// and voice activity detectors. It sits below the actors so that the vad and
// transport actors stay thin and the signal code can be tested and benchmarked
// without an actor system. More lands here later.
package media
