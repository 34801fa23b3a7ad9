package model

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/simlab/simlab/sim"
)

// span is the backing array of one slice, and where it was found.
type span struct {
	from, to uintptr
	path     string
}

// spans adds the backing array of every slice reachable from v (through
// fields, exported or not, pointers, interfaces, maps and the elements of
// slices that hold pointers) to out, each pointer followed once.
func spans(v reflect.Value, path string, seen map[uintptr]bool, out *[]span) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		spans(v.Elem(), path, seen, out)
	case reflect.Interface:
		if !v.IsNil() {
			spans(v.Elem(), path, seen, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			spans(v.Field(i), path+"."+v.Type().Field(i).Name, seen, out)
		}
	case reflect.Array:
		for i := range v.Len() {
			spans(v.Index(i), fmt.Sprintf("%s[%d]", path, i), seen, out)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			spans(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), seen, out)
		}
	case reflect.Slice:
		if v.Cap() == 0 {
			return
		}
		from := v.Pointer()
		*out = append(*out, span{from, from + uintptr(v.Cap())*v.Type().Elem().Size(), path})
		if pointerIn(v.Type().Elem()) != "" {
			for i := range v.Len() {
				spans(v.Index(i), fmt.Sprintf("%s[%d]", path, i), seen, out)
			}
		}
	}
}

// Run's Result is the caller's to keep while the Runner it ran on runs
// again: no slice in it lies in memory the Runner holds, whichever table
// (a History field added later included).
func TestRunKeepsNoRunnerMemory(t *testing.T) {
	for _, name := range []string{"fanout", "faults", "swarm", "golden-t5", "skew-rollout"} {
		sc, err := Spec{Scenario: name}.Load()
		if err != nil {
			t.Fatal(err)
		}
		r := NewRunner()
		var res *Result
		for seed := range uint64(3) { // the Runner's tables reused, too
			a := sc
			if res, err = r.runKept(&a, sim.NewPCG(seed), Options{Record: true, RecordStream: true, Seed: seed}); err != nil {
				t.Fatal(err)
			}
		}
		var held, kept []span
		spans(reflect.ValueOf(r), "Runner", map[uintptr]bool{}, &held)
		spans(reflect.ValueOf(res), "Result", map[uintptr]bool{}, &kept)
		if len(held) == 0 || len(kept) == 0 {
			t.Fatalf("%s: found %d slices in the Runner and %d in the Result", name, len(held), len(kept))
		}
		for _, k := range kept {
			for _, h := range held {
				if k.from < h.to && h.from < k.to {
					t.Fatalf("%s: %s shares memory with %s", name, k.path, h.path)
				}
			}
		}
	}
}
