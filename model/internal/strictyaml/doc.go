// Package strictyaml decodes one YAML document into a Go struct by
// reflection, strictly: unknown keys, duplicate keys, nulls, values of the
// wrong kind, fractional integers and a second document are errors that name
// the line, the dotted field path (workflow.fanouts[2]) and the value, with a
// did-you-mean for a mistyped key. It also resolves `--set key=value` paths
// against the same struct, so a command-line override is checked exactly as
// a file is.
//
// It knows nothing of what it decodes: field names are the structs' yaml
// tags, and the few rules a format adds (a list element's starting value, a
// string field that must hold one value) come in through the Decoder's hooks.
package strictyaml
