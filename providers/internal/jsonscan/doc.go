// Package jsonscan reads JSON in place: Scanner is a pull scanner that
// checks the whole grammar, lets a decoder walk the objects it knows and
// skip the rest, and allocates nothing but the strings asked for. The
// providers' hot decoders (the LLM adapters' streamed chunks) use it
// instead of encoding/json, each checked against an encoding/json oracle
// by a differential fuzz target.
package jsonscan
