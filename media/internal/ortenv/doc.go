// Package ortenv holds the process's one ONNX Runtime environment for the
// packages of media that run models (media/silero, media/eot).
//
// onnxruntime_go keeps one shared-library path and one environment per
// process: InitializeEnvironment fails when called twice, and
// DestroyEnvironment unloads the library for everyone. So every user takes
// a reference here: the first loads the library and creates the
// environment, the last release destroys it, and two users asking for
// different libraries get an error instead of a silent mix. This is the
// only package-level mutable state of media, and it exists because the
// binding's is global.
//
// Built without cgo (CGO_ENABLED=0) the binding does not compile; Acquire
// then fails with ErrLoad, and its users (built likewise) fail with their
// own ErrNoCgo before they reach it.
package ortenv
