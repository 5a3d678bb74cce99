package chaostest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

const msec = time.Millisecond

// The faults a call may draw: the seed's chaos suite (provider disconnects
// and stalls, error statuses, slow consumers, panics in a stage, a hang-up
// at a random point) with the virtual-time suite's parameters (sim's
// TestChaos), plus the ones only a real transport has (a hang-up that
// drops the connection without a close) or that the virtual suite leaves
// to other tests (panics, a TTS refusal).
const (
	FaultSTTDisconnect = "stt_disconnect"
	FaultSTTStall      = "stt_stall"
	FaultLLM503        = "llm_503"
	FaultLLMDisconnect = "llm_disconnect"
	FaultLLMStall      = "llm_stall"
	FaultTTSDisconnect = "tts_disconnect"
	FaultTTSStall      = "tts_stall"
	FaultTTS429        = "tts_429"
	FaultBargeIn       = "barge_in"
	FaultSlowConsumer  = "slow_consumer"
	FaultHangUp        = "hang_up"
	FaultHangUpAbrupt  = "hang_up_abrupt"
	FaultPanicVAD      = "panic_vad"
	FaultPanicTTS      = "panic_tts"
)

// Faults lists every fault, in the order the draw indexes them.
var Faults = []string{
	FaultSTTDisconnect, FaultSTTStall, FaultLLM503, FaultLLMDisconnect, FaultLLMStall,
	FaultTTSDisconnect, FaultTTSStall, FaultTTS429, FaultBargeIn, FaultSlowConsumer,
	FaultHangUp, FaultHangUpAbrupt, FaultPanicVAD, FaultPanicTTS,
}

// The conversation: a question that may take the booking tool, a
// follow-up, and a goodbye whose request carries the whole context (so
// the first two answers are checked against what was heard).
const (
	q1 = "I would like to move my appointment to Friday."
	a1 = "Of course. I can move it to Friday morning or Friday afternoon, whichever suits you."
	q2 = "Friday afternoon, please."
	a2 = "Done. Your appointment is on Friday afternoon."
	q3 = "Thank you, goodbye."
	a3 = "You are welcome. Goodbye."

	qBook    = "Book a table for two on Friday."
	aBooking = "Booking it now."
	aBooked  = "Your table for two on Friday is booked."

	bargeIn  = "Sorry?"
	aBargeIn = "Yes, I said Friday morning or afternoon."
)

// plan is one call: its script, its providers' scripts and latencies, and
// its fault. Everything is drawn from the call's own seeded source, so a
// call is the same whatever the other calls drew, and the same call with
// and without faults differs only where its fault acts.
type plan struct {
	name  string // the call's name in the URL (slot and round)
	index int    // the call's index over the run
	fault string
	// tool: the first question is a booking, answered through the
	// SideEffect tool book_table, which the model asks for twice.
	tool bool

	script  *script
	answers []providertest.Response
	// The providers' scripted latencies (the engine-added latency
	// subtracts them).
	sttFinal, llmFirst, ttsFirst time.Duration

	sttFaults, llmFaults, ttsFaults []providertest.Fault
	// hangupAt: the caller hangs up at this offset (abrupt: it drops the
	// connection without a close message).
	hangupAt time.Duration
	abrupt   bool
	// readDelay: the slow consumer's pause after each audio frame read.
	readDelay time.Duration
	// panicStage panics on its panicN-th matching message.
	panicStage messages.Stage
	panicN     int
}

// healthy tells whether call index i is left without a fault: every third
// call, as in the virtual-time suite.
func healthy(i int) bool { return i%3 == 0 }

