package properties_test

import (
	"fmt"
	"log"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/properties"
	"github.com/simlab/simlab/sim"
)

// Check a recorded history against a property. golden-t5 crashes the
// first delivery of each queued step after its claim; with the pre-fix fence
// the World accepts the redelivery's step_started although the run has
// ended, and no-start-on-terminal proves it with the events involved.
func ExampleCheck() {
	sc, _ := model.Builtin("golden-t5")
	sc.Variants = append(sc.Variants, "pre-fix-fence")
	res, err := model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	p, _ := properties.ByName("no-start-on-terminal")
	vs := properties.Check(res.History, []properties.Property{p})
	fmt.Println(len(vs) > 0, "violations of", p.Name, "in", model.RunName(vs[0].Run))
	fmt.Println("each with its evidence:", len(vs[0].Evidence) > 0)

	// The fixed fence refuses the same start: the property holds.
	sc.Variants = nil
	res, _ = model.Run(&sc, sim.NewPCG(1), model.Options{Record: true, Seed: 1})
	fmt.Println(len(properties.Check(res.History, []properties.Property{p})), "violations after the fix")
	// Output:
	// true violations of no-start-on-terminal in wrun_0000
	// each with its evidence: true
	// 0 violations after the fix
}
