package agentfile

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// vad reads [vad].
func (w *walker) vad(t *tbl) VAD {
	v := VAD{Pos: t.pos}
	v.Engine = t.oneOf("engine", "energy", "silero", "energy")
	siler := []string{"stop_threshold", "min_speech", "hangover", "floor_dbfs"}
	energy := []string{"start_after", "stop_after"}
	other, otherName := energy, "energy"
	if v.Engine.V == "silero" {
		v.Silero.Threshold = t.number("threshold", 0.5, 0, 1)
		stopDef := v.Silero.Threshold.V - 0.15
		if stopDef <= 0 {
			stopDef = v.Silero.Threshold.V / 2
		}
		v.Silero.StopThreshold = t.number("stop_threshold", stopDef, 0, 1)
		if st := v.Silero.StopThreshold; st.Set && st.V > v.Silero.Threshold.V {
			w.at(st.Pos, "vad.stop_threshold", fmt.Sprintf("%s is above threshold %s", fnum(st.V), fnum(v.Silero.Threshold.V)),
				"the stop threshold is the lower one (hysteresis)")
		}
		v.Silero.MinSpeech = t.duration("min_speech", 64*time.Millisecond, 0, 2*time.Second)
		v.Silero.Hangover = t.duration("hangover", 300*time.Millisecond, 0, 5*time.Second)
		v.Silero.FloorDBFS = t.number("floor_dbfs", -60, -100, -30)
	} else {
		v.Energy.Threshold = t.number("threshold", 500, 1, 32767)
		v.Energy.StartAfter = t.duration("start_after", 40*time.Millisecond, 0, 2*time.Second)
		v.Energy.StopAfter = t.duration("stop_after", 300*time.Millisecond, 0, 5*time.Second)
		other, otherName = siler, "silero"
	}
	for _, k := range other {
		if e := t.take(k); e != nil {
			w.at(e.keyPos, join(t.path, k), fmt.Sprintf("%s is a setting of the %s engine; engine is %s", k, otherName, v.Engine.V),
				"set "+w.format.Setting("engine", otherName)+" or remove "+k)
		}
	}
	t.done("key", "", nil)
	return v
}

// turn reads [turn].
func (w *walker) turn(t *tbl) Turn {
	tu := Turn{Pos: t.pos}
	tu.EndOfTurnDelay = t.duration("end_of_turn_delay", 0, 0, 5*time.Second)
	tu.ByText = t.boolean("end_of_turn_by_text", false)
	tu.EndOfTurnMax = t.duration("end_of_turn_max", 800*time.Millisecond, 50*time.Millisecond, 5*time.Second)
	switch {
	case tu.EndOfTurnMax.Set && !tu.ByText.V:
		w.at(tu.EndOfTurnMax.Pos, "turn.end_of_turn_max", "end_of_turn_max is the wait after words left hanging, with end_of_turn_by_text",
			"set "+w.format.Setting("end_of_turn_by_text", true)+", or remove end_of_turn_max")
	case tu.ByText.V && tu.EndOfTurnMax.V < tu.EndOfTurnDelay.V:
		w.at(tu.EndOfTurnMax.Pos, "turn.end_of_turn_max", "end_of_turn_max is below end_of_turn_delay",
			"set "+w.format.Setting("end_of_turn_max", tu.EndOfTurnDelay.V)+" or more")
	}
	tu.BargeInDelay = t.duration("barge_in_delay", 0, 0, 2*time.Second)
	tu.Speculate = t.boolean("speculate", false)
	tu.DrainTimeout = t.duration("drain_timeout", 15*time.Second, 0, time.Minute)
	if tu.Speculate.V && tu.EndOfTurnDelay.V == 0 && !tu.ByText.V {
		w.at(tu.Speculate.Pos, "turn.speculate", "speculation needs an end-of-turn delay to hide the request in",
			"set "+w.format.Setting("end_of_turn_delay", 300*time.Millisecond)+", or remove speculate")
	}
	t.done("key", "", nil)
	return tu
}

