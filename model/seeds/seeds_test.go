package seeds

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string][]uint64{
		"7": {7}, "1..3": {1, 2, 3}, "4-5": {4, 5}, "4–5": {4, 5}, "1,4,9": {1, 4, 9},
		" 2 .. 2 ": {2}, "1..3,42": {1, 2, 3, 42}, "0": {0},
		"18446744073709551614..18446744073709551615": {1<<64 - 2, 1<<64 - 1},
	} {
		got, err := Parse(in, 10000)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"": "an empty item", "x": `"x" is not a seed`, "-1": `"-1" is not a seed`, "3..1": "3..1 runs backwards",
		"1..20000": "at most 10000", "1,,2": "an empty item", "1..9000,1..2000": "at most 10000",
	} {
		_, err := Parse(in, 10000)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "such as 1..8,42") {
			t.Errorf("Parse(%q) = %v; want an error saying %q and the syntax", in, err, why)
		}
	}
	if got, err := Parse("1..20000", 0); err != nil || len(got) != 20000 {
		t.Errorf("no limit: %d seeds, %v", len(got), err)
	}
}

func TestFormatReadsBack(t *testing.T) {
	for _, seeds := range [][]uint64{{1, 2, 3, 4, 5, 6, 7, 8, 42}, {1, 2}, {5}, {9, 3, 4, 5}, nil} {
		text := Format(seeds)
		if len(seeds) == 0 {
			if text != "" {
				t.Errorf("Format(nil) = %q", text)
			}
			continue
		}
		got, err := Parse(text, 0)
		if err != nil || !slices.Equal(got, seeds) {
			t.Errorf("Parse(Format(%v)) = Parse(%q) = %v, %v", seeds, text, got, err)
		}
	}
	if got := Format([]uint64{1, 2, 3, 4, 5, 6, 7, 8, 42}); got != "1..8,42" {
		t.Errorf("Format = %q, want 1..8,42", got)
	}
}

func TestShardsCoverEverySeedOnce(t *testing.T) {
	all, _ := Parse("1..100", 0)
	seen := map[uint64]int{}
	for i := 0; i < 3; i++ {
		sh, err := ParseShard(strings.Join([]string{string(rune('0' + i)), "3"}, "/"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sh.Select(all) {
			seen[s]++
		}
	}
	for _, s := range all {
		if seen[s] != 1 {
			t.Fatalf("seed %d taken %d times by 3 shards", s, seen[s])
		}
	}
	if sh, err := ParseShard(""); err != nil || len(sh.Select(all)) != 100 {
		t.Errorf(`ParseShard("") = %v, %v: want the whole`, sh, err)
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil || !strings.Contains(err.Error(), "want i/n with 0 ≤ i < n") {
			t.Errorf("ParseShard(%q) = %v", bad, err)
		}
	}
}

// A List streams what Parse and Select list: the same seeds, in the same
// order, for every shard, without holding them.
func TestListStreamsWhatSelectLists(t *testing.T) {
	for _, text := range []string{"1..100", "7", "1..3,42,10..20", "5..5,5..9,0", "3..1000,1,2"} {
		l, err := ParseList(text)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := Parse(text, 0)
		if l.Len() != uint64(len(all)) {
			t.Errorf("%s: Len %d, want %d", text, l.Len(), len(all))
		}
		for n := 1; n <= 7; n++ {
			for i := 0; i < n; i++ {
				sh := Shard{i, n}
				got := slices.Collect(l.Seeds(sh))
				if want := sh.Select(all); !slices.Equal(got, want) {
					t.Errorf("%s shard %d/%d: streamed %v, want %v", text, i, n, got, want)
				}
				if sh.Len(l) != uint64(len(got)) {
					t.Errorf("%s shard %d/%d: Len %d, want %d", text, i, n, sh.Len(l), len(got))
				}
			}
		}
		back, err := ParseList(l.String())
		if err != nil || !slices.Equal(slices.Collect(back.Seeds(Shard{})), all) {
			t.Errorf("ParseList(%q.String() = %q) = %v", text, l.String(), err)
		}
	}
}

// A list of 10^12 seeds, or of every seed there is, is two numbers: its
// first seeds come at once and its length is known.
func TestHugeListsCostNothing(t *testing.T) {
	l := Count(1_000_000_000_000)
	if l.Len() != 1_000_000_000_000 || l.String() != "1..1000000000000" {
		t.Fatalf("Count(1e12): Len %d, %q", l.Len(), l.String())
	}
	var first []uint64
	for s := range l.Seeds(Shard{3, 7}) {
		if first = append(first, s); len(first) == 3 {
			break
		}
	}
	if !slices.Equal(first, []uint64{4, 11, 18}) {
		t.Errorf("shard 3/7 of 1..1e12 starts %v", first)
	}
	every, err := ParseList("0..18446744073709551615")
	if err != nil || every.Len() != 1<<64-1 {
		t.Fatalf("every seed: Len %d, %v", every.Len(), err)
	}
	top, _ := ParseList("18446744073709551610..18446744073709551615")
	if got := slices.Collect(top.Seeds(Shard{1, 2})); !slices.Equal(got, []uint64{1<<64 - 5, 1<<64 - 3, 1<<64 - 1}) {
		t.Errorf("the last seeds, shard 1/2: %v (an overflow would loop or stop early)", got)
	}
	if _, err := Parse("0..18446744073709551615", 10000); err == nil || !strings.Contains(err.Error(), "at most 10000") {
		t.Errorf("Parse with a limit: %v", err)
	}
}
