package tui

import (
	"strings"

	"github.com/simlab/simlab/traces"
)

// filter is what `/` typed: plain text matched case-insensitively anywhere
// in a row, or key=value matched exactly against span attributes (then the
// span's resource); a leading ! keeps the rows that do not match, as in k9s.
type filter struct {
	raw    string
	invert bool
	key    string // set for key=value
	value  string
	text   string // lowercased, for plain text
}

func parseFilter(s string) filter {
	f := filter{raw: s}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "!") {
		f.invert = true
		s = strings.TrimSpace(s[1:])
	}
	// A key never has spaces; "a = b" is text, "step.id=3" is a pair.
	if k, v, ok := strings.Cut(s, "="); ok && k != "" && !strings.ContainsAny(k, " \t") {
		f.key, f.value = k, v
		return f
	}
	f.text = strings.ToLower(s)
	return f
}

// active reports whether the filter hides anything.
func (f filter) active() bool { return f.key != "" || f.text != "" }

func (f filter) String() string { return strings.TrimSpace(f.raw) }

// matchSpan applies the filter to a span.
func (f filter) matchSpan(s *traces.Span) bool {
	if !f.active() {
		return true
	}
	var hit bool
	if f.key != "" {
		v, ok := s.Attr(f.key)
		if !ok {
			v, ok = s.ResourceAttr(f.key)
		}
		hit = ok && v == f.value
	} else {
		// What the row shows counts too: its marks (lazy, ~stale, ctx).
		hit = f.contains(s.Name) || f.contains(s.Service) || f.contains(spanMarks(s))
		for _, a := range s.Attrs {
			hit = hit || f.contains(a.Key) || f.contains(a.Value)
		}
	}
	return hit != f.invert
}

// matchFields applies the filter to a row of named values (a run's
// columns, a detail row); key=value compares the value of that name.
func (f filter) matchFields(fields []traces.Attr) bool {
	if !f.active() {
		return true
	}
	hit := false
	for _, kv := range fields {
		if f.key != "" {
			hit = hit || kv.Key == f.key && kv.Value == f.value
		} else {
			hit = hit || f.contains(kv.Value)
		}
	}
	return hit != f.invert
}

func (f filter) contains(s string) bool {
	return f.text != "" && strings.Contains(strings.ToLower(s), f.text)
}
