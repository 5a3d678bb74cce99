// Package session is the supervisor of one call. It spawns the call's
// stages (transport, vad, stt, turn, llm, tools, tts, pacer) under fixed
// names, so every stage knows the others' addresses before they exist, and
// it is their supervision strategy: a failing provider stage is restarted
// with a seeded exponential backoff, any other stage at once, and a stage
// that keeps failing ends the call after a fallback line. It answers
// operators (Describe assembles the call's tree; Restart restarts one stage
// while the call goes on), keeps each turn's timeline, and ends the call on
// hang-up.
package session
