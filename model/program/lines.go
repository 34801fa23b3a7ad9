package program

import yaml "go.yaml.in/yaml/v3"

// SetLines records in each statement of ns the line it starts on in seq, the
// YAML sequence it was decoded from, so that Validate's errors name it.
func SetLines(ns []Node, seq *yaml.Node) {
	for seq != nil && seq.Kind == yaml.AliasNode {
		seq = seq.Alias
	}
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i := range ns {
		if i >= len(seq.Content) {
			return
		}
		el := seq.Content[i]
		for el.Kind == yaml.AliasNode && el.Alias != nil {
			el = el.Alias
		}
		ns[i].Line = el.Line
		if el.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(el.Content); j += 2 {
			kids := map[string][]Node{"all": ns[i].All, "race": ns[i].Race, "seq": ns[i].Seq, "then": ns[i].Then, "else": ns[i].Else, "do": ns[i].Do}[el.Content[j].Value]
			SetLines(kids, el.Content[j+1])
		}
	}
}
