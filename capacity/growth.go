package capacity

import "github.com/gpuprof/gpuprof/analysis"

// growthModel is the GPU model whose growth a recorded job's demand
// follows at the horizon, by the rule of the months table's per-model
// GPU-hours (analysis.GrowthByModel): the model of the GPUs it held (its
// per-GPU records) when they are of one model; else, for a job that
// held none (pending at the window's end, or without per-GPU records),
// the one model in growth that the GPU type it asked for names
// (matchModel); else "" (the cluster's growth). It reads the record, not
// the replay: the same job grows alike on every cluster a plan tries.
func growthModel(j *analysis.Job, growth map[string]float64) string {
	if len(j.GPUs) > 0 {
		m := j.GPUs[0].Model
		for i := range j.GPUs {
			if j.GPUs[i].Model != m {
				return ""
			}
		}
		return m
	}
	if j.ReqGPUType == "" {
		return ""
	}
	found := ""
	for m := range growth {
		if matchModel(j.ReqGPUType, m, "") {
			if found != "" {
				return ""
			}
			found = m
		}
	}
	return found
}

// jobFactors is the load factor of each of r's jobs: factorOf of its
// model's growth (growthModel) where growth has one, else cluster; nil
// when no job has a model of its own in growth (every job grows by
// cluster).
func (r *replay) jobFactors(growth map[string]float64, factorOf func(g float64) float64, cluster float64) []float64 {
	if len(growth) == 0 {
		return nil
	}
	of := make(map[string]float64, len(growth))
	for m, g := range growth {
		of[m] = factorOf(g)
	}
	var out []float64
	for i, j := range r.ref {
		f, ok := of[growthModel(j, growth)]
		if !ok {
			f = cluster
		}
		if out == nil {
			if f == cluster {
				continue
			}
			out = make([]float64, len(r.jobs))
			for k := range i {
				out[k] = cluster
			}
		}
		out[i] = f
	}
	return out
}
