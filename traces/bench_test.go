package traces

import (
	"io"
	"testing"
)

// countingWriter measures the file without keeping it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return io.Discard.Write(p)
}

// BenchmarkExport measures what --trace-out costs on the largest built-in
// scenario: building the spans through the SDK, and writing them as JSON
// Lines, each alone and together.
func BenchmarkExport(b *testing.B) {
	h := history(b, "durabench-256", 1)
	spans := build(b, h, Options{})
	report := func(b *testing.B, w *countingWriter) {
		b.ReportMetric(float64(len(spans))*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		if w != nil && w.n > 0 {
			b.ReportMetric(float64(w.n)/float64(int64(len(spans))*int64(b.N)), "bytes/span")
		}
	}
	b.Run("build+jsonl", func(b *testing.B) {
		b.ReportAllocs()
		w := &countingWriter{}
		for b.Loop() {
			s, err := Build(h, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := WriteJSONL(w, s); err != nil {
				b.Fatal(err)
			}
		}
		report(b, w)
	})
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Build(h, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		report(b, nil)
	})
	b.Run("jsonl", func(b *testing.B) {
		b.ReportAllocs()
		w := &countingWriter{}
		for b.Loop() {
			if err := WriteJSONL(w, spans); err != nil {
				b.Fatal(err)
			}
		}
		report(b, w)
	})
}
