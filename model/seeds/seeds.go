package seeds

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
)

// Syntax is what Parse accepts, for error messages and help.
const Syntax = "N, A..B or a list of them such as 1..8,42 (whole numbers from 0 up, A ≤ B)"

// List is a seed list as written: its ranges in order, never expanded, so
// that --seed-range 1..18446744073709551615 or --seeds 1000000000000 costs
// two numbers, and a check streams its seeds rather than listing them up
// front.
type List struct{ ranges []span }

type span struct{ lo, hi uint64 }

// Count is the list 1..n (n ≥ 1), what --seeds N means.
func Count(n uint64) List { return List{ranges: []span{{1, max(n, 1)}}} }

// ParseList reads a seed list in the one grammar: comma-separated items,
// each N or a range A..B (A-B and A–B are read too, as people and seedList
// write them). It keeps the written order and expands nothing.
func ParseList(s string) (List, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) error {
		msg := fmt.Sprintf("%q: want %s", s, Syntax)
		if why != "" {
			msg += "; " + why
		}
		return fmt.Errorf("%s", msg)
	}
	var l List
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := item, item, false
		for _, sep := range []string{"..", "–", "-"} {
			if a, b, ok := strings.Cut(item, sep); ok {
				lo, hi, isRange = a, b, true
				break
			}
		}
		a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		b, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
		switch {
		case err1 != nil || err2 != nil:
			if item == "" {
				return List{}, bad("an empty item")
			}
			return List{}, bad(fmt.Sprintf("%q is not a seed", item))
		case isRange && b < a:
			return List{}, bad(fmt.Sprintf("%s runs backwards", item))
		}
		l.ranges = append(l.ranges, span{a, b})
	}
	return l, nil
}

// Len is how many seeds the list holds, counting repeats; a list of 2^64
// seeds or more (0..18446744073709551615) says math.MaxUint64.
func (l List) Len() uint64 {
	var n uint64
	for _, r := range l.ranges {
		k := r.hi - r.lo
		if k == math.MaxUint64 || n+k+1 < n {
			return math.MaxUint64
		}
		n += k + 1
	}
	return n
}

// String is the list in the grammar ParseList reads, one item per range
// as written (1..3 stays 1..3, 4 stays 4), so that the same command line
// always names its seeds with the same text.
func (l List) String() string {
	parts := make([]string, len(l.ranges))
	for i, r := range l.ranges {
		if r.lo == r.hi {
			parts[i] = strconv.FormatUint(r.lo, 10)
		} else {
			parts[i] = fmt.Sprintf("%d..%d", r.lo, r.hi)
		}
	}
	return strings.Join(parts, ",")
}

// Seeds yields, in order, the seeds of the list the shard takes (by
// position, as Select does), one at a time: nothing is listed up front.
func (l List) Seeds(sh Shard) iter.Seq[uint64] {
	n, idx := uint64(max(sh.Count, 1)), uint64(max(sh.Index, 0))
	return func(yield func(uint64) bool) {
		var pos uint64 // position of the range's first seed, modulo n
		for _, r := range l.ranges {
			// The range's first seed the shard takes, as an offset.
			if off := (idx + n - pos) % n; r.hi-r.lo >= off {
				for x := r.lo + off; ; x += n {
					if !yield(x) {
						return
					}
					if r.hi-x < n {
						break
					}
				}
			}
			pos = (pos + (r.hi-r.lo)%n + 1) % n
		}
	}
}

// Len is how many seeds of l the shard takes (saturating, as List.Len).
func (sh Shard) Len(l List) uint64 {
	total, n, idx := l.Len(), uint64(max(sh.Count, 1)), uint64(max(sh.Index, 0))
	if total <= idx {
		return 0
	}
	return (total-1-idx)/n + 1
}

// Parse reads a seed list (ParseList) and lists its seeds. limit > 0
// bounds how many seeds the list may hold, so that a typo like
// 1..100000000 in an interactive place is refused rather than run; 0 means
// no bound, for callers that know the list is small.
func Parse(s string, limit int) ([]uint64, error) {
	l, err := ParseList(s)
	if err != nil {
		return nil, err
	}
	if limit > 0 && l.Len() > uint64(limit) {
		return nil, fmt.Errorf("%q: want %s; at most %d seeds at once", strings.TrimSpace(s), Syntax, limit)
	}
	var out []uint64
	for x := range l.Seeds(Shard{}) {
		out = append(out, x)
	}
	return out, nil
}

// Format writes seeds back in the grammar Parse reads: runs of three or
// more consecutive seeds as A..B, the rest one by one (1..8,42).
func Format(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, fmt.Sprintf("%d..%d", seeds[i], seeds[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.FormatUint(seeds[k], 10))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Shard is one part of a sweep split n ways: shard Index of Count takes
// every Count-th item from position Index. The zero Shard is "everything".
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard reads i/n with 0 ≤ i < n; "" is the whole, Shard{0, 1}.
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{0, 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("%q: want i/n with 0 ≤ i < n, for example 0/4", s)
	}
	return Shard{i, n}, nil
}

// Takes reports whether the shard takes the item at position k.
func (sh Shard) Takes(k int) bool { return sh.Count <= 1 || k%sh.Count == sh.Index }

// Select keeps the seeds at the shard's positions, so the n shards of one
// list together hold every seed exactly once.
func (sh Shard) Select(seeds []uint64) []uint64 {
	var out []uint64
	for k, s := range seeds {
		if sh.Takes(k) {
			out = append(out, s)
		}
	}
	return out
}
