package sacct

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprof/gpuprof/slurmext"
)

// MaxJSONValue bounds the JSON text of one job (or one other top-level
// value) of `sacct --json`. A job with thousands of steps takes a few MiB;
// the bound only stops one hostile or corrupt value from exhausting memory.
const MaxJSONValue = 64 << 20

// ParseJSON reads the output of `sacct --json` (Slurm 22.05, OpenAPI
// dbv0.0.38, through the data_parser v0.0.39–v0.0.43 of 23.02–25.05) and
// returns one record per job, with Source "sacct". cluster is used for jobs
// that do not name theirs.
//
// The document is decoded one job at a time (json.Decoder's token API), so a
// file of months of history is never held in memory whole; each job's text
// is bounded by MaxJSONValue. Of the steps, Slurm's GPU readings and
// the CPU time and host memory peak are kept, folded into the job (see
// gpuUsage and hostUsage; the job's Usage as the text reader makes it, with
// the request from tres.requested or required). The layouts that
// differ between versions are all accepted:
//
//	state.current         "COMPLETED" (≤23.02) or ["COMPLETED"] (23.11+);
//	                      of an array, the first base state is kept
//	time.limit            minutes, null when unset (22.05), or
//	                      {"set","infinite","number"} (23.02+)
//	exit_code             {"status":"SIGNALED","return_code":null,
//	                      "signal":{"signal_id":9}} (22.05),
//	                      {"status":"SUCCESS","return_code":0} (23.02), or
//	                      {"status":["SIGNALED"],"return_code":{…},
//	                      "signal":{"id":{…}}} (23.11+)
//	array.task_id         number/null (22.05) or {"set",…} (23.02+)
//	array.task            tasks not split off yet: a hex bitmap "0x1E"
//	                      (bits 1-4), kept as ArrayTaskSpec "1-4"
//	het.job_offset        number/null or {"set",…}
//	tres.requested/allocated  [{type,name,count}], turned into the text form
//	                      ReqTRES/AllocTRES have in sacct -P ("billing=1,
//	                      cpu=4,gres/gpu=2,mem=16000M,node=1": sorted, mem
//	                      in M, unset counts left out)
//
// Like sacct -P -D, the output lists every run of a requeued job (State
// REQUEUED, then the final one) under the same job id, in order: the last
// record of a job id is its latest run.
//
// What JSON lacks: the uid (UID is -1) and the canceller's uid (the JSON
// names the user; CancelledBy is -1). Slurm 22.05's dbv0.0.38 reports the
// exit code of a job that exited non-zero as SUCCESS/0 (sacct -P shows it
// correctly): prefer the text import there.
//
// problems holds one error per job skipped (no valid job_id) or per
// malformed value (the field keeps its unknown value), and the "errors"
// sacct itself reported; all wrap ErrMalformed. err is non-nil when the
// document cannot be read on (invalid JSON, a value over the bound, a read
// error); the records decoded before that point are returned with it, so a
// truncated file still yields its complete jobs.
func ParseJSON(r io.Reader, cluster string) (records []slurmext.JobRecord, problems []error, err error) {
	return parseJSON(r, cluster, MaxJSONValue)
}

