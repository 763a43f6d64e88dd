package cliview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/history"
	"github.com/gpuprof/gpuprof/internal/present"
	"github.com/gpuprof/gpuprof/slurmext"
	"github.com/gpuprof/gpuprof/termtext"
)

// ImportWindow says on w which window of which cluster a live import asks
// sacct for.
func ImportWindow(w io.Writer, cluster string, l history.Live) {
	fmt.Fprintf(w, "importing jobs of cluster %s from %s to %s\n", cluster,
		l.From.Format(time.RFC3339), l.To.Format(time.RFC3339))
}

// ImportProgress is an import's progress line on a terminal w (jobs read,
// jobs/s), rewritten in place after each batch (history.Options.Progress).
func ImportProgress(w io.Writer) func(read int, elapsed time.Duration) {
	return func(read int, el time.Duration) {
		fmt.Fprintf(w, "\r%d jobs  %.0f jobs/s ", read, float64(read)/max(el.Seconds(), 1e-3))
	}
}

// ImportResult prints what an import did: the records skipped and the
// notes on stderr; the counts, the jobs filed under cluster (what chose it
// said), where GPU counts came from and the duplicate ids on stdout.
func ImportResult(stdout, stderr io.Writer, res history.Result, cluster history.ImportCluster) {
	for _, p := range res.Problems {
		fmt.Fprintf(stderr, "skipped: %v\n", p)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	if more := res.NoteCount - len(res.Notes); more > 0 {
		fmt.Fprintf(stderr, "… and %d more notes\n", more)
	}
	fmt.Fprintf(stdout, "%d jobs read: %d new, %d updated, %d unchanged; %d skipped; %.0f jobs/s\n",
		res.Read, res.Inserted, res.Updated, res.Unchanged, res.Skipped,
		float64(res.Read)/max(res.Took.Seconds(), 1e-3))
	if res.Unnamed > 0 {
		fmt.Fprintf(stdout, "%d %s no cluster (no Cluster column): imported as cluster %s (%s)\n",
			res.Unnamed, present.Plural(res.Unnamed, "job names", "jobs name"), termtext.Short(cluster.Name, 64), importOrigin(cluster))
	}
	if line := gpuSourcesLine(res.GPUsFrom); line != "" {
		fmt.Fprintln(stdout, line)
	}
	if res.TimeOrder > 0 {
		fmt.Fprintf(stdout, "%d %s refused for times in an impossible order (Start before Submit, or End before Start, by more than %s; %s): not imported, never read as a wait or run of 0\n",
			res.TimeOrder, present.Plural(res.TimeOrder, "job", "jobs"), slurmext.TimeOrderSkew, idList(res.TimeOrder, res.TimeOrderIDs))
	}
	if res.CutLines > 0 {
		fmt.Fprintf(stdout, "%d last %s refused as cut short (the text ends inside it; %s): its cluster name appears on no other line\n",
			res.CutLines, present.Plural(res.CutLines, "line", "lines"), idList(res.CutLines, res.CutIDs))
	}
	if res.Conflicts > 0 {
		ids := make([]string, len(res.ConflictIDs))
		for i, id := range res.ConflictIDs {
			ids[i] = termtext.Short(id, 64)
		}
		list := strings.Join(ids, ", ")
		if res.Conflicts > len(ids) {
			list = "first: " + list
		}
		fmt.Fprintf(stdout, "%d job %s more than once with different content (%s); the one kept is decided as docs/sacct.md says (\"Duplicate job ids\")\n",
			res.Conflicts, present.Plural(res.Conflicts, "id appears", "ids appear"), list)
	}
}

// importOrigin says what chose an import's cluster and, unless it was
// --cluster, how to choose another.
func importOrigin(c history.ImportCluster) string {
	const another = "; --cluster NAME imports them as another"
	switch c.Origin {
	case history.ClusterFromFlag:
		return "--cluster"
	case history.ClusterFromSetting:
		return "the cluster setting" + another
	case history.ClusterFromSlurmConf:
		return "ClusterName of " + termtext.Short(c.SlurmConf, 200) + another
	case history.ClusterFromSection:
		return "the one [clusters." + c.Name + "] section of the configuration" + another
	}
	return "nothing names this host's cluster" + another
}

// gpuSourcesLine says where the imported jobs' GPU counts came from
// (slurmext.RequestedGPUs): "" when no job was read.
func gpuSourcesLine(s history.GPUSources) string {
	var parts []string
	jobs := " jobs"
	if s.ReqTRES > 0 {
		parts = append(parts, fmt.Sprintf("from ReqTRES for %d%s", s.ReqTRES, present.Plural(s.ReqTRES, " job", jobs)))
		jobs = ""
	}
	if s.AllocTRES > 0 {
		parts = append(parts, fmt.Sprintf("from AllocTRES for %d%s (no ReqTRES)", s.AllocTRES, present.Plural(s.AllocTRES, " job", jobs)))
		jobs = ""
	}
	if s.Neither > 0 {
		parts = append(parts, fmt.Sprintf("from neither column for %d%s (no GPU counted)", s.Neither, present.Plural(s.Neither, " job", jobs)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "GPUs and shards read " + strings.Join(parts, ", ")
}

// idList names the first job ids of n: "job 5", "first: 5, 6".
func idList(n int, ids []string) string {
	short := make([]string, len(ids))
	for i, id := range ids {
		short[i] = termtext.Short(id, 64)
	}
	list := strings.Join(short, ", ")
	if n > len(ids) {
		return "first: " + list
	}
	return present.Plural(len(ids), "job ", "jobs ") + list
}
