package report

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/simlab/simlab/internal/testreal"
	"github.com/simlab/simlab/model"
)

// chromium returns Debian's Chromium, installing it with the project's own
// script (scripts/ensure-chromium) when it is missing. SIMLAB_NO_BROWSER=1
// skips the browser test on a machine that cannot have one.
func chromium(t *testing.T) string {
	t.Helper()
	testreal.Need(t, testreal.Browser)
	out, err := exec.Command(filepath.Join("..", "scripts", "ensure-chromium")).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("no Chromium and no apt-get to install it: %s", ee.Stderr)
	}
	if err != nil {
		t.Fatalf("scripts/ensure-chromium: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// pageFacts is what the page shows, measured by the browser's own layout.
type pageFacts struct {
	Title        string   `json:"title"`
	Sections     []string `json:"sections"`
	Story        string   `json:"story"`
	StoryHeight  float64  `json:"storyHeight"`
	Replay       string   `json:"replay"`
	Bars         int      `json:"bars"`
	BarsInside   int      `json:"barsInside"`
	ErrorBars    int      `json:"errorBars"`
	Ticks        []string `json:"ticks"`
	Resources    int      `json:"resources"`
	Scripts      int      `json:"scripts"`
	ExternalRefs int      `json:"externalRefs"`
	Overflow     bool     `json:"overflow"`
}

const measure = `(() => {
  const sec = document.querySelector('section.violation');
  const story = sec.querySelector('pre.story');
  const bars = [...sec.querySelectorAll('.bar')];
  const inside = bars.filter(b => {
    const r = b.getBoundingClientRect(), t = b.parentElement.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= t.left - 0.5 && r.right <= t.right + 0.5;
  });
  return {
    title: document.title,
    sections: [...document.querySelectorAll('section.violation h2')].map(h => h.innerText),
    story: story.innerText, storyHeight: story.getBoundingClientRect().height,
    replay: sec.querySelector('code.replay').innerText,
    bars: bars.length, barsInside: inside.length,
    errorBars: sec.querySelectorAll('.bar.error').length,
    ticks: [...sec.querySelectorAll('.tick')].map(t => t.innerText),
    resources: performance.getEntriesByType('resource').length,
    scripts: document.scripts.length,
    externalRefs: document.querySelectorAll('[src], link[href]').length,
    overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
})()`

// The HTML report opened in a real headless Chromium: the story, the replay
// command and the waterfall of the shrunk counterexample are laid out (every
// bar drawn inside its track), and the page loads nothing but itself.
func TestHTMLReportInAHeadlessBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	rep := checked(t, model.Spec{Scenario: "golden-t5", Variants: []string{"pre-fix-fence"}}, 3, dir)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := HTML(f, NewPage(FromReport("golden-t5 --variant pre-fix-fence", rep))); err != nil {
		t.Fatal(err)
	}
	f.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(filepath.Join(dir, "chromium-profile")),
		chromedp.WindowSize(1280, 900),
		// Nothing but the file system and loopback resolves.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
	}
	// A bound on the browser's start and the page load, not on a verdict:
	// every fact below is read once the page has loaded.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	var mu sync.Mutex
	var requested []string
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	}))
	defer cancelBrowser()
	url := "file://" + page
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	facts, err := chromedp.Run(bctx, chromedp.Evaluate[pageFacts](measure))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(80))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	_ = os.WriteFile(filepath.Join(dir, "report.jpg"), shot, 0o644)
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if u != url {
			t.Errorf("the page requested %s: it must load nothing but itself", u)
		}
	}
	if facts.Title != "simlab check golden-t5 --variant pre-fix-fence" {
		t.Errorf("title %q", facts.Title)
	}
	if len(facts.Sections) == 0 || facts.Sections[0] != "no-start-on-terminal" {
		t.Errorf("sections %v: want no-start-on-terminal first", facts.Sections)
	}
	if !strings.Contains(facts.Story, "no-start-on-terminal violated in wrun_0000") || !strings.Contains(facts.Story, "step_started(fanout0.branch0) → ok") || facts.StoryHeight < 30 {
		t.Errorf("story (height %.0f): %q", facts.StoryHeight, facts.Story)
	}
	if !strings.HasPrefix(facts.Replay, "simlab run --scenario golden-t5 --seed 1 --variant pre-fix-fence") || !strings.Contains(facts.Replay, "simlab replay ") {
		t.Errorf("replay %q", facts.Replay)
	}
	if facts.Bars < 10 || facts.BarsInside != facts.Bars {
		t.Errorf("waterfall: %d bars, %d drawn inside their track", facts.Bars, facts.BarsInside)
	}
	if facts.ErrorBars == 0 {
		t.Errorf("no bar of a refused call is marked as an error")
	}
	if len(facts.Ticks) != 5 || facts.Ticks[0] != "+0s" {
		t.Errorf("time axis %v", facts.Ticks)
	}
	if facts.Resources != 0 || facts.Scripts != 0 || facts.ExternalRefs != 0 {
		t.Errorf("not self-contained: %d resources loaded, %d scripts, %d external references", facts.Resources, facts.Scripts, facts.ExternalRefs)
	}
	if facts.Overflow {
		t.Errorf("the page is wider than a 1280-pixel window")
	}
}
