package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// wavChunk is one chunk of a hand-built file. size overrides the declared
// size (the body is written as is, then a pad byte if its length is odd).
type wavChunk struct {
	id   string
	body []byte
	size *uint32
}

func u32(v uint32) *uint32 { return &v }

// buildWAV lays out "RIFF" riffSize "WAVE" and the chunks; riffSize nil
// means the true size.
func buildWAV(riffSize *uint32, form string, chunks ...wavChunk) []byte {
	var body bytes.Buffer
	body.WriteString(form)
	for _, c := range chunks {
		body.WriteString(c.id)
		size := uint32(len(c.body))
		if c.size != nil {
			size = *c.size
		}
		_ = binary.Write(&body, binary.LittleEndian, size)
		body.Write(c.body)
		if len(c.body)%2 == 1 {
			body.WriteByte(0)
		}
	}
	var out bytes.Buffer
	out.WriteString("RIFF")
	rs := uint32(body.Len())
	if riffSize != nil {
		rs = *riffSize
	}
	_ = binary.Write(&out, binary.LittleEndian, rs)
	out.Write(body.Bytes())
	return out.Bytes()
}

// fmtPCM is a 16-byte fmt chunk with a consistent block align.
func fmtPCM(tag uint16, channels, rate, bits int) wavChunk {
	return fmtRaw(tag, channels, rate, channels*bits/8, bits)
}

func fmtRaw(tag uint16, channels, rate, blockAlign, bits int) wavChunk {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint16(b[0:], tag)
	binary.LittleEndian.PutUint16(b[2:], uint16(channels))
	binary.LittleEndian.PutUint32(b[4:], uint32(rate))
	binary.LittleEndian.PutUint32(b[8:], uint32(rate*blockAlign))
	binary.LittleEndian.PutUint16(b[12:], uint16(blockAlign))
	binary.LittleEndian.PutUint16(b[14:], uint16(bits))
	return wavChunk{id: "fmt ", body: b}
}

// fmtExtensible is a 40-byte WAVE_FORMAT_EXTENSIBLE fmt chunk whose
// subformat GUID carries sub.
func fmtExtensible(channels, rate, bits int, sub uint32) wavChunk {
	c := fmtPCM(WAVFormatExtensible, channels, rate, bits)
	b := append(c.body, make([]byte, 24)...)
	binary.LittleEndian.PutUint16(b[16:], 22)
	binary.LittleEndian.PutUint16(b[18:], uint16(bits))
	binary.LittleEndian.PutUint32(b[20:], 0x3) // front left and right
	binary.LittleEndian.PutUint32(b[24:], sub)
	copy(b[28:], extensibleGUIDTail)
	return wavChunk{id: "fmt ", body: b}
}

func pcm16(s ...int16) []byte {
	b := make([]byte, 0, 2*len(s))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	return b
}

func dataChunk(b []byte) wavChunk { return wavChunk{id: "data", body: b} }

