package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/simlab/simlab/model"
	seedgrammar "github.com/simlab/simlab/model/seeds"
)

// knob is one field of the knobs form: a scenario field as --set names it,
// read from the scenario the form starts from.
type knob struct {
	label string
	key   string // the --set key
	get   func(sc *model.Scenario) string
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

var knobs = []knob{
	{"Branches (fan-out widths)", "workflow.fanouts", func(sc *model.Scenario) string {
		parts := make([]string, len(sc.Workflow.Fanouts))
		for i, n := range sc.Workflow.Fanouts {
			parts[i] = itoa(n)
		}
		return strings.Join(parts, ",")
	}},
	{"Max inline steps", "workflow.max_inline", func(sc *model.Scenario) string { return itoa(sc.Workflow.MaxInline) }},
	{"Runs per seed", "runs", func(sc *model.Scenario) string { return itoa(sc.Runs) }},
	{"Crash rate", "faults.crash", func(sc *model.Scenario) string { return ftoa(sc.Faults.Crash) }},
	{"Stale read rate", "faults.stale_read", func(sc *model.Scenario) string { return ftoa(sc.Faults.StaleRead) }},
	{"Misdelivery rate", "faults.misdeliver", func(sc *model.Scenario) string { return ftoa(sc.Faults.Misdeliver) }},
	{"Body failure rate", "faults.body_failure", func(sc *model.Scenario) string { return ftoa(sc.Faults.BodyFailure) }},
}

const (
	labelScenario = "Scenario"
	labelSeeds    = "Seeds (1..8 or 1,4,9)"
	labelSkew     = "Skew: share of runs on v1"
	labelVariant  = "Variant"
	noVariant     = "none (shipped protocol)"
)

// skewShare is the share of new runs that start on a deployment whose
// consumer is v1: the knob for version skew.
func skewShare(sc *model.Scenario) float64 {
	var v1, total float64
	for _, d := range sc.Deployments {
		total += d.Share
		if d.Consumer == "v1" {
			v1 += d.Share
		}
	}
	if total == 0 {
		return 0
	}
	return v1 / total
}

// skewSets are the --set assignments that make share x of runs start on a
// v1 deployment: the first v1 deployment gets x and the first v2 one the
// rest, adding a v1 deployment (dpl-v1) when there is none.
func skewSets(sc *model.Scenario, x float64) []string {
	v1, v2 := -1, -1
	for i, d := range sc.Deployments {
		if d.Consumer == "v1" && v1 < 0 {
			v1 = i
		}
		if d.Consumer == "v2" && v2 < 0 {
			v2 = i
		}
	}
	var out []string
	if v1 < 0 {
		v1 = len(sc.Deployments)
		out = append(out, fmt.Sprintf("deployments[%d].name=dpl-v1", v1),
			fmt.Sprintf("deployments[%d].producer=v1", v1), fmt.Sprintf("deployments[%d].consumer=v1", v1))
	}
	out = append(out, fmt.Sprintf("deployments[%d].share=%s", v1, ftoa(x)))
	if v2 >= 0 {
		out = append(out, fmt.Sprintf("deployments[%d].share=%s", v2, ftoa(1-x)))
	}
	return out
}

// knobsForm edits a config's knobs in a tview.Form; Run simulates it.
type knobsForm struct {
	*tview.Form
	base   Config
	sc     model.Scenario
	submit func(Config) error
	cancel func()
}

func newKnobsForm(base Config, submit func(Config) error, cancel func()) (*knobsForm, error) {
	sc, err := base.scenario()
	if err != nil {
		return nil, err
	}
	f := &knobsForm{Form: tview.NewForm(), base: base.clone(), sc: sc, submit: submit, cancel: cancel}
	f.SetFieldBackgroundColor(tcell.ColorDarkBlue).SetLabelColor(tcell.ColorAqua)
	f.SetButtonBackgroundColor(tcell.ColorDarkBlue)
	names := model.BuiltinNames()
	if !slices.Contains(names, base.Scenario) {
		names = append(names, base.Scenario)
	}
	f.AddDropDown(labelScenario, names, slices.Index(names, base.Scenario), nil)
	f.AddInputField(labelSeeds, seedRange(base.Seeds), 30, nil, nil)
	for _, k := range knobs {
		f.AddInputField(k.label, k.get(&sc), 30, nil, nil)
	}
	f.AddInputField(labelSkew, ftoa(skewShare(&sc)), 30, nil, nil)
	variants := append([]string{noVariant}, model.VariantNames()...)
	cur := 0
	if len(base.Variants) > 0 {
		cur = max(0, slices.Index(variants, base.Variants[0]))
	}
	f.AddDropDown(labelVariant, variants, cur, nil)
	f.AddButton("Run", func() {
		cfg, err := f.config()
		if err == nil {
			err = f.submit(cfg)
		}
		if err != nil {
			f.SetTitle(" knobs: " + err.Error() + " ")
		}
	})
	f.AddButton("Cancel", cancel)
	f.SetCancelFunc(cancel)
	f.SetBorder(true).SetTitle(" knobs of " + base.Scenario + ": change, then Run (simulates) ").SetTitleAlign(tview.AlignLeft)
	return f, nil
}

// Draw puts a blank line between fields when the form has the rows for
// it, and none when it has not: at 80×24 the Variant field and the Run
// button would otherwise be drawn below the frame, out of reach.
func (f *knobsForm) Draw(screen tcell.Screen) {
	_, _, _, h := f.GetInnerRect()
	padding := 1
	if f.GetFormItemCount()*2+1 > h {
		padding = 0
	}
	f.SetItemPadding(padding)
	f.Form.Draw(screen)
}

func (f *knobsForm) kind() ViewKind { return ViewForm }

func (f *knobsForm) crumb() string { return "knobs" }

func (f *knobsForm) text(label string) string {
	return strings.TrimSpace(f.GetFormItemByLabel(label).(*tview.InputField).GetText())
}

// config turns the form into a Config: the base's --set assignments, then
// one for every knob whose value changed. A different scenario starts over
// from that scenario's own values.
func (f *knobsForm) config() (Config, error) {
	_, scenario := f.GetFormItemByLabel(labelScenario).(*tview.DropDown).GetCurrentOption()
	_, variant := f.GetFormItemByLabel(labelVariant).(*tview.DropDown).GetCurrentOption()
	seeds, err := parseSeeds(f.text(labelSeeds))
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Scenario: scenario, Seeds: seeds}
	from := f.sc
	if scenario == f.base.Scenario {
		cfg.Sets = slices.Clone(f.base.Sets)
	} else if from, err = (Config{Scenario: scenario}).scenario(); err != nil {
		return Config{}, err
	}
	if variant != noVariant {
		cfg.Variants = []string{variant}
	}
	for _, k := range knobs {
		if v := f.text(k.label); v != k.get(&from) {
			cfg.Sets = append(cfg.Sets, k.key+"="+v)
		}
	}
	if v := f.text(labelSkew); v != ftoa(skewShare(&from)) {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || x > 1 {
			return Config{}, fmt.Errorf("%s = %q: want a share between 0 and 1", labelSkew, v)
		}
		cfg.Sets = append(cfg.Sets, skewSets(&from, x)...)
	}
	return cfg, cfg.Check()
}

// seedRange renders seeds as the form and :seeds read them.
func seedRange(seeds []uint64) string { return seedgrammar.Format(seeds) }

// parseSeeds reads seeds in the one grammar of every command (N, A..B, lists
// such as 1..8,42), at most 10000 at once: a session simulates each.
func parseSeeds(s string) ([]uint64, error) {
	list, err := seedgrammar.Parse(s, 10000)
	if err != nil {
		return nil, fmt.Errorf("seeds %w", err)
	}
	return list, nil
}
