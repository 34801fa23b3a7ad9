package model

import (
	"reflect"
	"testing"

	"github.com/simlab/simlab/model/world"
)

// pointerIn returns the path to the first field of t that holds a pointer
// (a pointer, slice, string, map, interface, func or channel), or "".
func pointerIn(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.String, reflect.Map,
		reflect.Interface, reflect.Func, reflect.Chan:
		return t.String()
	case reflect.Array:
		if t.Len() > 0 {
			return pointerIn(t.Elem())
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if p := pointerIn(t.Field(i).Type); p != "" {
				return t.Field(i).Name + " " + p
			}
		}
	}
	return ""
}

// The tables a run grows with its work (one element per call, delivery,
// message, publish, accepted event, fan-out or proc) hold no pointers: the
// garbage collector then never scans them, and growing one copies it
// without write barriers. A slice or string field in one of them made a
// long recorded run's cost per unit of work grow with its length
// (BenchmarkScale, docs/PERFORMANCE.md: point 4, third pass).
func TestRunTablesHoldNoPointers(t *testing.T) {
	for _, v := range []any{
		Call{}, Delivery{}, Message{}, Publish{}, Accepted{}, Fault{}, Fanout{},
		proc{}, fanRT{}, flight{}, msgRT{}, pendingPublish{},
		world.LoggedEvent{}, world.Step{},
	} {
		if p := pointerIn(reflect.TypeOf(v)); p != "" {
			t.Errorf("%T holds a pointer: %s", v, p)
		}
	}
}
