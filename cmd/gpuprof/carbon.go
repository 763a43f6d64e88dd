package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/gpuprof/gpuprof/analysis"
	"github.com/gpuprof/gpuprof/config"
)

// carbonOf reads the configured emission factor ([carbon]): a fixed
// gCO2e/kWh, the hourly factors of a CSV file (the fixed one for hours it
// lacks), or none: nil, and
// then no output has CO2e (never a guessed default).
func carbonOf(c config.CarbonConfig) (*analysis.Carbon, error) {
	switch {
	case c.FactorsCSV != "":
		f, err := os.Open(c.FactorsCSV)
		if err != nil {
			return nil, fmt.Errorf("carbon.factors_csv: %w", err)
		}
		defer f.Close()
		hourly, err := analysis.ParseCarbonCSV(f)
		if err != nil {
			return nil, fmt.Errorf("carbon.factors_csv %s: %w", c.FactorsCSV, err)
		}
		src := "hourly factors from " + c.FactorsCSV
		if c.Factor > 0 {
			src += ", else fixed " + strconv.FormatFloat(c.Factor, 'f', -1, 64) + " gCO2e/kWh"
		}
		return &analysis.Carbon{Hourly: hourly, Fixed: c.Factor, Source: src}, nil
	case c.Factor > 0:
		return &analysis.Carbon{Fixed: c.Factor,
			Source: "fixed " + strconv.FormatFloat(c.Factor, 'f', -1, 64) + " gCO2e/kWh"}, nil
	}
	return nil, nil
}