func TestReadWAV(t *testing.T) {
	list := list17()
	tests := []struct {
		name    string
		file    []byte
		limit   int64
		want    *WAV
		wantErr error
		errText string // a substring the message must carry
	}{
		{
			name: "16-bit mono",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), dataChunk(pcm16(0, 1, -1, 32767, -32768))),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{0, 1, -1, 32767, -32768}, DataBytes: 10},
		},
		{
			// Mutation: taking the left channel only, or summing without
			// dividing, fails here.
			name: "16-bit stereo averaged",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 2, 8000, 16), dataChunk(pcm16(100, 300, -32768, -32768, 32767, 32767, 1000, -1000))),
			want: &WAV{Rate: 8000, Channels: 2, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{200, -32768, 32767, 0}, DataBytes: 16},
		},
		{
			// Mutation: reading 8-bit as signed gives 0x80 -> -32768.
			name: "8-bit unsigned",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 8000, 8), dataChunk([]byte{0x80, 0xff, 0x00, 0x81})),
			want: &WAV{Rate: 8000, Channels: 1, BitsPerSample: 8, Format: WAVFormatPCM, Samples: []int16{0, 127 << 8, -32768, 256}, DataBytes: 4},
		},
		{
			// Mutation: keeping the low 16 bits of 24-bit samples fails here.
			name: "24-bit mono keeps the top 16 bits",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 48000, 24), dataChunk([]byte{0x56, 0x34, 0x12, 0x00, 0x00, 0x80, 0xff, 0xff, 0xff})),
			want: &WAV{Rate: 48000, Channels: 1, BitsPerSample: 24, Format: WAVFormatPCM, Samples: []int16{0x1234, -32768, -1}, DataBytes: 9},
		},
		{
			// The average truncates toward zero: (32767 + -32768) / 2 = 0.
			name: "32-bit stereo",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 2, 24000, 32), dataChunk([]byte{0, 0, 0x00, 0x10, 0, 0, 0x00, 0x30, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0x80})),
			want: &WAV{Rate: 24000, Channels: 2, BitsPerSample: 32, Format: WAVFormatPCM, Samples: []int16{0x2000, 0}, DataBytes: 16},
		},
		{
			name: "extensible with the PCM subformat",
			file: buildWAV(nil, "WAVE", fmtExtensible(2, 16000, 16, 1), dataChunk(pcm16(10, 20))),
			want: &WAV{Rate: 16000, Channels: 2, BitsPerSample: 16, Format: WAVFormatExtensible, Samples: []int16{15}, DataBytes: 4},
		},
		{
			// Mutation: not skipping the pad byte of an odd chunk misreads
			// every chunk after it.
			name: "LIST and odd-sized chunks are skipped with their pad byte",
			file: buildWAV(nil, "WAVE", list, wavChunk{id: "junk", body: []byte{1, 2, 3}}, fmtPCM(1, 1, 16000, 16), list, dataChunk(pcm16(7, 8))),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{7, 8}, DataBytes: 4},
		},
		{
			name: "fmt chunk with extra bytes",
			file: buildWAV(nil, "WAVE", wavChunk{id: "fmt ", body: append(fmtPCM(1, 1, 16000, 16).body, 0, 0, 9)}, dataChunk(pcm16(5))),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{5}, DataBytes: 2},
		},
		{
			name: "a second fmt chunk is ignored",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), fmtPCM(7, 1, 8000, 8), dataChunk(pcm16(5))),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{5}, DataBytes: 2},
		},
		{
			// Mutation: reading to the end of the file regardless of the
			// data size takes the LIST chunk as samples.
			name: "chunks after the data chunk are not samples",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), dataChunk(pcm16(1, 2)), list),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{1, 2}, DataBytes: 4},
		},
		{
			// Mutation: failing on a short data chunk, or not flagging it.
			name: "data size larger than the file: what is there, flagged",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(1, 2, 3), size: u32(1000)}),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{1, 2, 3}, DataBytes: 6, Truncated: true},
		},
		{
			name: "a partial trailing frame is dropped and flagged",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 2, 16000, 16), wavChunk{id: "data", body: pcm16(2, 4, 6), size: u32(6)}),
			want: &WAV{Rate: 16000, Channels: 2, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{3}, DataBytes: 4, Truncated: true},
		},
		{
			// Mutation: taking 0xFFFFFFFF as a size gives Truncated=true.
			name: "streaming placeholder 0xFFFFFFFF reads to the end",
			file: buildWAV(u32(math.MaxUint32), "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(1, 2, 3, 4), size: u32(math.MaxUint32)}),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{1, 2, 3, 4}, DataBytes: 8},
		},
		{
			// Mutation: taking a data size of 0 literally returns no samples.
			name: "size 0 left by a writer that could not seek (RIFF size 36)",
			file: buildWAV(u32(36), "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(9, 8, 7), size: u32(0)}),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{9, 8, 7}, DataBytes: 6},
		},
		{
			name: "size 0 with RIFF size 0",
			file: buildWAV(u32(0), "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(9, 8), size: u32(0)}),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{9, 8}, DataBytes: 4},
		},
		{
			// Mutation: reading every size-0 data chunk to the end of file
			// takes the LIST chunk as samples.
			name: "an empty data chunk followed by chunks inside the RIFF size",
			file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), dataChunk(nil), list),
			want: &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{}, DataBytes: 0},
		},
		{
			// Mutation: a LimitedReader of limit bytes instead of limit+1
			// cannot tell this file from a longer one and refuses it.
			name:  "exactly the limit",
			file:  buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), dataChunk(pcm16(1, 2))),
			limit: 48,
			want:  &WAV{Rate: 16000, Channels: 1, BitsPerSample: 16, Format: WAVFormatPCM, Samples: []int16{1, 2}, DataBytes: 4},
		},
		{
			// Mutation: without the check after the data loop, a data
			// chunk that ends one byte past the limit is accepted.
			name:    "one byte over the limit",
			file:    buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), dataChunk(pcm16(1, 2, 3))),
			limit:   49,
			wantErr: ErrWAVTooLarge,
		},
		{
			name:    "streaming data over the limit",
			file:    buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: make([]byte, 4000), size: u32(math.MaxUint32)}),
			limit:   1000,
			wantErr: ErrWAVTooLarge,
		},
		{
			name:    "a huge chunk before the data is over the limit",
			file:    buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "junk", body: make([]byte, 4000)}, dataChunk(pcm16(1))),
			limit:   1000,
			wantErr: ErrWAVTooLarge,
		},
		{name: "empty file", file: nil, wantErr: ErrWAVNotRIFF},
		{name: "two bytes", file: []byte("RI"), wantErr: ErrWAVNotRIFF},
		{name: "Ogg file", file: []byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00"), wantErr: ErrWAVNotRIFF, errText: `"OggS"`},
		{name: "big-endian RIFX", file: []byte("RIFX\x00\x00\x00\x24WAVE"), wantErr: ErrWAVNotRIFF, errText: "RIFX"},
		{name: "RIFF header cut short", file: []byte("RIFF\x24\x00"), wantErr: ErrWAVMalformed},
		{name: "RIFF AVI", file: buildWAV(nil, "AVI ", fmtPCM(1, 1, 16000, 16)), wantErr: ErrWAVNotWAVE, errText: `"AVI "`},
		{name: "no chunks at all", file: buildWAV(nil, "WAVE"), wantErr: ErrWAVNoFmt},
		{name: "data before fmt", file: buildWAV(nil, "WAVE", dataChunk(pcm16(1)), fmtPCM(1, 1, 16000, 16)), wantErr: ErrWAVNoFmt, errText: "before any fmt"},
		{name: "only a LIST chunk", file: buildWAV(nil, "WAVE", list), wantErr: ErrWAVNoFmt},
		{name: "fmt but no data", file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), list), wantErr: ErrWAVNoData},
		{
			name:    "file ends inside a chunk before the data",
			file:    buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "LIST", body: []byte("INFO"), size: u32(400)}),
			wantErr: ErrWAVNoData,
		},
		{name: "mu-law", file: buildWAV(nil, "WAVE", fmtPCM(7, 1, 8000, 8), dataChunk([]byte{0xff})), wantErr: ErrWAVNotPCM, errText: "format 7 (mu-law)"},
		{name: "A-law", file: buildWAV(nil, "WAVE", fmtPCM(6, 1, 8000, 8), dataChunk([]byte{0xd5})), wantErr: ErrWAVNotPCM, errText: "format 6 (A-law)"},
		{name: "IEEE float", file: buildWAV(nil, "WAVE", fmtPCM(3, 1, 16000, 32), dataChunk(make([]byte, 4))), wantErr: ErrWAVNotPCM, errText: "format 3 (IEEE float)"},
		{name: "extensible float", file: buildWAV(nil, "WAVE", fmtExtensible(1, 16000, 32, 3), dataChunk(make([]byte, 4))), wantErr: ErrWAVNotPCM, errText: "subformat 3 (IEEE float)"},
		{
			name: "extensible with a foreign GUID",
			file: func() []byte {
				c := fmtExtensible(1, 16000, 16, 1)
				c.body[39] ^= 0xff
				return buildWAV(nil, "WAVE", c, dataChunk(pcm16(1)))
			}(),
			wantErr: ErrWAVNotPCM,
			errText: "GUID",
		},
		{
			name:    "extensible without its extension",
			file:    buildWAV(nil, "WAVE", fmtPCM(WAVFormatExtensible, 1, 16000, 16), dataChunk(pcm16(1))),
			wantErr: ErrWAVMalformed,
		},
		{name: "zero channels", file: buildWAV(nil, "WAVE", fmtRaw(1, 0, 16000, 2, 16), dataChunk(pcm16(1))), wantErr: ErrWAVMalformed, errText: "zero channels"},
		{name: "zero rate", file: buildWAV(nil, "WAVE", fmtPCM(1, 1, 0, 16), dataChunk(pcm16(1))), wantErr: ErrWAVMalformed, errText: "sample rate 0"},
		{name: "12 bits", file: buildWAV(nil, "WAVE", fmtRaw(1, 1, 16000, 2, 12), dataChunk(pcm16(1))), wantErr: ErrWAVUnsupported, errText: "12 bits"},
		{name: "zero bits", file: buildWAV(nil, "WAVE", fmtRaw(1, 1, 16000, 0, 0), dataChunk(pcm16(1))), wantErr: ErrWAVUnsupported},
		{name: "three channels", file: buildWAV(nil, "WAVE", fmtPCM(1, 3, 16000, 16), dataChunk(pcm16(1, 2, 3))), wantErr: ErrWAVUnsupported, errText: "3 channels"},
		{name: "wrong block align", file: buildWAV(nil, "WAVE", fmtRaw(1, 2, 16000, 2, 16), dataChunk(pcm16(1, 2))), wantErr: ErrWAVMalformed, errText: "block align"},
		{name: "fmt chunk of 14 bytes", file: buildWAV(nil, "WAVE", wavChunk{id: "fmt ", body: make([]byte, 14)}, dataChunk(pcm16(1))), wantErr: ErrWAVMalformed},
		{
			name:    "file ends inside the fmt chunk",
			file:    buildWAV(nil, "WAVE", wavChunk{id: "fmt ", body: []byte{1, 0, 1, 0}, size: u32(16)}),
			wantErr: ErrWAVMalformed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadWAV(bytes.NewReader(tc.file), tc.limit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("ReadWAV error = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("ReadWAV error %q does not say %q", err, tc.errText)
				}
				if got != nil {
					t.Fatalf("ReadWAV returned %+v with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadWAV: %v", err)
			}
			if !slices.Equal(got.Samples, tc.want.Samples) {
				t.Errorf("Samples = %v, want %v", got.Samples, tc.want.Samples)
			}
			if got.Rate != tc.want.Rate || got.Channels != tc.want.Channels || got.BitsPerSample != tc.want.BitsPerSample ||
				got.Format != tc.want.Format || got.DataBytes != tc.want.DataBytes || got.Truncated != tc.want.Truncated {
				t.Errorf("ReadWAV = rate %d, %d channels, %d bits, format %#x, %d data bytes, truncated %v; want %+v",
					got.Rate, got.Channels, got.BitsPerSample, got.Format, got.DataBytes, got.Truncated, *tc.want)
			}
		})
	}
}

