package agentfile

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// maxDescriptionRunes bounds the agent's description: a sentence or two
// for its page.
const maxDescriptionRunes = 400

// walker decodes the tree into a File, collecting diagnostics.
type walker struct {
	name string
	opts Options
	// format is the file's: hints show settings in its syntax.
	format Format
	diags  Diagnostics
	// partial: the tree ends at a syntax error, so what is missing may
	// only be unread; "missing" diagnostics are left out.
	partial bool
	// data and lines are the source, to place a diagnostic inside a
	// string value (a placeholder of the prompt).
	data  []byte
	lines lineIndex
}

// at records a diagnostic.
func (w *walker) at(pos Pos, path, msg, hint string) {
	w.diags = append(w.diags, Diagnostic{File: w.name, Line: pos.Line, Col: pos.Col, Path: path, Msg: msg, Hint: hint})
}

// missing records a diagnostic for something required and absent, unless
// the file could not be read to its end.
func (w *walker) missing(pos Pos, path, msg, hint string) {
	if !w.partial {
		w.at(pos, path, msg, hint)
	}
}

// decode turns the tree into a File.
func (w *walker) decode(root *node, complete bool) *File {
	w.partial = !complete
	f := &File{Path: w.name}
	top := &tbl{w: w, n: root, pos: Pos{1, 1}}

	base := strings.TrimSuffix(filepath.Base(w.name), filepath.Ext(w.name))
	f.Name = top.str("name", base)
	if f.Name.Set && !validName(f.Name.V) {
		w.at(f.Name.Pos, "name", "want 1 to 64 letters, digits, '.', '_' or '-'", "e.g. "+w.format.Setting("name", "front-desk"))
	}
	f.Prompt = top.str("prompt", "")
	switch {
	case f.Prompt.Set && strings.TrimSpace(f.Prompt.V) == "":
		w.at(f.Prompt.Pos, "prompt", "is empty", "say who the agent is and what it does")
	case !f.Prompt.Set && top.take("prompt") == nil:
		w.missing(Pos{1, 1}, "prompt", "missing: every agent needs a prompt", w.format.Setting("prompt", "You are the phone assistant of ..."))
	}
	w.placeholders(f.Prompt, "prompt")
	f.Greeting = top.str("greeting", "")
	w.placeholders(f.Greeting, "greeting")
	f.Description = top.str("description", "")
	if d := f.Description; d.Set && utf8.RuneCountInString(d.V) > maxDescriptionRunes {
		w.at(d.Pos, "description", fmt.Sprintf("has %d characters, over %d", utf8.RuneCountInString(d.V), maxDescriptionRunes), "say in a sentence or two what callers can ask for")
	}
	f.EndLine = top.str("end_line", "")

	stt := top.sub("stt")
	sttWarm := w.warmOf(stt, "stt")
	f.STT = w.provider(stt, "stt", sttProviders)
	f.STTWarm = sttWarm.check(f.STT, sttProviders)
	llm := top.sub("llm")
	llmWarm := w.warmOf(llm, "llm")
	f.Rounds = Rounds{
		MaxRounds:    llm.integer("max_rounds", 6, 1, 20),
		RoundTimeout: llm.duration("round_timeout", 15*time.Second, time.Second, 2*time.Minute),
		WindowTokens: llm.integer("window_tokens", 0, -1, 2_000_000),
		FallbackLine: llm.str("fallback_line", ""),
	}
	if v := f.Rounds.WindowTokens; v.Set && v.V >= 0 && v.V < 1000 {
		w.at(v.Pos, "llm.window_tokens", fmt.Sprintf("%d is under 1000", v.V), w.format.Setting("window_tokens", -1)+" turns the window off; leave it out for the default")
	}
	f.LLM = w.provider(llm, "llm", llmProviders)
	f.LLMWarm = llmWarm.check(f.LLM, llmProviders)
	tts := top.sub("tts")
	ttsWarm := w.warmOf(tts, "tts")
	f.TTS = w.provider(tts, "tts", ttsProviders)
	f.TTSWarm = ttsWarm.check(f.TTS, ttsProviders)

	f.VAD = w.vad(top.sub("vad"))
	f.Turn = w.turn(top.sub("turn"))
	f.Fillers = w.fillers(top.sub("fillers"))
	f.Tools = w.tools(top.sub("tools"))
	f.DTMF = w.dtmf(top.sub("dtmf"))
	f.Transports = w.transports(top.sub("transports"))
	f.Serve = w.serve(top.sub("serve"))
	f.Records = w.records(top.sub("records"))
	f.Tracing = w.tracing(top.sub("tracing"))
	f.Outbound = w.outbound(top.sub("outbound"), f.Greeting)
	w.placeholders(f.Outbound.Greeting, "outbound.greeting")
	top.done("key", "", nil)

	w.eightKHz(f)
	return f
}
