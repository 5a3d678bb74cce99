package messages

import (
	"testing"
	"time"
)

func TestTurnStages(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type st = TurnStage
	d := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	cases := []struct {
		name  string
		marks map[MarkKind]time.Time
		want  []TurnStage
	}{
		{"plain turn", map[MarkKind]time.Time{
			MarkVADStop: ms(0), MarkSTTFinal: ms(310), MarkTurnEnd: ms(330), MarkLLMRequest: ms(331),
			MarkLLMFirstToken: ms(335), MarkTTSFirstAudio: ms(380), MarkFirstAudioOut: ms(400)},
			[]TurnStage{st{"listen", d(310)}, st{"end_of_turn", d(20)}, st{"think", d(5)}, st{"voice", d(45)}, st{"send", d(20)}}},
		{"tool turn", map[MarkKind]time.Time{
			MarkVADStop: ms(0), MarkSTTFinal: ms(300), MarkTurnEnd: ms(320), MarkLLMFirstToken: ms(325),
			MarkToolsDone: ms(330), MarkTTSFirstAudio: ms(400), MarkFirstAudioOut: ms(410)},
			[]TurnStage{st{"listen", d(300)}, st{"end_of_turn", d(20)}, st{"think", d(5)}, st{"tools", d(5)}, st{"voice", d(70)}, st{"send", d(10)}}},
		// Catches clamping to the previous mark dropped: the speculative
		// first token before the turn's end would give think -20 ms.
		{"speculative first token before the turn end", map[MarkKind]time.Time{
			MarkVADStop: ms(0), MarkSTTFinal: ms(300), MarkLLMFirstToken: ms(310), MarkTurnEnd: ms(330),
			MarkTTSFirstAudio: ms(350), MarkFirstAudioOut: ms(360)},
			[]TurnStage{st{"listen", d(300)}, st{"end_of_turn", d(30)}, st{"think", 0}, st{"voice", d(20)}, st{"send", d(10)}}},
		// Catches the missing mark's time lost instead of given to the next.
		{"no stt final (a key turn)", map[MarkKind]time.Time{
			MarkVADStop: ms(0), MarkTurnEnd: ms(50), MarkLLMFirstToken: ms(60), MarkTTSFirstAudio: ms(90), MarkFirstAudioOut: ms(100)},
			[]TurnStage{st{"end_of_turn", d(50)}, st{"think", d(10)}, st{"voice", d(30)}, st{"send", d(10)}}},
		{"no first audio", map[MarkKind]time.Time{MarkVADStop: ms(0), MarkSTTFinal: ms(10)}, nil},
		{"not a user turn", map[MarkKind]time.Time{MarkFirstAudioOut: ms(10)}, nil},
		{"out of order", map[MarkKind]time.Time{MarkVADStop: ms(10), MarkFirstAudioOut: ms(0)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := TurnStages(c.marks)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			var sum time.Duration
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("stage %d: got %v, want %v", i, got[i], c.want[i])
				}
				sum += got[i].D
			}
			if got != nil && sum != c.marks[MarkFirstAudioOut].Sub(c.marks[MarkVADStop]) {
				t.Errorf("stages sum to %v, latency %v", sum, c.marks[MarkFirstAudioOut].Sub(c.marks[MarkVADStop]))
			}
		})
	}
}
