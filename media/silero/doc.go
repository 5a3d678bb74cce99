// Package silero runs the Silero VAD v5 model (ONNX Runtime, through
// onnxruntime_go) on the caller audio of many calls at once. It is the
// model half of the model VAD: it turns each 32 ms window of a call into a
// speech probability; media.SpeechGate turns the probabilities into speech
// starts and stops.
//
// A Model is one ONNX Runtime session with one thread that runs a batch of
// windows, one per Stream; a Stream carries one call's recurrent state and
// the tail of its previous window. A Pool owns a few Models on worker
// goroutines behind a bounded queue: Submit never blocks (a full queue
// refuses the window), waiting windows are run together as one batch (much
// cheaper per window), stale ones are answered with ErrDeadline unrun, and
// each result comes back through the Job's Done callback, which a vad actor
// wires to send itself a message, so the actor never waits.
//
// The native files (the ONNX Runtime shared library and the model) are
// fetched by `go tool task setup` into .native/; LocateFiles says how they
// are found. ONNX Runtime's environment is process-global in onnxruntime_go;
// the package reference-counts it (see runtime.go): the first Model loads
// it, the last Close unloads it. Built without cgo (CGO_ENABLED=0), NewModel
// and NewPool check the config and find the files, then fail with ErrNoCgo.
package silero
