package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/brisvox/brisvox/agent"
)

// SaveNoteTool is the name the model calls save_note by.
const SaveNoteTool = "save_note"

// MaxNoteRunes bounds a note, in characters (what the schema's maxLength
// counts).
const MaxNoteRunes = 500

// Refusals of save_note.
var (
	// ErrNoIdempotencyKey: the call came without CallInfo.IdempotencyKey,
	// so a redelivery could not be told from a new note. The engine sets
	// the key on every SideEffect call; a caller of RunCall must too.
	ErrNoIdempotencyKey = errors.New("no idempotency key")
	// ErrKeyReused: a key already saved a note with other text. A
	// redelivery carries the same arguments, so this is a caller bug or
	// two calls whose key digests collide; either way nothing is saved.
	ErrKeyReused = errors.New("idempotency key already used for another note")
	// ErrInvalidNote: the text is empty or longer than MaxNoteRunes.
	ErrInvalidNote = errors.New("invalid note")
)

// Note is one saved note.
type Note struct {
	ID   string
	Text string
}

// NoteStore keeps notes in memory, keyed by the idempotency key of the call
// that saved them. It is safe for concurrent use: one store serves every
// call of the application. It is unbounded; a real application keeps its
// notes in its database, with a unique constraint on the key doing what
// Save does here.
type NoteStore struct {
	mu    sync.Mutex
	byKey map[agent.IdempotencyKey]int // idempotency key -> index in notes
	notes []Note
}

// NewNoteStore makes an empty store.
func NewNoteStore() *NoteStore {
	return &NoteStore{byKey: make(map[agent.IdempotencyKey]int)}
}

// Save records text under key and returns its note. A second Save with the
// same key and text returns the first note and saved false; with other text
// it returns an error wrapping ErrKeyReused. The zero key is refused
// (ErrNoIdempotencyKey): it would make every call look like one. The store
// is keyed on the whole key, not its digest: two keys may share a digest.
func (s *NoteStore) Save(key agent.IdempotencyKey, text string) (note Note, saved bool, err error) {
	if key == (agent.IdempotencyKey{}) {
		return Note{}, false, ErrNoIdempotencyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byKey[key]; ok {
		if s.notes[i].Text != text {
			return Note{}, false, ErrKeyReused
		}
		return s.notes[i], false, nil
	}
	if s.byKey == nil {
		s.byKey = make(map[agent.IdempotencyKey]int)
	}
	note = Note{ID: "note-" + strconv.Itoa(len(s.notes)+1), Text: text}
	s.byKey[key] = len(s.notes)
	s.notes = append(s.notes, note)
	return note, true, nil
}

// Notes returns the saved notes in the order they were saved.
func (s *NoteStore) Notes() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Note(nil), s.notes...)
}

// saveNoteParameters: maxLength is MaxNoteRunes (a test holds them equal).
const saveNoteParameters = `{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":500,` +
	`"description":"The note, as the caller wants it kept."}},` +
	`"required":["text"],"additionalProperties":false}`

// SaveNote returns the save_note tool: save_note(text) saves a note in store
// and answers {"note_id": id}. It is SideEffect and keyed on
// CallInfo.IdempotencyKey: a redelivered call gets the same id and saves
// nothing.
func SaveNote(store *NoteStore) agent.Tool {
	spec := agent.NewSpec(SaveNoteTool,
		"Saves a note the caller dictates, for the staff to read later. Read the note back to the caller before saving it.",
		agent.SideEffect)
	spec.Parameters = json.RawMessage(saveNoteParameters)
	return &saveNote{spec: spec, store: store}
}

type saveNote struct {
	spec  agent.Spec
	store *NoteStore
}

var _ agent.Tool = (*saveNote)(nil)

func (t *saveNote) Spec() agent.Spec { return t.spec }

func (t *saveNote) Call(ctx context.Context, args json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return agent.Output{}, fmt.Errorf("the arguments are not {\"text\": string}: %v", err)
	}
	// The schema checks this already; a tool called directly checks it too.
	if n := utf8.RuneCountInString(a.Text); n == 0 || n > MaxNoteRunes {
		return agent.Output{}, fmt.Errorf("%w: %d characters, want 1 to %d: shorten the note or ask the caller what to save", ErrInvalidNote, n, MaxNoteRunes)
	}
	// Nothing is saved for a call already given up on.
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	note, _, err := t.store.Save(call.IdempotencyKey, a.Text)
	if err != nil {
		return agent.Output{}, fmt.Errorf("%w: the note was not saved: tell the caller", err)
	}
	out, err := json.Marshal(struct {
		NoteID string `json:"note_id"`
	}{note.ID})
	if err != nil {
		return agent.Output{}, err
	}
	return agent.Output{Content: string(out)}, nil
}