// newPlan draws call index i of a run (slot, round name) from seed; with
// faults false no call gets a fault, and the draws are the same.
func newPlan(seed uint64, i int, name string, faults bool) *plan {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	p := &plan{name: name, index: i}
	// Latencies first, so that they do not depend on the fault.
	p.sttFinal = time.Duration(100+10*rng.IntN(16)) * msec // 100-250 ms
	p.llmFirst = time.Duration(200+10*rng.IntN(26)) * msec // 200-450 ms
	p.ttsFirst = time.Duration(100+10*rng.IntN(16)) * msec // 100-250 ms
	wantTool := rng.IntN(4) == 0
	fault := Faults[rng.IntN(len(Faults))]
	if faults && !healthy(i) {
		p.fault = fault
	}
	switch p.fault {
	case FaultLLM503, FaultLLMDisconnect, FaultLLMStall, FaultBargeIn:
		// The model's faults and the barge-in change which response
		// answers which turn: the booking's script stays out of them.
	default:
		p.tool = wantTool
	}
	first := q1
	if p.tool {
		first = qBook
	}
	s := (&script{}).silence(500*msec).speak(first, 1200*msec)
	// Each answer has 2.3-3 s to spare before the next question or the
	// hang-up (a healthy call's answers must play out: check.go), so a
	// loaded machine's slower turns do not turn the script into
	// barge-ins and cut goodbyes.
	if p.fault == FaultBargeIn {
		s.silence(1500*msec).speak(bargeIn, 600*msec).silence(6400 * msec)
	} else {
		s.silence(7500 * msec)
	}
	s.speak(q2, 1000*msec).silence(5000*msec).speak(q3, 800*msec).silence(4500 * msec)
	p.script = s

	switch {
	case p.tool:
		book := func(id string) providertest.ScriptedCall {
			return providertest.ScriptedCall{ID: id, Name: bookTool, Args: `{"day":"friday","people":2}`}
		}
		p.answers = []providertest.Response{
			{Text: aBooking, Calls: []providertest.ScriptedCall{book("a")}},
			{Calls: []providertest.ScriptedCall{book("b")}}, // the repeat: answered already_done, not run
			{Text: aBooked},
		}
	case p.fault == FaultBargeIn:
		p.answers = []providertest.Response{{Text: a1}, {Text: aBargeIn}}
	case p.fault == FaultLLM503:
		p.answers = []providertest.Response{{Err: &providers.Rejected{Status: 503}}}
	default:
		p.answers = []providertest.Response{{Text: a1}}
	}
	p.answers = append(p.answers, providertest.Response{Text: a2}, providertest.Response{Text: a3})

	switch p.fault {
	case FaultSTTDisconnect:
		p.sttFaults = []providertest.Fault{{Kind: providertest.FaultDisconnect, BeforeEvent: 1 + rng.IntN(7)}}
	case FaultSTTStall:
		p.sttFaults = []providertest.Fault{{Kind: providertest.FaultStall, BeforeEvent: 1 + rng.IntN(7), Duration: 2 * time.Second}}
	case FaultLLMDisconnect:
		p.llmFaults = []providertest.Fault{{Kind: providertest.FaultDisconnect, BeforeEvent: 2 + rng.IntN(6)}}
	case FaultLLMStall:
		p.llmFaults = []providertest.Fault{{Kind: providertest.FaultStall, Duration: 3 * time.Second}}
	case FaultTTSDisconnect:
		p.ttsFaults = []providertest.Fault{{Kind: providertest.FaultDisconnect, BeforeEvent: 4 + rng.IntN(20)}}
	case FaultTTSStall:
		p.ttsFaults = []providertest.Fault{{Kind: providertest.FaultStall, BeforeEvent: 2 + rng.IntN(10), Duration: time.Second}}
	case FaultTTS429:
		p.ttsFaults = []providertest.Fault{{Kind: providertest.FaultReject, Status: 429}}
	case FaultSlowConsumer:
		p.readDelay = 30 * msec
	case FaultHangUp, FaultHangUpAbrupt:
		// Anywhere from the first second to the end of the script.
		frames := p.script.frames() - 50
		p.hangupAt = time.Second + time.Duration(rng.IntN(frames))*messages.FrameDuration
		p.abrupt = p.fault == FaultHangUpAbrupt
	case FaultPanicVAD:
		p.panicStage, p.panicN = messages.StageVAD, 1+rng.IntN(400) // within the first 8 s
	case FaultPanicTTS:
		// The n-th text delta of the call, the first answer's first one
		// included: a restart on an answer's first delta fails that
		// answer (the tts stage's inflight record), as on any later one
		// (found by this suite, seed 1, call c0038-1, when the restart
		// lost the delta and played the rest: context != heard).
		p.panicStage, p.panicN = messages.StageTTS, 1+rng.IntN(11)
	}
	return p
}

// String names the call and its fault for a report line.
func (p *plan) String() string {
	f := p.fault
	if f == "" {
		f = "healthy"
	}
	if p.tool {
		f += "+tool"
	}
	return fmt.Sprintf("%s (%s)", p.name, f)
}
