package main

import (
	"github.com/gpuprof/gpuprof/cliview"
	"time"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/store"
)

// showCarbon is what show says of a job's emissions: nothing without a
// configured factor ([carbon]); else its CO2e beside its kWh, or why it is
// unknown.
type showCarbon struct {
	carbon *analysis.Carbon
	now    time.Time
}

// line is show's energy-and-CO2e line of a job; "" without a factor.
func (s showCarbon) line(v store.JobView, c analysis.Config) string {
	if s.carbon == nil {
		return ""
	}
	j := analysis.FromView(v.SchedView(), v.Profiles)
	kWh, kg, ok := s.carbon.JobCO2e(j, c, s.now)
	if !ok {
		return "CO2e unknown: no energy reading on every GPU, or an hour of the run without a factor (" + cliview.Clean(s.carbon.Source, 200) + ")"
	}
	return "energy " + present.Energy(kWh*3.6e6) + ", " + present.CO2e(kg) + " (" + cliview.Clean(s.carbon.Source, 200) + ")"
}

// setJSON gives each job of show --json its co2e_kg and the factors'
// source; both stay absent without a factor or a known CO2e.
func (s showCarbon) setJSON(out []jobJSON, views []store.JobView, c analysis.Config) {
	if s.carbon == nil {
		return
	}
	for i := range out {
		j := analysis.FromView(views[i].SchedView(), views[i].Profiles)
		out[i].Carbon = s.carbon.Source
		if _, kg, ok := s.carbon.JobCO2e(j, c, s.now); ok {
			out[i].CO2eKg = ptr(kg)
		}
	}
}

// showCarbonOf reads the configured emission factor for show; none when
// the configuration has none (or cannot be read: show reads its jobs
// without it, and the error shows there).
func showCarbonOf(g *globalOptions) (showCarbon, error) {
	cfg, err := g.load()
	if err != nil {
		return showCarbon{}, nil
	}
	carbon, err := carbonOf(cfg.Carbon)
	if err != nil {
		return showCarbon{}, err
	}
	return showCarbon{carbon: carbon, now: time.Now()}, nil
}
