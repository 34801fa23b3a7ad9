package model

import (
	"fmt"

	"github.com/simlab/simlab/model/world"
)

// Summary is `simlab run --json`: a contract other tools script against
// (docs/CLI.md). Add fields freely; never rename or remove one.
type Summary struct {
	Seed        uint64           `json:"seed"`
	Scenario    string           `json:"scenario"`
	Variants    []string         `json:"variants"`
	World       string           `json:"world"`
	HistoryHash string           `json:"history_hash"`
	Events      uint64           `json:"events"`
	VirtualNS   int64            `json:"virtual_ns"`
	Drained     bool             `json:"drained"`
	Runs        []RunSummary     `json:"runs"`
	Fanouts     []FanoutSummary  `json:"fanouts"`
	Counts      Counts           `json:"counts"`
	FaultSites  []FaultSiteCount `json:"fault_sites"`
}

// RunSummary is one workflow run.
type RunSummary struct {
	RunID      string `json:"run_id"`
	Status     string `json:"status"`
	Deployment string `json:"deployment"`
	Engine     string `json:"engine"`
	// Prologue is how the run's queued step deliveries started: run_context,
	// runs_get, mixed, or none.
	Prologue string `json:"prologue"`
}

// FanoutSummary is one fan-out of one run.
type FanoutSummary struct {
	RunID           string `json:"run_id"`
	Index           int32  `json:"index"`
	Branches        int32  `json:"branches"`
	Inline          int32  `json:"inline"`
	Queued          int32  `json:"queued"`
	PrologueFetches int32  `json:"prologue_fetches"`
	LazyFetches     int32  `json:"lazy_fetches"`
	LastCompleters  int32  `json:"last_completers"`
	ContinuedBy     string `json:"continued_by"` // consumer, orchestrator or none
}

// FaultSiteCount reports one fault site.
type FaultSiteCount struct {
	Name  string `json:"name"`
	On    bool   `json:"on"`
	Fired int    `json:"fired"`
}

// RunName is the run id shown to people and written into traces.
func RunName(id world.RunID) string { return fmt.Sprintf("wrun_%04d", int32(id)) }

// StepName is a step's name in the workflow code.
func StepName(fanIndex int32, branch int32) string {
	return fmt.Sprintf("fanout%d.branch%d", fanIndex, branch)
}

// Summarize condenses a result into the run contract.
func Summarize(r *Result) Summary {
	h := r.History
	s := Summary{
		Seed:        h.Seed,
		Scenario:    h.Scenario,
		Variants:    append([]string{}, h.Variants...),
		World:       h.Profile,
		HistoryHash: fmt.Sprintf("%016x", h.Hash),
		Events:      h.Events,
		VirtualNS:   int64(h.End),
		Drained:     h.Drained,
		Counts:      r.Counts,
	}
	prologues := make([][3]int, len(h.Runs))
	for i := range h.Deliveries {
		d := &h.Deliveries[i]
		if d.Msg >= 0 && d.Kind == MsgStep {
			prologues[d.Run][d.Prologue]++
		}
	}
	for i, info := range h.Runs {
		p := prologues[i]
		pro := "none"
		switch {
		case p[PrologueRunsGet] > 0 && p[PrologueRunContext] > 0:
			pro = "mixed"
		case p[PrologueRunsGet] > 0:
			pro = PrologueRunsGet.String()
		case p[PrologueRunContext] > 0:
			pro = PrologueRunContext.String()
		}
		s.Runs = append(s.Runs, RunSummary{
			RunID: RunName(info.ID), Status: h.FinalRuns[i].Status.String(),
			Deployment: h.Deployments[info.Deployment].Name, Engine: info.Engine.String(), Prologue: pro,
		})
	}
	for i, f := range h.Fanouts {
		rt := &h.Fanouts[i]
		by := "none"
		if f.Continued {
			by = f.ContinuedBy.String()
		}
		s.Fanouts = append(s.Fanouts, FanoutSummary{
			RunID: RunName(f.Run), Index: f.Index, Branches: f.Branches, Inline: f.Inline, Queued: f.Branches - f.Inline,
			PrologueFetches: rt.PrologueFetches, LazyFetches: rt.LazyFetches, LastCompleters: rt.LastCompleters, ContinuedBy: by,
		})
	}
	for _, site := range h.FaultSites {
		s.FaultSites = append(s.FaultSites, FaultSiteCount{Name: site.Name, On: site.On, Fired: site.Fired})
	}
	return s
}
