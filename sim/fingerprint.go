package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
)

// Fingerprint condenses a run into a short hash of everything that must
// repeat exactly when the same call runs again: the output timing (every
// record, in call time), the context, the words the caller heard, the
// turns' timelines and the counters that say what the call did (see
// fingerprintCounter).
func (r *Result) Fingerprint() string {
	return fingerprintOf(r.FingerprintText())
}

// FingerprintText is the text the fingerprint hashes (for diffs when two
// runs differ).
func (r *Result) FingerprintText() string {
	var b strings.Builder
	for _, rec := range r.Records {
		fmt.Fprintf(&b, "r %d %d %d %d %s\n", rec.At.Sub(r.Start).Microseconds(), rec.Kind, rec.Epoch, rec.Offset.Microseconds(), rec.Name)
	}
	if r.Context != nil {
		b.WriteString(r.Context.Fingerprint())
		b.WriteByte('\n')
	}
	epochs := make([]messages.Epoch, 0, len(r.Words))
	for e := range r.Words {
		epochs = append(epochs, e)
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i] < epochs[j] })
	for _, e := range epochs {
		for _, w := range r.PlayedWords(e) {
			fmt.Fprintf(&b, "w %d %s\n", e, w)
		}
	}
	for _, t := range r.Timelines {
		for k := messages.MarkVADStop; k <= messages.MarkInterrupt; k++ {
			if at, ok := t.Marks[k]; ok {
				fmt.Fprintf(&b, "t %d %s %d\n", t.Epoch, k, at.Sub(r.Start).Microseconds())
			}
		}
	}
	if r.Tree != nil {
		for _, c := range r.Tree.Children {
			for _, name := range kit.Names(c.Counters) {
				if !fingerprintCounter(name) {
					continue
				}
				fmt.Fprintf(&b, "c %s %s %d\n", c.Name, name, c.Counters[name])
			}
			fmt.Fprintf(&b, "c %s restarts %d\n", c.Name, c.Restarts)
		}
	}
	fmt.Fprintf(&b, "connects %d %d\n", r.STTConnects, r.TTSConnects)
	return b.String()
}

// fingerprintCounter tells the counters a fingerprint covers: the ones that
// say what the call did. Counters of work that races an interrupt of the
// same virtual instant are left out: when a text delta and an interrupt
// from two actors fall on one instant, their order is up to the scheduler,
// so how many words the TTS synthesized before its cancel, or which actor
// dropped a stale message, may differ between runs, while what went out on
// the wire, what was heard and what the context holds do not (they are in
// the fingerprint).
func fingerprintCounter(name string) bool {
	switch name {
	case "turns", "empty_turns", "interrupts", "cuts", "round_failures", "requests", "late_notes", "side_effect_late_results", "calls",
		"side_effect_calls", "connects", "connect_failures", "session_errors", "finalizes", "starts", "stops",
		"stt_failures", "tts_failures", "mailbox_dropped", "frames_dropped", "unknown_messages", "epoch":
		return true
	}
	return false
}

func fingerprintOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
