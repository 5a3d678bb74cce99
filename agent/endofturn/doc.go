// Package endofturn holds the end-of-turn policy, a conversation rule: once
// the voice activity detector reports that speech stopped, Policy turns the
// end-of-turn model's probability that the caller's turn is complete into a
// deadline between MinDelay and MaxDelay after the stop, moves it when a
// new estimate comes, and cancels it when speech resumes.
//
// It is a pure state machine driven by explicit times: it reads no clock,
// starts no goroutine and runs no model. The model that gives the
// probability is media's (media/eot: an ONNX classifier over the audio);
// the turn actor (actors/turn) owns a Policy, wires it to its timers and
// ends the turn when Due says so. Without a model, Text estimates a pause
// from the transcript heard so far: words left hanging ("a table for")
// mean the caller goes on. It imports only the standard library.
package endofturn