// parseJSON is ParseJSON with the bound on one value as a
// parameter, so that tests can reach it with small input.
func parseJSON(r io.Reader, cluster string, limit int64) (records []slurmext.JobRecord, problems []error, err error) {
	// A byte order mark (a file saved by a Windows tool) is not JSON.
	br := bufio.NewReader(r)
	if head, err := br.Peek(len(utf8BOM)); err == nil && string(head) == utf8BOM {
		_, _ = br.Discard(len(utf8BOM))
	}
	lr := &valueLimitReader{r: br, limit: limit}
	dec := json.NewDecoder(lr)
	fail := func(what string, err error) ([]slurmext.JobRecord, []error, error) {
		if errors.Is(err, slurmext.ErrTooLarge) {
			return records, problems, fmt.Errorf("sacct JSON: %s: %w", what, err)
		}
		return records, problems, fmt.Errorf("sacct JSON: %s: %w: %w", what, ErrMalformed, escapedError{err})
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail("document", err)
	}
	jobsSeen := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("key", err)
		}
		key, _ := tok.(string)
		lr.reset()
		switch key {
		case "jobs":
			if err := expectDelim(dec, '['); err != nil {
				return fail("jobs", err)
			}
			for dec.More() {
				lr.reset()
				var j sjJob
				var typeErr *json.UnmarshalTypeError
				if err := dec.Decode(&j); errors.As(err, &typeErr) {
					// The decoder read the whole job and filled what fit;
					// one field of an unexpected type costs only that field.
					problems = append(problems, fmt.Errorf("job %d in the list: %s has JSON type %s: %w",
						jobsSeen+1, slurmext.QuoteShort(typeErr.Field), typeErr.Value, ErrMalformed))
				} else if err != nil {
					return fail(fmt.Sprintf("job %d in the list", jobsSeen+1), err)
				}
				jobsSeen++
				rec, notes, ok := j.record(cluster)
				for _, n := range notes {
					problems = append(problems, fmt.Errorf("job %s: %s: %w", slurmext.QuoteShort(rec.JobID), n, ErrMalformed))
				}
				if ok {
					records = append(records, rec)
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return fail("jobs", err)
			}
		case "errors":
			var errs []sjError
			if err := dec.Decode(&errs); err != nil {
				return fail("errors", err)
			}
			for _, e := range errs {
				problems = append(problems, fmt.Errorf("sacct reported: %s: %w", e.text(), ErrMalformed))
			}
		default:
			if err := skipValue(dec); err != nil {
				return fail(fmt.Sprintf("value of %s", slurmext.QuoteShort(key)), err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail("document", err)
	}
	return records, problems, nil
}

// escapedError quotes the message of an error that may quote its input (a
// JSON syntax error names the offending character), keeping it for
// errors.Is and errors.As.
type escapedError struct{ err error }

func (e escapedError) Error() string { return slurmext.QuoteShort(e.err.Error()) }

func (e escapedError) Unwrap() error { return e.err }

// expectDelim reads one token and checks that it is the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("want %q, got %s", rune(d), slurmext.QuoteShort(fmt.Sprint(tok)))
	}
	return nil
}

// skipValue reads past one value of any kind without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// valueLimitReader fails once more than limit bytes have been read since the
// last reset; the decoder reads ahead, so the bound is approximate (limit
// plus one buffer), which is enough to stop unbounded growth.
type valueLimitReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (l *valueLimitReader) reset() { l.n = 0 }

