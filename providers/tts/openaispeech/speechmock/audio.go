package speechmock

import (
	"encoding/binary"
	"hash/fnv"
)

// Rate is the rate of the mock's audio, raw or WAV (OpenAI's).
const Rate = 24000

// DefaultSamplesPerWord is one word's audio: 40 ms at Rate.
const DefaultSamplesPerWord = 960

// WordSample is the value of every sample of word's audio: positive, never
// 0, different for most pairs of words.
func WordSample(word string) int16 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(word))
	return int16(h.Sum32()&0x3FFF) + 1
}

// wordPCM is n samples of WordSample(word), little-endian.
func wordPCM(word string, n int) []byte {
	v := uint16(WordSample(word))
	b := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(b[2*i:], v)
	}
	return b
}

// wavHeader is a streaming WAV header: RIFF and data sizes unknown
// (0xFFFFFFFF), PCM16 mono at Rate; bad makes it 8-bit stereo.
func wavHeader(bad bool) []byte {
	channels, bits := uint16(1), uint16(16)
	if bad {
		channels, bits = 2, 8
	}
	block := channels * bits / 8
	b := make([]byte, 0, 44)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFFF)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, Rate)
	b = binary.LittleEndian.AppendUint32(b, Rate*uint32(block))
	b = binary.LittleEndian.AppendUint16(b, block)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, 0xFFFFFFFF)
	return b
}
