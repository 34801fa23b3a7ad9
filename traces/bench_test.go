package traces

import (
	"fmt"
	"io"
	"testing"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
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

// BenchmarkBuildInlineChain builds the spans of one run of n sequential
// one-branch fan-outs, all inline: each inline step's invocation is n hops
// up its chain of inline parents at the end, so resolving each one by
// walking the chain would cost n² in all. It reports the time per fan-out,
// which stays flat when the cost is linear.
func BenchmarkBuildInlineChain(b *testing.B) {
	for _, n := range []int{100, 1000, 4000} {
		b.Run(fmt.Sprintf("fanouts=%d", n), func(b *testing.B) {
			sc := model.DefaultScenario()
			sc.Workflow.Fanouts = make([]int, n)
			for i := range sc.Workflow.Fanouts {
				sc.Workflow.Fanouts[i] = 1
			}
			sc.Limits.MaxTime = 0
			r, err := model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(r.History, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/fanout")
		})
	}
}
