// Package turn is where epochs begin. The turn actor follows the caller's
// speech marks and transcripts, decides when the caller's turn is over and
// hands the utterance to the llm actor under a new epoch, and when the caller
// speaks while the bot is busy (thinking or talking) it interrupts: it sends
// Interrupt{new epoch} to the pacer, tts and llm, in that order, so that the
// pacer has settled what was heard before the llm asks.
//
// # Key presses
//
// The caller's key presses (messages.DTMF, from the transport actor:
// RFC 4733 events or SIP INFO on a SIP call, a carrier's dtmf events) do
// what Config.DTMF says.
//
// In DTMFCollect mode (the default) the keys are the caller's words: they
// accumulate, and the turn ends at the terminator (if one is set; it is part
// of the text), at MaxDigits keys, or when no key came for the inter-digit
// timeout. The llm actor gets it as an ordinary UserTurn whose text spells
// the keys one by one, "The caller pressed 4 2 #", so that a model reads
// digits, not a number. A key while the bot is busy interrupts it first, at
// once (the barge-in delay guards against coughs, and a key is deliberate):
// a caller pressing a key during a prompt expects the prompt to stop. Only
// the first key of a run can find the bot busy, since the interrupt idles
// it.
//
// Speech and keys make one turn of the caller. Keys pressed while the
// caller speaks (or while their speech waits for its final transcript or
// its end-of-turn delay) are held when their collection ends, and the turn
// ends with the speech; speech whose turn would end while keys are still
// being collected waits for the collection. The text is then the words, a
// full stop, and the keys: "My account number is. The caller pressed 1 2 #".
// A key takes back a speculative turn (its text changes), and no turn with
// keys is speculated: its end waits for keys, not for silence. A turn of
// keys alone has its first and last key as its start and end of speech,
// and its last key as its VAD-stop mark, so latencies count from the end of
// the caller's input as they do for speech.
//
// In DTMFBarge mode a key only interrupts the bot while it is busy ("press
// any key to skip"); keys never reach the model. In DTMFIgnore mode keys are
// counted and dropped.
//
// While the call ends (EndCall) keys do nothing: the closing line is not
// cut, and keys being collected are dropped, since no answer would follow.
// Describe shows the state "collecting_digits" and how many keys the turn
// being heard has ("digits_pending"), never which: keys may be a PIN.
package turn
