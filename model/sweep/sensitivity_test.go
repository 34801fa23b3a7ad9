package sweep

import (
	"testing"

	"github.com/simlab/simlab/model"
)

// Each knob moves its own distribution and nothing else.
func TestKnobsMoveOnlyTheirDistribution(t *testing.T) {
	base := model.DefaultScenario()
	for _, k := range Knobs {
		moved := base
		d := k.dist(&moved)
		*d = d.Scaled(2)
		changed := 0
		for _, o := range Knobs {
			if *o.dist(&moved) != *o.dist(&base) {
				changed++
				if o.Name != k.Name {
					t.Errorf("scaling %s moved %s", k.Name, o.Name)
				}
			}
		}
		if changed != 1 {
			t.Errorf("scaling %s ×2 changed %d distributions, want 1", k.Name, changed)
		}
	}
}

// A change from a zero base has no ratio; equal values have none to say.
func TestRelativeChange(t *testing.T) {
	if r := relative(3, 0); r != nil {
		t.Errorf("relative(3, 0) = %v, want none", *r)
	}
	if r := relative(0, 0); r == nil || *r != 0 {
		t.Errorf("relative(0, 0) = %v, want 0", r)
	}
	if r := relative(1.5, 1); r == nil || *r != 0.5 {
		t.Errorf("relative(1.5, 1) = %v, want 0.5", r)
	}
	if _, err := RunSensitivity(model.DefaultScenario(), Options{Branches: []int{4}, Prologues: []string{RunContext}, Seeds: 1}, 1); err == nil {
		t.Error("a change of 1 (a knob scaled to zero) was accepted")
	}
}
