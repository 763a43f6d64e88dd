package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprof/gpuprof/cliview"
	"github.com/gpuprof/gpuprof/internal/jobfixture"
)

// TestShowCO2e: with a configured emission factor show gives a job's CO2e
// beside its kWh, in text and JSON; without one there is no CO2e at all,
// never a guessed factor.
func TestShowCO2e(t *testing.T) {
	t.Setenv("TZ", "UTC")
	loc := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = loc })
	db := showDB(t, jobfixture.Job{ID: "7001", Name: "train", State: "COMPLETED", Gres: "billing=8,cpu=16,gres/gpu=1,mem=128G,node=1",
		GPUs: 1, Minutes: 120, Util: jobfixture.Steady(80), MemGiB: jobfixture.Steady(10)})

	plain, err := runCLI(t, "show", "--db", db, "7001")
	if err != nil {
		t.Fatal(err)
	}
	js, err := runCLI(t, "show", "--db", db, "--json", "7001")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "CO2e") || strings.Contains(js, "co2e") || strings.Contains(js, `"carbon"`) {
		t.Errorf("CO2e without a factor:\n%s\n%s", plain, js)
	}

	cfg := filepath.Join(t.TempDir(), "carbon.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("db = %q\n[carbon]\nfactor = 400\n", db)), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := runCLI(t, "show", "--config", cfg, "7001")
	if err != nil {
		t.Fatal(err)
	}
	js, err = runCLI(t, "show", "--config", cfg, "--json", "7001")
	if err != nil {
		t.Fatal(err)
	}
	var v []cliview.JobJSON
	if err := json.Unmarshal([]byte(js), &v); err != nil || len(v) != 1 {
		t.Fatalf("show --json: %v\n%s", err, js)
	}
	if v[0].CO2eKg == nil || v[0].Carbon != "fixed 400 gCO2e/kWh" || v[0].GPUs[0].EnergyJoules == nil {
		t.Fatalf("show --json: co2e_kg %v, carbon %q", v[0].CO2eKg, v[0].Carbon)
	}
	kwh := *v[0].GPUs[0].EnergyJoules / 3.6e6
	if want := kwh * 0.4; *v[0].CO2eKg < want*0.999 || *v[0].CO2eKg > want*1.001 {
		t.Errorf("co2e_kg = %v, want %v (%v kWh at 400 g/kWh)", *v[0].CO2eKg, want, kwh)
	}
	if want := "(fixed 400 gCO2e/kWh)"; !strings.Contains(text, " CO2e "+want) {
		t.Errorf("show lacks the CO2e line:\n%s", text)
	}
}
