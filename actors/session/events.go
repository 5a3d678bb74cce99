package session

import (
	"maps"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// event hands a stage's live event to the observer and follows the call's
// state from it.
func (a *Actor) event(m *messages.CallEvent) {
	if a.cfg.LogContent {
		a.logContent(m)
	}
	if a.cfg.OnEvent == nil {
		return
	}
	a.cfg.OnEvent(*m)
	if m.Kind == messages.EventBotDone && m.Epoch >= a.stateEpoch {
		a.setState(messages.StateListening, m.Epoch)
	}
}

// logContent logs what was said, with Config.LogContent on: the caller's
// turns, and the bot's words of each answer as played, when it ends.
func (a *Actor) logContent(m *messages.CallEvent) {
	switch m.Kind {
	case messages.EventUserTurn:
		if m.Keys > 0 {
			// Key presses may be a PIN: not even the debug switch logs them.
			a.cfg.Log.Debug().Str("call_id", string(a.cfg.Call)).Uint64("epoch", uint64(m.Epoch)).Int("keys", m.Keys).Msg("caller said (text withheld: it holds key presses)")
			return
		}
		a.cfg.Log.Debug().Str("call_id", string(a.cfg.Call)).Uint64("epoch", uint64(m.Epoch)).Str("text", m.Text).Msg("caller said")
	case messages.EventBotWord:
		if m.Epoch != a.saidEpoch {
			a.said, a.saidEpoch = a.said[:0], m.Epoch
		}
		a.said = append(a.said, m.Text)
	case messages.EventBotDone:
		text := ""
		if m.Epoch == a.saidEpoch {
			text = strings.Join(a.said, " ")
		}
		a.said = a.said[:0]
		a.cfg.Log.Debug().Str("call_id", string(a.cfg.Call)).Uint64("epoch", uint64(m.Epoch)).Str("text", text).Bool("cut", m.Cut).Msg("bot said")
	}
}

// markEvent turns timeline marks into events: the end of the caller's turn
// (thinking), the first audio out (speaking) and the turn's latency, from
// the end of the caller's speech to that first audio, with its stages.
func (a *Actor) markEvent(t *Timeline, m *messages.TurnMark) {
	if a.cfg.OnEvent == nil || m.Epoch < a.stateEpoch {
		return
	}
	switch m.Kind {
	case messages.MarkTurnEnd:
		a.setState(messages.StateThinking, m.Epoch)
	case messages.MarkFirstAudioOut:
		if end, ok := t.Marks[messages.MarkVADStop]; ok {
			a.cfg.OnEvent(messages.CallEvent{Kind: messages.EventLatency, Epoch: m.Epoch, Latency: m.At.Sub(end), Stages: messages.TurnStages(t.Marks), Marks: maps.Clone(t.Marks), At: m.At})
		}
		a.setState(messages.StateSpeaking, m.Epoch)
	}
}

// setState reports a change of the call's state.
// restarted tells the observer a stage was restarted.
func (a *Actor) restarted(s messages.Stage) {
	if a.cfg.OnEvent != nil {
		a.cfg.OnEvent(messages.CallEvent{Kind: messages.EventRestart, Text: string(s), At: time.Now()})
	}
}

func (a *Actor) setState(s string, e messages.Epoch) {
	if a.cfg.OnEvent == nil || s == a.state {
		return
	}
	a.state, a.stateEpoch = s, e
	a.cfg.OnEvent(messages.CallEvent{Kind: messages.EventState, Epoch: e, State: s, At: time.Now()})
}