// fillers reads [fillers].
func (w *walker) fillers(t *tbl) Fillers {
	f := Fillers{Pos: t.pos, After: Value[time.Duration]{V: 1200 * time.Millisecond, Pos: t.pos}}
	if e := t.take("after"); e != nil {
		if e.val.kind == kString && e.val.str == "off" {
			f.After = Value[time.Duration]{V: -1, Pos: e.val.pos, Set: true}
		} else if d, ok := t.parseDuration(e, e.val, "fillers.after", 0, 10*time.Second, 1200*time.Millisecond); ok {
			f.After = Value[time.Duration]{V: d, Pos: e.val.pos, Set: true}
		} else {
			f.After.Pos = e.val.pos
		}
	}
	f.PerTool = t.boolean("per_tool", false)
	if f.PerTool.V && t.n != nil && t.n.get("after") != nil {
		w.at(f.PerTool.Pos, "fillers.per_tool", "per_tool and after together: one of them would be ignored",
			"remove after to use each tool's own delay, or per_tool for one delay")
	}
	f.Phrases = t.list("phrases", nil)
	t.done("key", "", nil)
	return f
}

// tools reads [tools].
func (w *walker) tools(t *tbl) Tools {
	known := w.opts.KnownTools
	tl := Tools{Pos: t.pos}
	seen := map[string]Pos{}
	tl.Enabled = t.list("enabled", func(s string) (string, string) {
		if p, dup := seen[s]; dup {
			return s + " is listed twice (first at " + p.String() + ")", "remove the second one"
		}
		seen[s] = Pos{}
		if known != nil && !contains(known, s) {
			return "unknown tool " + showValue(s), closestHint(s, known)
		}
		return "", ""
	})
	for _, e := range tl.Enabled {
		seen[e.V] = e.Pos
	}
	confirmed := map[string]bool{}
	tl.Confirm = t.list("confirm", func(s string) (string, string) {
		if confirmed[s] {
			return s + " is listed twice", "remove the second one"
		}
		confirmed[s] = true
		if _, ok := seen[s]; !ok {
			return s + " is in confirm but not enabled", "add it to tools.enabled, or remove it from tools.confirm"
		}
		return "", ""
	})
	tPos, tOn := Pos{}, false
	for _, e := range tl.Enabled {
		if e.V == "transfer_call" {
			tPos, tOn = e.Pos, true
		}
	}
	tl.TransferCall = w.transferCall(t.sub("transfer_call"), tOn, tPos, confirmed["transfer_call"])
	t.done("key", "", nil)
	return tl
}

