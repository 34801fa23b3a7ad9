package traces_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/sim"
	"github.com/simlab/simlab/traces"
)

// Simulate a scenario with recording on, turn its History into spans, and
// write them as OTLP JSON Lines; ExportOTLP would send the same spans to
// Jaeger at http://127.0.0.1:4318.
func ExampleBuild() {
	sc, _ := model.Builtin("golden-t2")
	res, err := model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	spans, err := traces.Build(res.History, traces.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var file bytes.Buffer
	if err := traces.WriteJSONL(&file, spans); err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(spans), "spans in trace", traces.TraceID(res.History, traces.Options{}, 0))
	fmt.Println(bytes.Count(file.Bytes(), []byte("\n")), "line per run")
	// Output:
	// 22 spans in trace d5c190307aa5088a68f7e92118755f21
	// 1 line per run
}
