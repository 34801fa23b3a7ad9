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
