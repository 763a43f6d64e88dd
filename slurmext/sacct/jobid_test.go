package sacct

import (
	"bufio"
	"strings"
	"testing"

	"github.com/gpuprof/gpuprof/slurmext"
)

// TestSlurmIDsOfRealSacct checks the id rules against what a real Slurm
// 22.05 printed (testdata/README.md): every job's SlurmID is sacct's JobID
// column (6_3 for raw id 6, 12+1 for 13, 25_[1-4]), and both it and the
// raw id read back as references to that job.
func TestSlurmIDsOfRealSacct(t *testing.T) {
	for _, file := range []string{"22.05-P-steps-iso.txt", "22.05-P-duplicates.txt"} {
		t.Run(file, func(t *testing.T) {
			// sacct's own JobID for each JobIDRaw, from the first two
			// columns of the job lines (not through the parser under test).
			printed := map[string]string{}
			sc := bufio.NewScanner(openFixture(t, "sacct", file))
			for sc.Scan() {
				f := strings.SplitN(sc.Text(), "|", 3)
				if len(f) < 3 || f[0] == "JobID" || strings.Contains(f[0], ".") || !digits(f[1]) {
					continue
				}
				printed[f[1]] = f[0]
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			recs, lineErrs, _ := readAllSacct(t, NewReader(openFixture(t, "sacct", file), capturedFields(), Options{}))
			if len(lineErrs) > 0 || len(recs) == 0 {
				t.Fatalf("%d records, line errors %v", len(recs), lineErrs)
			}
			seen := map[string]int{}
			for _, r := range recs {
				want, ok := printed[r.JobID]
				if !ok {
					t.Fatalf("raw id %s not among sacct's job lines", r.JobID)
				}
				id := r.SlurmID()
				if id != want {
					t.Errorf("raw id %s: SlurmID() = %q, sacct printed %q", r.JobID, id, want)
				}
				ref, err := slurmext.ParseJobRef(id)
				if err != nil || ref.String() != id {
					t.Errorf("ParseJobRef(%q) = %v, %v", id, ref, err)
				}
				var names bool
				switch {
				case ref.ArrayTaskID >= 0:
					seen["array task"]++
					names = ref.Base == r.ArrayJobID && ref.ArrayTaskID == r.ArrayTaskID
				case ref.ArrayTaskSpec != "":
					seen["pending tasks"]++
					names = ref.Base == r.ArrayJobID && ref.ArrayTaskSpec == r.ArrayTaskSpec
				case ref.HetOffset >= 0:
					seen["het component"]++
					names = ref.Base == r.HetJobID && ref.HetOffset == r.HetOffset
				default:
					names = ref.Base == r.JobID
				}
				if !names {
					t.Errorf("%s does not name raw id %s by its own fields %+v", id, r.JobID, r)
				}
				if raw, err := slurmext.ParseJobRef(r.JobID); err != nil || !raw.Plain() || raw.Base != r.JobID {
					t.Errorf("raw id %s: ParseJobRef = %+v, %v", r.JobID, raw, err)
				}
			}
			kinds := map[string][]string{
				"22.05-P-steps-iso.txt":  {"array task", "het component"},
				"22.05-P-duplicates.txt": {"pending tasks"},
			}
			for _, k := range kinds[file] {
				if seen[k] == 0 {
					t.Errorf("no %s in %s: the test checks less than it says", k, file)
				}
			}
		})
	}
}
