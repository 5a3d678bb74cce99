package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// NotePrefix starts the user text part a late system message becomes.
const NotePrefix = "[system note] "

// OpeningNote is the user turn put before a conversation that starts with
// the model (the agent greeted the caller first): the API wants the first
// content to be the user's.
const OpeningNote = NotePrefix + "the call has started"

// Wire shapes of the request body.
type (
	wireRequest struct {
		SystemInstruction *wireSystem   `json:"systemInstruction,omitempty"`
		Contents          []wireTurn    `json:"contents"`
		Tools             []wireToolSet `json:"tools,omitempty"`
		GenerationConfig  wireGenConfig `json:"generationConfig"`
	}
	wireSystem struct {
		Parts []wirePart `json:"parts"`
	}
	wireGenConfig struct {
		MaxOutputTokens int                 `json:"maxOutputTokens"`
		Temperature     *float64            `json:"temperature,omitempty"`
		ThinkingConfig  *wireThinkingConfig `json:"thinkingConfig,omitempty"`
	}
	wireThinkingConfig struct {
		ThinkingBudget int `json:"thinkingBudget"`
	}
	wireTurn struct {
		Role  string     `json:"role"`
		Parts []wirePart `json:"parts"`
	}
	wirePart struct {
		Text             string        `json:"text,omitempty"`
		FunctionCall     *wireCall     `json:"functionCall,omitempty"`
		FunctionResponse *wireFuncResp `json:"functionResponse,omitempty"`
		ThoughtSignature string        `json:"thoughtSignature,omitempty"`
	}
	wireCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	wireFuncResp struct {
		ID       string         `json:"id,omitempty"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	}
	wireToolSet struct {
		FunctionDeclarations []wireDecl `json:"functionDeclarations"`
	}
	wireDecl struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description,omitempty"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	}
)

// turn is a content being built: its role, its parts, and how many of
// them are function responses (they lead a user turn, before any text).
type turn struct {
	role  string
	parts []wirePart
	lead  int
}

// add appends parts to the turn of role, starting a new turn when the last
// one is of the other role; lead parts go after the turn's lead.
func add(turns []turn, role string, lead bool, parts ...wirePart) []turn {
	if len(parts) == 0 {
		return turns
	}
	if len(turns) == 0 || turns[len(turns)-1].role != role {
		turns = append(turns, turn{role: role})
	}
	t := &turns[len(turns)-1]
	if lead {
		t.parts = slices.Concat(t.parts[:t.lead], parts, t.parts[t.lead:])
		t.lead += len(parts)
	} else {
		t.parts = append(t.parts, parts...)
	}
	return turns
}

// textPart is a text part, none when s is empty.
func textPart(s string) []wirePart {
	if s == "" {
		return nil
	}
	return []wirePart{{Text: s}}
}

// buildBody encodes req as a streamGenerateContent request; see the
// package documentation for the mapping of the conversation.
func buildBody(cfg *Config, req *providers.Request) ([]byte, error) {
	w := wireRequest{GenerationConfig: wireGenConfig{MaxOutputTokens: cfg.MaxTokens, Temperature: cfg.Temperature}}
	if cfg.ThinkingBudget != nil {
		w.GenerationConfig.ThinkingConfig = &wireThinkingConfig{ThinkingBudget: *cfg.ThinkingBudget}
	}
	msgs := req.Messages
	var system []string
	for len(msgs) > 0 && msgs[0].Role == agent.RoleSystem {
		if msgs[0].Text != "" {
			system = append(system, msgs[0].Text)
		}
		msgs = msgs[1:]
	}
	if len(system) > 0 {
		w.SystemInstruction = &wireSystem{Parts: []wirePart{{Text: strings.Join(system, "\n\n")}}}
	}
	names := map[string]string{} // engine call id -> function name
	var turns []turn
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case agent.RoleSystem:
			turns = add(turns, "user", false, textPart(notePrefixed(m.Text))...)
		case agent.RoleUser:
			turns = add(turns, "user", false, textPart(m.Text)...)
		case agent.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				// A result whose call is not in the history (trimmed away)
				// cannot be a functionResponse (it needs the call's
				// name): it becomes a note.
				turns = add(turns, "user", false, textPart(orphanNote(m))...)
				continue
			}
			resp := map[string]any{"result": m.Text}
			if m.IsError {
				resp = map[string]any{"error": m.Text}
			}
			turns = add(turns, "user", true, wirePart{FunctionResponse: &wireFuncResp{ID: m.ToolCallID, Name: name, Response: resp}})
		case agent.RoleAssistant:
			var parts []wirePart
			if m.Text != "" {
				sig, err := textSignature(m.ProviderData)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				parts = append(parts, wirePart{Text: m.Text, ThoughtSignature: sig})
			}
			for _, c := range m.ToolCalls {
				sig, err := callSignature(c.ProviderData)
				if err != nil {
					return nil, fmt.Errorf("message %d, call %q: %w", i, c.ID, err)
				}
				names[c.ID] = c.Name
				parts = append(parts, wirePart{FunctionCall: &wireCall{ID: c.ID, Name: c.Name, Args: argsOf(c.Arguments)}, ThoughtSignature: sig})
			}
			turns = add(turns, "model", false, parts...)
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	// No prefill: a trailing model turn is dropped.
	if n := len(turns); n > 0 && turns[n-1].role == "model" {
		turns = turns[:n-1]
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("the conversation has no user turn")
	}
	if turns[0].role == "model" {
		turns = slices.Insert(turns, 0, turn{role: "user", parts: textPart(OpeningNote)})
	}
	w.Contents = make([]wireTurn, len(turns))
	for i, t := range turns {
		w.Contents[i] = wireTurn{Role: t.role, Parts: t.parts}
	}
	if len(req.Tools) > 0 {
		decls := make([]wireDecl, len(req.Tools))
		for i, t := range req.Tools {
			schema := bytes.TrimSpace(t.Parameters)
			if len(schema) > 0 && !json.Valid(schema) {
				return nil, fmt.Errorf("tool %q: the parameter schema is not JSON", t.Name)
			}
			decls[i] = wireDecl{Name: t.Name, Description: t.Description, ParametersJSONSchema: json.RawMessage(schema)}
		}
		w.Tools = []wireToolSet{{FunctionDeclarations: decls}}
	}
	return json.Marshal(&w)
}

// notePrefixed is a late system message's text as a user note; "" stays
// "".
func notePrefixed(s string) string {
	if s == "" {
		return ""
	}
	return NotePrefix + s
}

// argsOf is a call's args object: its arguments when they are a JSON
// object, else {}.
func argsOf(args json.RawMessage) json.RawMessage {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || a[0] != '{' || !json.Valid(a) {
		return json.RawMessage("{}")
	}
	return a
}

// callSignature is the thought signature a call's provider data holds (a
// JSON string); "" without data.
func callSignature(data []byte) (string, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || string(d) == "null" {
		return "", nil
	}
	var sig string
	if err := json.Unmarshal(d, &sig); err != nil {
		return "", fmt.Errorf("call provider data is not a signature string")
	}
	return sig, nil
}

// textSignature is the signature the response's provider data puts back
// on the text part: the last one of the text parts (the API puts it on the
// last part); "" without data.
func textSignature(data []byte) (string, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || string(d) == "null" {
		return "", nil
	}
	var pd providerData
	if err := json.Unmarshal(d, &pd); err != nil || pd.TextSignatures == nil {
		return "", fmt.Errorf("provider data is not a signature blob")
	}
	if len(pd.TextSignatures) == 0 {
		return "", nil
	}
	return pd.TextSignatures[len(pd.TextSignatures)-1], nil
}

// orphanNote is the user note a tool result without its call becomes.
func orphanNote(m *agent.Message) string {
	what := "result"
	if m.IsError {
		what = "error"
	}
	return fmt.Sprintf("%s%s of an earlier tool call: %s", NotePrefix, what, m.Text)
}
