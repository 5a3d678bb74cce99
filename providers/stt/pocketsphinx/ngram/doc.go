// Package ngram builds the small n-gram language models that bias a
// speech recognizer to an agent's domain: from training sentences (the
// phrases callers say, e.g. the rules provider's Phrases) it counts
// n-grams up to Config.Order (a trigram model by default), smooths them
// with interpolated Kneser-Ney (one absolute discount per order, taken
// from the counts of counts; continuation counts for the lower orders),
// and writes the model in the ARPA text format that sphinxbase reads,
// with the sentence marks <s> and </s> and a backoff weight for every
// context. The pronunciation dictionary of the recognizer (ReadDict) is
// checked against the vocabulary, so a word the recognizer cannot say is
// an error that names it rather than a word silently dropped at load.
//
// It is pure Go and knows no recognizer: the pocketsphinx provider loads
// its output next to the general model and interpolates the two.
package ngram
