package model

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/simlab/simlab/model/internal/strictyaml"
	"github.com/simlab/simlab/model/program"
)

// ProgramFile is a file that holds a workflow program and nothing else:
//
//	program:
//	  - all: [...]
//	  - step: final
//
// (the same statements as a scenario's workflow.program). The fan-out
// engine runs fan-out lists only; model/flow runs any program.
type ProgramFile struct {
	Program []program.Node `yaml:"program"`
}

// ParseProgram reads a program file, strictly: unknown keys, a bad value or
// an invalid program are refused with the line and the field.
func ParseProgram(data []byte) ([]program.Node, error) {
	root, err := strictyaml.Parse(data, "program")
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, errors.New("the file is empty: want `program:` and a list of statements")
	}
	var f ProgramFile
	d := &strictyaml.Decoder{Doc: "program"}
	if err := d.DecodeStruct(root, reflect.ValueOf(&f).Elem(), ""); err != nil {
		return nil, err
	}
	if len(f.Program) == 0 {
		return nil, errors.New("program: want a list of statements")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strictyaml.KeyName(root.Content[i]) == "program" {
			program.SetLines(f.Program, root.Content[i+1])
		}
	}
	if err := program.Validate(f.Program, "program"); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	return f.Program, nil
}
