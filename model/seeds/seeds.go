package seeds

import (
	"fmt"
	"strconv"
	"strings"
)

// Syntax is what Parse accepts, for error messages and help.
const Syntax = "N, A..B or a list of them such as 1..8,42 (whole numbers from 0 up, A ≤ B)"

// Parse reads a seed list: comma-separated items, each N or a range A..B
// (A-B and A–B are read too, as people and seedList write them). The result
// keeps the written order. limit > 0 bounds how many seeds the list may
// hold, so that a typo like 1..100000000 in an interactive place is refused
// rather than run; 0 means no bound.
func Parse(s string, limit int) ([]uint64, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) error {
		msg := fmt.Sprintf("%q: want %s", s, Syntax)
		if why != "" {
			msg += "; " + why
		}
		return fmt.Errorf("%s", msg)
	}
	var out []uint64
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
				return nil, bad("an empty item")
			}
			return nil, bad(fmt.Sprintf("%q is not a seed", item))
		case isRange && b < a:
			return nil, bad(fmt.Sprintf("%s runs backwards", item))
		case limit > 0 && (b-a >= uint64(limit) || len(out)+int(b-a) >= limit):
			return nil, bad(fmt.Sprintf("at most %d seeds at once", limit))
		}
		for x := a; ; x++ {
			out = append(out, x)
			if x == b {
				break
			}
		}
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
