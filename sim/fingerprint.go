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
// record, in call time), the context, the spoken words and the stages'
// counters (except the stale_* drop counts, see FingerprintText).
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
		for _, w := range r.Words[e] {
			fmt.Fprintf(&b, "w %d %s %d\n", e, w.Text, w.Offset.Microseconds())
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
				// Where a stale message is dropped (llm or tts) depends on
				// the order of two messages of the same virtual instant
				// from different actors; what the call does does not.
				if strings.HasPrefix(name, "stale_") {
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

func fingerprintOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