// transports reads [transports].
func (w *walker) transports(t *tbl) Transports {
	tr := Transports{Pos: t.pos}
	wt := t.sub("webrtc")
	tr.WebRTC = WebRTC{
		Pos:             wt.pos,
		Enabled:         wt.boolean("enabled", wt.present()),
		IncludeLoopback: wt.boolean("include_loopback", false),
		Interfaces:      wt.list("interfaces", nil),
		STUN: wt.list("stun", func(s string) (string, string) {
			if !strings.HasPrefix(s, "stun:") && !strings.HasPrefix(s, "stuns:") {
				return showValue(s) + " is not a stun: URL", "e.g. " + w.format.Setting("stun", []string{"stun:stun.example.net:3478"})
			}
			return "", ""
		}),
	}
	tr.WebRTC.Access = w.access(wt, tr.WebRTC.Enabled.V)
	wt.done("key", "", nil)
	tw := t.sub("twilio")
	tr.Twilio = Twilio{Pos: tw.pos, Enabled: tw.boolean("enabled", tw.present()), Path: w.path(tw, "/twilio")}
	w.twilioAccess(tw, &tr.Twilio)
	tw.done("key", "", nil)
	pc := t.sub("pcm")
	tr.PCM = PCM{Pos: pc.pos, Enabled: pc.boolean("enabled", pc.present()), Path: w.path(pc, "/pcm")}
	tr.PCM.Rate = pc.integer("rate", 16000, 0, math.MaxInt32)
	if r := tr.PCM.Rate; r.Set && !containsInt([]int64{8000, 16000, 24000, 48000}, int64(r.V)) {
		w.at(r.Pos, "transports.pcm.rate", fmt.Sprintf("%d is not one of 8000, 16000, 24000, 48000", r.V), "e.g. "+w.format.Setting("rate", 16000))
		tr.PCM.Rate.V, tr.PCM.Rate.Set = 16000, false
	}
	tr.PCM.Access = w.access(pc, tr.PCM.Enabled.V)
	pc.done("key", "", nil)
	tr.SIP = w.sip(t.sub("sip"))
	t.done("key", "", nil)
	if tr.Twilio.Enabled.V && tr.PCM.Enabled.V && tr.Twilio.Path.V == tr.PCM.Path.V {
		w.at(tr.PCM.Path.Pos, "transports.pcm.path", "the same path as transports.twilio.path", "give each transport its own path")
	}
	if !tr.WebRTC.Enabled.V && !tr.Twilio.Enabled.V && !tr.PCM.Enabled.V && !tr.SIP.Enabled.V {
		w.missing(t.pos, "transports", "no transport is enabled: nobody could call the agent",
			"enable one, e.g. "+w.format.Table("transports.webrtc")+" (or twilio, pcm, sip)")
	}
	return tr
}

// path reads a transport's HTTP path.
func (w *walker) path(t *tbl, def string) Value[string] {
	v := t.str("path", def)
	if v.Set && (!strings.HasPrefix(v.V, "/") || strings.ContainsAny(v.V, " ?#\t\r\n")) {
		w.at(v.Pos, join(t.path, "path"), "want an absolute path such as "+def, "e.g. "+w.format.Setting("path", def))
		v.V, v.Set = def, false
	}
	return v
}

// eightKHz refuses pocketsphinx on a telephony transport: it hears 16 kHz
// wideband audio only, and a phone line brings 8 kHz.
func (w *walker) eightKHz(f *File) {
	if f.STT.Name != "pocketsphinx" {
		return
	}
	const msg = "pocketsphinx hears 16 kHz audio only; a telephony transport brings 8 kHz"
	const hint = "use deepgram for telephony or turn the transport off"
	if tw := f.Transports.Twilio; tw.Enabled.V {
		pos := tw.Enabled.Pos
		if !tw.Enabled.Set {
			pos = tw.Pos
		}
		w.at(pos, "transports.twilio", msg, hint)
	}
	if pc := f.Transports.PCM; pc.Enabled.V && pc.Rate.V == 8000 {
		w.at(pc.Rate.Pos, "transports.pcm.rate", msg, hint+" (or "+w.format.Setting("rate", 16000)+")")
	}
	if s := f.Transports.SIP; s.Enabled.V {
		if s.Rate.V == 8000 {
			w.at(s.Rate.Pos, "transports.sip.rate", "pocketsphinx hears 16 kHz audio only", w.format.Setting("rate", 16000)+" (with the wideband codecs opus and G722)")
		}
		if narrow := narrowCodecs(s); len(narrow) > 0 {
			pos := s.Pos
			if len(s.Codecs) > 0 {
				pos = s.Codecs[0].Pos
			}
			w.at(pos, "transports.sip.codecs", "pocketsphinx cannot serve "+strings.Join(narrow, " and ")+" (8 kHz phone audio): measured over four voices, the keyless agent answers 36 of 52 turns right through G.711 against 46 at 16 kHz (32% word errors against 10%; \"what time is it\" misheard on every voice, docs/MEDIA.md)",
				w.format.Setting("codecs", []string{"opus", "G722"})+" (a caller offering only G.711 is answered 488 with the wideband codecs named), or use deepgram for 8 kHz calls")
		}
	}
}