func (l *valueLimitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, fmt.Errorf("a value longer than %d bytes: %w", l.limit, slurmext.ErrTooLarge)
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// sjError is one entry of the "errors" array.
type sjError struct {
	Error       string `json:"error"`
	Description string `json:"description"`
}

func (e sjError) text() string {
	msg := strings.TrimSpace(strings.Join([]string{e.Error, e.Description}, " "))
	if msg == "" {
		msg = "unspecified error"
	}
	return slurmext.QuoteShort(msg)
}

// sjNum is a number in any of the shapes sacct --json uses: a plain number,
// null, a numeric string, or {"set":…, "infinite":…, "number":…}.
type sjNum struct {
	Set      bool
	Infinite bool
	Number   int64
	Bad      string // the value, when it is none of these
}

func (n *sjNum) UnmarshalJSON(b []byte) error {
	*n = sjNum{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '{':
		var o struct {
			Set      *bool       `json:"set"`
			Infinite bool        `json:"infinite"`
			Number   json.Number `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			n.Bad = string(b)
			return nil
		}
		n.Infinite = o.Infinite
		if o.Set != nil && !*o.Set || o.Infinite {
			return nil
		}
		return n.setNumber(string(o.Number))
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			n.Bad = string(b)
			return nil
		}
		return n.setNumber(s)
	default:
		return n.setNumber(string(b))
	}
}

func (n *sjNum) setNumber(s string) error {
	if s == "" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		n.Bad = s
		return nil
	}
	n.Set, n.Number = true, v
	return nil
}

// sjStrings is a string or an array of strings (state.current). It never
// fails to decode: a custom decoder's error would abandon the rest of the
// job, so a value of another shape sets Bad instead.
type sjStrings struct {
	List []string
	Bad  bool
}

func (s *sjStrings) UnmarshalJSON(b []byte) error {
	*s = sjStrings{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
	case b[0] == '[':
		s.Bad = json.Unmarshal(b, &s.List) != nil
	default:
		var v string
		if json.Unmarshal(b, &v) != nil {
			s.Bad = true
		} else {
			s.List = []string{v}
		}
	}
	return nil
}

// sjExit is exit_code / derived_exit_code in any version. Its "status"
// ("SUCCESS", "SIGNALED", …) says no more than return_code and signal do.
type sjExit struct {
	ReturnCode sjNum `json:"return_code"`
	Signal     struct {
		SignalID sjNum  `json:"signal_id"` // 22.05, 23.02
		ID       sjNum  `json:"id"`        // 23.11+
		Name     string `json:"name"`
	} `json:"signal"`
}

// sjTRES is one item of tres.requested / tres.allocated.
type sjTRES struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Count sjNum  `json:"count"`
}

// sjJob holds the fields of a sacct --json job that a slurmext.JobRecord needs; the
// decoder reads past the rest (steps included) without keeping them.
type sjJob struct {
	JobID           sjNum  `json:"job_id"`
	Name            string `json:"name"`
	User            string `json:"user"`
	Account         string `json:"account"`
	Partition       string `json:"partition"`
	QOS             string `json:"qos"`
	Cluster         string `json:"cluster"`
	Nodes           string `json:"nodes"`
	AllocationNodes sjNum  `json:"allocation_nodes"`
	RestartCnt      sjNum  `json:"restart_cnt"`
	Array           struct {
		JobID  sjNum  `json:"job_id"`
		TaskID sjNum  `json:"task_id"`
		Task   string `json:"task"`
	} `json:"array"`
	Het struct {
		JobID     sjNum `json:"job_id"`
		JobOffset sjNum `json:"job_offset"`
	} `json:"het"`
	State struct {
		Current sjStrings `json:"current"`
		Reason  string    `json:"reason"`
	} `json:"state"`
	Time struct {
		Eligible   sjNum `json:"eligible"`
		End        sjNum `json:"end"`
		Start      sjNum `json:"start"`
		Submission sjNum `json:"submission"`
		Limit      sjNum `json:"limit"`
	} `json:"time"`
	ExitCode        sjExit `json:"exit_code"`
	DerivedExitCode sjExit `json:"derived_exit_code"`
	Required        struct {
		CPUs sjNum `json:"CPUs"`
		// MemoryPerNode and MemoryPerCPU (megabytes; v0.0.39+) are read
		// only when tres.requested has no mem item (see hostUsage). 22.05's
		// "memory" is not read: it is 0 for jobs that requested 16000M
		// (SEEN on 22.05.8).
		MemoryPerNode sjNum `json:"memory_per_node"`
		MemoryPerCPU  sjNum `json:"memory_per_cpu"`
	} `json:"required"`
	TRES struct {
		Allocated []sjTRES `json:"allocated"`
		Requested []sjTRES `json:"requested"`
	} `json:"tres"`
	Steps []sjStep `json:"steps"`
}

// sjStep holds what a job record takes from a step: Slurm's usage readings,
// steps[].tres.requested.max (gres/gpumem and mem, bytes) and .average
// (gres/gpuutil, percent), and the step's CPU time, time.total (user +
// system, sacct's TotalCPU), in every version from dbv0.0.38 to v0.0.43.
type sjStep struct {
	Time struct {
		Total sjCPUTime `json:"total"`
	} `json:"time"`
	TRES struct {
		Requested struct {
			Max     []sjTRES `json:"max"`
			Average []sjTRES `json:"average"`
		} `json:"requested"`
	} `json:"tres"`
}

// sjCPUTime is a CPU time of sacct --json, {"seconds":…,"microseconds":…}
// (steps[].time.total, .user, .system).
type sjCPUTime struct {
	Seconds      sjNum `json:"seconds"`
	Microseconds sjNum `json:"microseconds"`
}

// maxCPUSeconds bounds one CPU time: a time.Duration holds about 292
// years.
const maxCPUSeconds = math.MaxInt64/int64(time.Second) - 1

// duration returns the CPU time; reported is false when neither part is
// given (the step has none), err non-nil when it is not a CPU time.
func (c sjCPUTime) duration() (d time.Duration, reported bool, err error) {
	s, us := c.Seconds, c.Microseconds
	if !s.Set && !us.Set && s.Bad == "" && us.Bad == "" {
		return 0, false, nil
	}
	switch {
	case s.Bad != "" || us.Bad != "":
		return 0, true, fmt.Errorf("not a number: %s", slurmext.QuoteShort(s.Bad+us.Bad))
	case !s.Set || !us.Set:
		return 0, true, errors.New("seconds or microseconds missing")
	case s.Number < 0 || s.Number > maxCPUSeconds || us.Number < 0 || us.Number >= 1e6:
		return 0, true, fmt.Errorf("%d s %d µs out of range", s.Number, us.Number)
	}
	return time.Duration(s.Number)*time.Second + time.Duration(us.Number)*time.Microsecond, true, nil
}

// record converts a decoded job; ok is false when the job has no usable id.
func (j *sjJob) record(cluster string) (rec slurmext.JobRecord, problems slurmext.Notes, ok bool) {
	n := &problems
	if !j.JobID.Set || j.JobID.Number <= 0 || j.JobID.Number > math.MaxUint32 {
		n.Add("job_id", "missing or not a job id")
		return slurmext.JobRecord{}, problems, false
	}
	id := strconv.FormatInt(j.JobID.Number, 10)
	rec = slurmext.JobRecord{
		JobID: id, DisplayID: id, ArrayTaskID: -1, HetOffset: -1, UID: -1, CancelledBy: -1,
		Source: "sacct",
	}
	rec.Cluster = n.Text("cluster", j.Cluster, slurmext.MaxFieldBytes)
	if rec.Cluster == "" {
		rec.Cluster = cluster
	}
	rec.Name = n.Text("name", j.Name, slurmext.MaxFieldBytes)
	rec.User = n.Text("user", j.User, slurmext.MaxFieldBytes)
	rec.Account = n.Text("account", j.Account, slurmext.MaxFieldBytes)
	rec.Partition = n.Text("partition", j.Partition, slurmext.MaxFieldBytes)
	rec.QOS = n.Text("qos", j.QOS, slurmext.MaxFieldBytes)
	rec.Reason = n.Text("state.reason", j.State.Reason, slurmext.MaxFieldBytes)
	if j.Nodes != "None assigned" {
		rec.NodeList = n.Text("nodes", j.Nodes, slurmext.MaxFieldBytes)
		if rec.NodeList != "" {
			if err := slurmext.CheckHostlist(rec.NodeList); err != nil {
				n.Add("nodes", "%v", err)
			}
		}
	}
	rec.Restarts = jsonCount(n, "restart_cnt", j.RestartCnt)
	rec.Submit = jsonTime(n, "time.submission", j.Time.Submission)
	rec.Eligible = jsonTime(n, "time.eligible", j.Time.Eligible)
	rec.Start = jsonTime(n, "time.start", j.Time.Start)
	rec.End = jsonTime(n, "time.end", j.Time.End)
	rec.TimeLimit, rec.Unlimited = jsonLimit(n, "time.limit", j.Time.Limit)
	rec.ExitStatus, rec.ExitSignal = jsonExit(n, "exit_code", j.ExitCode)
	rec.DerivedStatus, rec.DerivedSignal = jsonExit(n, "derived_exit_code", j.DerivedExitCode)
	rec.State = jsonState(n, j.State.Current)

	rec.ReqTRES = n.Text("tres.requested", tresText(j.TRES.Requested), slurmext.MaxFieldBytes)
	rec.AllocTRES = n.Text("tres.allocated", tresText(j.TRES.Allocated), slurmext.MaxFieldBytes)
	rec.ReqGPUs, rec.ReqGPUType, rec.ReqShards, rec.GPUsFrom = slurmext.RequestedGPUs(rec.ReqTRES, rec.AllocTRES)
	rec.NodeCount = jsonCount(n, "allocation_nodes", j.AllocationNodes)
	if rec.NodeCount == 0 {
		rec.NodeCount = tresCount(j.TRES.Requested, "node") // not started: as requested, like sacct -P
	}
	rec.CPUs = tresCount(j.TRES.Allocated, "cpu")
	if rec.CPUs == 0 {
		rec.CPUs = jsonCount(n, "required.CPUs", j.Required.CPUs)
	}
	j.arrayAndHet(&rec, n)
	j.gpuUsage(&rec, n)
	rec.Usage = j.hostUsage(&rec, n)
	return rec, problems, true
}

// hostUsage reads the job's CPU time, host memory peak and memory request
// by the rules of the text reader (see slurmext.HostUsage), from --json's own
// fields:
//
//	TotalCPU  the sum of steps[].time.total (user + system, to the
//	          microsecond); the job's own time.total is 0 whatever the
//	          steps used (SEEN on 22.05.8), so it is not read, and a job
//	          without a step that reports one has it unknown
//	MemPeak   the highest mem item (bytes) of any step's
//	          tres.requested.max, sacct's TRESUsageInMax/MaxRSS; 0 is a
//	          step never sampled
//	ReqMem    the mem item of tres.requested (megabytes), the total that
//	          sacct's ReqMem prints since 21.08; without one,
//	          required.memory_per_node × nodes or required.memory_per_cpu
//	          × CPUs (v0.0.39+); 0 (--mem=0) or infinite is unknown
//
// A malformed value in any step leaves that value of the job unknown, with
// a note.
func (j *sjJob) hostUsage(rec *slurmext.JobRecord, n *slurmext.Notes) slurmext.HostUsage {
	var u slurmext.HostUsage
	cpuBad, memBad := false, false
	for i := range j.Steps {
		st := &j.Steps[i]
		d, reported, err := st.Time.Total.duration()
		switch {
		case err != nil:
			if !cpuBad {
				n.Add("steps.time.total", "step %d: %v", i+1, err)
			}
			cpuBad = true
		case reported:
			if u.TotalCPU > math.MaxInt64-d {
				if !cpuBad {
					n.Add("steps.time.total", "the sum over the steps overflows")
				}
				cpuBad = true
			}
			u.TotalCPU += d
			u.TotalCPUValid = true
		}
		v, found := tresItem(st.TRES.Requested.Max, "mem", "")
		switch {
		case !found || !v.Set && v.Bad == "":
		case v.Bad != "" || v.Number < 0 || v.Number > slurmext.MaxUsageBytes:
			if !memBad {
				n.Add("steps.tres.requested.max", "step %d: mem is not a memory size", i+1)
			}
			memBad = true
		case v.Number > 0 && (!u.MemPeakValid || uint64(v.Number) > u.MemPeak):
			u.MemPeak, u.MemPeakValid = uint64(v.Number), true
		}
	}
	if cpuBad {
		u.TotalCPU, u.TotalCPUValid = 0, false
	}
	if memBad {
		u.MemPeak, u.MemPeakValid = 0, false
	}
	// --json has every step with both fields: read unless malformed.
	u.TotalCPURead = len(j.Steps) > 0 && !cpuBad
	u.MemPeakRead = len(j.Steps) > 0 && !memBad
	u.ReqMem, u.ReqMemValid = j.reqMem(rec, n)
	return u
}

// reqMem returns the job's memory request in bytes, in total (see
// hostUsage), and whether it is known.
func (j *sjJob) reqMem(rec *slurmext.JobRecord, n *slurmext.Notes) (uint64, bool) {
	const mib = 1 << 20
	size := func(name string, v sjNum, per int) (uint64, bool) {
		switch {
		case v.Bad != "":
			n.Add(name, "not a number of megabytes: %s", slurmext.QuoteShort(v.Bad))
		case !v.Set || v.Number == 0 || per <= 0:
		case v.Number < 0 || uint64(v.Number) > slurmext.MaxUsageBytes/mib/uint64(per):
			n.Add(name, "%d megabytes × %d out of range", v.Number, per)
		default:
			return uint64(v.Number) * mib * uint64(per), true
		}
		return 0, false
	}
	if v, found := tresItem(j.TRES.Requested, "mem", ""); found {
		return size("tres.requested", v, 1)
	}
	if r := j.Required.MemoryPerNode; r.Set || r.Bad != "" {
		return size("required.memory_per_node", r, rec.NodeCount)
	}
	return size("required.memory_per_cpu", j.Required.MemoryPerCPU, rec.CPUs)
}

// tresItem finds the item of type typ and name name ("" for none) in a
// TRES list, looking at no more than slurmext.MaxTRESItems.
func tresItem(items []sjTRES, typ, name string) (sjNum, bool) {
	for i, t := range items {
		if i >= slurmext.MaxTRESItems {
			break
		}
		if t.Type == typ && t.Name == name {
			return t.Count, true
		}
	}
	return sjNum{}, false
}

// gpuUsage folds the steps' GPU readings into the job as Reader does
// for text: the most memory of any step, the highest mean utilisation of
// any step; a reading that is not a number in any step (NO_VAL64 and
// INFINITE64 do not fit an int64) leaves the job's unknown.
func (j *sjJob) gpuUsage(rec *slurmext.JobRecord, n *slurmext.Notes) {
	memBad, utilBad := false, false
	for i, st := range j.Steps {
		if i >= slurmext.MaxTRESItems {
			break
		}
		if v, found := usageCount(st.TRES.Requested.Max, "gpumem"); found {
			switch {
			case !v.Set || v.Number < 0 || v.Number > slurmext.MaxUsageBytes:
				memBad = true
			case !rec.SlurmGPUMemValid || uint64(v.Number) > rec.SlurmGPUMem:
				rec.SlurmGPUMem, rec.SlurmGPUMemValid = uint64(v.Number), true
			}
		}
		if v, found := usageCount(st.TRES.Requested.Average, "gpuutil"); found {
			switch {
			case !v.Set || v.Number < 0 || v.Number > slurmext.MaxGPUUtil:
				utilBad = true
			case !rec.SlurmGPUUtilValid || float64(v.Number) > rec.SlurmGPUUtil:
				rec.SlurmGPUUtil, rec.SlurmGPUUtilValid = float64(v.Number), true
			}
		}
	}
	if memBad {
		n.Add("steps.tres.requested.max", "gres/gpumem is not a memory size in some step")
		rec.SlurmGPUMem, rec.SlurmGPUMemValid = 0, false
	}
	if utilBad {
		n.Add("steps.tres.requested.average", "gres/gpuutil is not a utilisation in some step")
		rec.SlurmGPUUtil, rec.SlurmGPUUtilValid = 0, false
	}
}

// usageCount finds the gres item called name in a usage list.
func usageCount(items []sjTRES, name string) (sjNum, bool) {
	for _, t := range items {
		if t.Type == "gres" && t.Name == name {
			return t.Count, true
		}
	}
	return sjNum{}, false
}

// arrayAndHet fills the array and heterogeneous job fields and DisplayID.
func (j *sjJob) arrayAndHet(rec *slurmext.JobRecord, n *slurmext.Notes) {
	if a := j.Array.JobID; a.Set && a.Number > 0 && a.Number <= math.MaxUint32 {
		rec.ArrayJobID = strconv.FormatInt(a.Number, 10)
		switch t := j.Array.TaskID; {
		case t.Set && t.Number >= 0 && t.Number <= math.MaxInt32:
			rec.ArrayTaskID = int(t.Number)
			rec.DisplayID = rec.ArrayJobID + "_" + strconv.Itoa(rec.ArrayTaskID)
		case t.Bad != "":
			n.Add("array.task_id", "not an array index: %s", slurmext.QuoteShort(t.Bad))
		case t.Set && t.Number < slurmext.NoValTask:
			n.Add("array.task_id", "array index %d out of range", t.Number)
		case j.Array.Task != "":
			spec, err := arrayTaskSpec(j.Array.Task)
			if err != nil {
				n.Add("array.task", "%v", err)
				break
			}
			rec.ArrayTaskSpec = spec
			rec.DisplayID = rec.ArrayJobID + "_[" + spec + "]"
		}
	}
	if h := j.Het.JobID; h.Set && h.Number > 0 && h.Number <= math.MaxUint32 {
		rec.HetJobID = strconv.FormatInt(h.Number, 10)
		if o := j.Het.JobOffset; o.Set && o.Number >= 0 && o.Number <= math.MaxInt32 {
			rec.HetOffset = int(o.Number)
			rec.DisplayID = rec.HetJobID + "+" + strconv.Itoa(rec.HetOffset)
		} else if o.Bad != "" || o.Set {
			n.Add("het.job_offset", "not a component offset")
		}
	}
}

// arrayTaskSpec turns the task list of an unsplit array into the form sacct
// -P shows inside the brackets: the hex bitmap the database keeps ("0x1E") →
// "1-4"; a list already in that form is kept.
func arrayTaskSpec(task string) (string, error) {
	t := strings.TrimSpace(task)
	hex, isHex := strings.CutPrefix(strings.ToLower(t), "0x")
	if !isHex {
		if !slurmext.ValidArraySpec(t) {
			return "", fmt.Errorf("task list %s is neither 0x<hex bitmap> nor a list of indices: %w", slurmext.QuoteShort(task), ErrMalformed)
		}
		return t, nil
	}
	// Each hex digit is 4 indices: bound the bitmap before decoding it.
	if hex == "" || len(hex) > slurmext.MaxIndexList/4 {
		return "", fmt.Errorf("task bitmap %s: empty or over %d indices: %w", slurmext.QuoteShort(task), slurmext.MaxIndexList, ErrMalformed)
	}
	bits, ok := new(big.Int).SetString(hex, 16)
	if !ok {
		return "", fmt.Errorf("task bitmap %s is not hexadecimal: %w", slurmext.QuoteShort(task), ErrMalformed)
	}
	var idx []int
	for i := range bits.BitLen() {
		if bits.Bit(i) == 1 {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return "", fmt.Errorf("task bitmap %s names no task: %w", slurmext.QuoteShort(task), ErrMalformed)
	}
	return formatIndexRanges(idx), nil
}

// formatIndexRanges renders sorted unique indices with ranges: [1 2 3 5] →
// "1-3,5".
func formatIndexRanges(idx []int) string {
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(idx[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	return b.String()
}

// tresText renders TRES items as sacct -P does: "name=count" sorted by name,
// gres and the like as "type/name", memory in megabytes with an M, and
// items without a count (null, or NO_VAL's -2) left out.
func tresText(items []sjTRES) string {
	if len(items) > slurmext.MaxTRESItems {
		items = items[:slurmext.MaxTRESItems]
	}
	type item struct{ name, value string }
	kept := make([]item, 0, len(items))
	for _, t := range items {
		if !t.Count.Set || t.Count.Number < 0 || t.Type == "" {
			continue
		}
		it := item{name: t.Type, value: strconv.FormatInt(t.Count.Number, 10)}
		if t.Name != "" {
			it.name += "/" + t.Name
		}
		if t.Type == "mem" {
			it.value += "M"
		}
		kept = append(kept, it)
	}
	// By name, as sacct orders them: "gres/gpu" before "gres/gpu:h100".
	slices.SortStableFunc(kept, func(a, b item) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for i, it := range kept {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it.name + "=" + it.value)
	}
	return b.String()
}

// tresCount returns the count of the TRES named typ ("cpu", "node"), 0 when
// absent or out of range.
func tresCount(items []sjTRES, typ string) int {
	for _, t := range items {
		if t.Type == typ && t.Name == "" && t.Count.Set && t.Count.Number > 0 && t.Count.Number <= math.MaxInt32 {
			return int(t.Count.Number)
		}
	}
	return 0
}

// jsonCount reads a non-negative count; unset is 0.
func jsonCount(n *slurmext.Notes, name string, v sjNum) int {
	switch {
	case v.Bad != "":
		n.Add(name, "not a number: %s", slurmext.QuoteShort(v.Bad))
	case !v.Set:
	case v.Number < 0 || v.Number > math.MaxInt32:
		n.Add(name, "%d out of range", v.Number)
	default:
		return int(v.Number)
	}
	return 0
}

// jsonTime reads seconds since 1970; 0 and unset are the zero time.
func jsonTime(n *slurmext.Notes, name string, v sjNum) time.Time {
	switch {
	case v.Bad != "":
		n.Add(name, "not a time: %s", slurmext.QuoteShort(v.Bad))
	case !v.Set || v.Number == 0:
	case v.Number < 0 || v.Number > slurmext.MaxUnixSeconds:
		n.Add(name, "%d is before 1970 or after year 9999", v.Number)
	default:
		return time.Unix(v.Number, 0).UTC()
	}
	return time.Time{}
}

// jsonLimit reads a time limit in minutes: infinite (or INFINITE,
// 0xffffffff) is unlimited, unset (or NO_VAL) unknown.
func jsonLimit(n *slurmext.Notes, name string, v sjNum) (time.Duration, bool) {
	switch {
	case v.Bad != "":
		n.Add(name, "not a number of minutes: %s", slurmext.QuoteShort(v.Bad))
	case v.Infinite || v.Set && v.Number == math.MaxUint32:
		return 0, true
	case !v.Set || v.Number == slurmext.NoValTask:
	case v.Number < 0 || v.Number > math.MaxUint32:
		n.Add(name, "%d minutes out of range", v.Number)
	default:
		return time.Duration(v.Number) * time.Minute, false
	}
	return 0, false
}

// jsonExit reads an exit code object: the return code when set, and the
// signal when the status says the job was signalled (or a signal is set).
func jsonExit(n *slurmext.Notes, name string, e sjExit) (status, signal int) {
	if rc := e.ReturnCode; rc.Bad != "" {
		n.Add(name, "return_code not a number: %s", slurmext.QuoteShort(rc.Bad))
	} else if rc.Set {
		if rc.Number < 0 || rc.Number > 255 {
			n.Add(name, "return_code %d outside 0-255", rc.Number)
		} else {
			status = int(rc.Number)
		}
	}
	sig := e.Signal.ID
	if !sig.Set {
		sig = e.Signal.SignalID
	}
	if sig.Bad != "" {
		n.Add(name, "signal not a number: %s", slurmext.QuoteShort(sig.Bad))
	} else if sig.Set {
		if sig.Number < 0 || sig.Number > 127 {
			n.Add(name, "signal %d outside 0-127", sig.Number)
		} else {
			signal = int(sig.Number)
		}
	}
	return status, signal
}

// jsonState picks the state of a state.current value: the first base state
// when the array also holds flags, else the first state that parses.
func jsonState(n *slurmext.Notes, current sjStrings) slurmext.JobState {
	if current.Bad {
		n.Add("state.current", "neither a string nor a list of strings")
	}
	var first slurmext.JobState
	for i, s := range current.List {
		if i >= slurmext.MaxTRESItems {
			break
		}
		st, _, err := slurmext.ParseState(s)
		if err != nil {
			n.Add("state.current", "%v", err)
			continue
		}
		if st.IsBase() {
			return st
		}
		if first == "" {
			first = st
		}
	}
	return first
}