// errAfter yields its bytes, then a read error.
type errAfter struct {
	data []byte
	err  error
}

func (r *errAfter) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadWAVPassesReadErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	file := buildWAV(nil, "WAVE", fmtPCM(1, 1, 16000, 16), list17(), dataChunk(pcm16(1, 2, 3, 4)))
	// Cut the file at every length: a read error there must come back
	// wrapped, never mistaken for the end of the file. Mutation: taking any
	// error in the data chunk as its end returns a truncated WAV here.
	for cut := range len(file) {
		_, err := ReadWAV(&errAfter{data: file[:cut], err: boom}, 0)
		if !errors.Is(err, boom) {
			t.Fatalf("cut at %d: error = %v, want it to wrap %v", cut, err, boom)
		}
	}
}

// list17 is a LIST chunk of 17 bytes: odd, so a pad byte follows it.
func list17() wavChunk { return wavChunk{id: "LIST", body: []byte("INFOISFT\x05\x00\x00\x00brisv")} }

// TestWriteWAVRoundTrip: what WriteWAV writes, ReadWAV reads back as is.
// Mutation: big-endian samples, or a data size of 0 in the header (read as
// an empty data chunk), fail here.
func TestWriteWAVRoundTrip(t *testing.T) {
	samples := make([]int16, 10000) // more than one write buffer
	for i := range samples {
		samples[i] = int16(i*7919 - 30000)
	}
	for rate, dur := range map[int]time.Duration{8000: 1250 * time.Millisecond, 16000: 625 * time.Millisecond, 48000: 208333333} {
		var buf bytes.Buffer
		if err := WriteWAV(&buf, rate, samples); err != nil {
			t.Fatal(err)
		}
		if buf.Len() != 44+2*len(samples) {
			t.Fatalf("file is %d bytes, want %d", buf.Len(), 44+2*len(samples))
		}
		got, err := ReadWAV(&buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rate != rate || got.Channels != 1 || got.BitsPerSample != 16 || got.Truncated || !slices.Equal(got.Samples, samples) {
			t.Fatalf("rate %d: read back %d samples at %d Hz, %d channels, truncated %v", rate, len(got.Samples), got.Rate, got.Channels, got.Truncated)
		}
		if d := got.Duration(); d != dur {
			t.Fatalf("rate %d: Duration = %v, want %v", rate, d, dur)
		}
	}
}

func TestWriteWAVErrors(t *testing.T) {
	if err := WriteWAV(io.Discard, 0, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("rate 0: %v", err)
	}
	if err := WriteWAV(io.Discard, -8000, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative rate: %v", err)
	}
	boom := errors.New("full")
	if err := WriteWAV(failWriter{boom}, 16000, []int16{1}); !errors.Is(err, boom) {
		t.Fatalf("write error: %v", err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// wavSeeds are valid files of each kind and cut or damaged ones.
func wavSeeds() [][]byte {
	var w16 bytes.Buffer
	_ = WriteWAV(&w16, 16000, []int16{0, 100, -100, 32767, -32768, 5})
	valid := [][]byte{
		w16.Bytes(),
		buildWAV(nil, "WAVE", fmtPCM(1, 2, 8000, 16), dataChunk(pcm16(1, 2, 3, 4))),
		buildWAV(nil, "WAVE", fmtPCM(1, 1, 8000, 8), dataChunk([]byte{1, 2, 3})),
		buildWAV(nil, "WAVE", fmtPCM(1, 2, 48000, 24), dataChunk(make([]byte, 12))),
		buildWAV(nil, "WAVE", fmtPCM(1, 1, 24000, 32), dataChunk(make([]byte, 8))),
		buildWAV(nil, "WAVE", fmtExtensible(2, 16000, 16, 1), list17(), dataChunk(pcm16(1, 2))),
		buildWAV(u32(math.MaxUint32), "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(1, 2), size: u32(math.MaxUint32)}),
		buildWAV(u32(36), "WAVE", fmtPCM(1, 1, 16000, 16), wavChunk{id: "data", body: pcm16(1, 2), size: u32(0)}),
		buildWAV(nil, "WAVE", fmtPCM(7, 1, 8000, 8), dataChunk([]byte{0xff})),
	}
	seeds := slices.Clone(valid)
	for _, v := range valid {
		seeds = append(seeds, v[:len(v)-1], v[:len(v)/2], v[:20])
	}
	return seeds
}

// FuzzReadWAV: no input panics, and a file that reads has a consistent
// shape: whole frames, a supported layout, no more data than input.
func FuzzReadWAV(f *testing.F) {
	for _, s := range wavSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ReadWAV(bytes.NewReader(data), 1<<20)
		if err != nil {
			if w != nil {
				t.Fatalf("a WAV with error %v", err)
			}
			return
		}
		frame := int64(w.Channels * w.BitsPerSample / 8)
		switch {
		case w.Channels != 1 && w.Channels != 2:
			t.Fatalf("channels %d", w.Channels)
		case w.BitsPerSample != 8 && w.BitsPerSample != 16 && w.BitsPerSample != 24 && w.BitsPerSample != 32:
			t.Fatalf("bits %d", w.BitsPerSample)
		case w.Rate <= 0:
			t.Fatalf("rate %d", w.Rate)
		case w.Format != WAVFormatPCM && w.Format != WAVFormatExtensible:
			t.Fatalf("format %#x", w.Format)
		case w.DataBytes != int64(len(w.Samples))*frame:
			t.Fatalf("%d data bytes for %d samples of %d-byte frames", w.DataBytes, len(w.Samples), frame)
		case w.DataBytes > int64(len(data))-44:
			t.Fatalf("%d data bytes from a %d-byte file", w.DataBytes, len(data))
		}
	})
}

func BenchmarkReadWAV(b *testing.B) {
	for _, bc := range []struct {
		name     string
		channels int
		rate     int
	}{
		{"16kHz_mono_10s", 1, 16000},
		{"48kHz_stereo_10s", 2, 48000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			file := buildWAV(nil, "WAVE", fmtPCM(1, bc.channels, bc.rate, 16), dataChunk(make([]byte, 10*bc.rate*bc.channels*2)))
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadWAV(bytes.NewReader(file), 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
