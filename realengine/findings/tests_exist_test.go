package findings

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every release-matrix row that names its go test names one that exists in
// the module (a renamed or deleted test left the row pointing at nothing,
// and no test noticed).
func TestFindingsNameTestsThatExist(t *testing.T) {
	root := filepath.Join("..", "..")
	var sources strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, f := range Findings {
		if f.Test == "" {
			continue
		}
		named++
		if !strings.Contains(sources.String(), "func "+f.Test+"(t *testing.T)") {
			t.Errorf("finding %s names test %s, which no _test.go file of the module defines", f.ID, f.Test)
		}
	}
	if named == 0 {
		t.Fatal("no finding names its test: nothing checked")
	}
}

// Every saved schedule a doc, a matrix row or a test names is in
// realengine/testdata/reproduce.
func TestNamedSchedulesExist(t *testing.T) {
	root := filepath.Join("..", "..")
	named := regexp.MustCompile(`testdata/reproduce/([A-Za-z0-9_.+-]+\.json)|(?:judgeSchedule|loadSaved|reproduceSaved)\((?:t, )?"([A-Za-z0-9_.+-]+\.json)"`)
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range named.FindAllSubmatch(b, -1) {
			name := string(m[1]) + string(m[2])
			seen++
			if _, err := os.Stat(filepath.Join(root, "realengine", "testdata", "reproduce", name)); err != nil {
				t.Errorf("%s names the saved schedule %s, which realengine/testdata/reproduce does not hold", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no saved schedule named anywhere: the pattern is wrong")
	}
}
