package model

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/simlab/simlab/sim"
)

// A Runner's runs are Run's, seed for seed, whatever ran on it before:
// scenarios of different sizes and shapes alternate on one Runner, so every
// table is reused both larger and smaller than the run needs.
func TestRunnerMatchesRun(t *testing.T) {
	var scs []Scenario
	for _, name := range []string{"fanout", "faults", "swarm", "golden-t3", "skew-rollout", "golden-t5", "durabench-256"} {
		sc, err := Spec{Scenario: name}.Load()
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	pff, err := Spec{Scenario: "faults", Variants: []string{"pre-fix-fence"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	scs = append(scs, pff)
	r := NewRunner()
	for seed := uint64(1); seed <= 40; seed++ {
		for i := range scs {
			sc := scs[(int(seed)+i)%len(scs)]
			if sc.Name == "durabench-256" && seed%8 != 0 {
				continue
			}
			for _, opts := range []Options{{Record: true, Seed: seed}, {Seed: seed}, {Record: true, RecordStream: true, Seed: seed}} {
				a, b := sc, sc
				want, err := Run(&a, sim.NewPCG(seed), opts)
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.Run(&b, sim.NewPCG(seed), opts)
				if err != nil {
					t.Fatal(err)
				}
				if path := differs(reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem(), "Result"); path != "" {
					t.Fatalf("%s seed %d %+v: the Runner's run differs from Run's at %s", sc.Name, seed, opts, path)
				}
			}
		}
	}
}

// differs names the first place a and b differ, "" if nowhere; a nil and
// an empty slice are alike (a reused History's empty table keeps its room).
func differs(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path
			}
			return ""
		}
		return differs(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if p := differs(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s (len %d, want %d)", path, b.Len(), a.Len())
		}
		for i := range a.Len() {
			if p := differs(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return path
		}
		for _, k := range a.MapKeys() {
			if p := differs(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); p != "" {
				return p
			}
		}
		return ""
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return path
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return path
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return path
		}
	case reflect.Float32, reflect.Float64:
		if a.Float() != b.Float() {
			return path
		}
	case reflect.String:
		if a.String() != b.String() {
			return path
		}
	case reflect.Interface:
		if a.IsNil() != b.IsNil() {
			return path
		}
		if !a.IsNil() {
			return differs(a.Elem(), b.Elem(), path)
		}
	default:
		panic(fmt.Sprintf("differs: %s: kind %s", path, a.Kind()))
	}
	return ""
}
