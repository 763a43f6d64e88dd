package slurmext

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ErrBadPolicySpec means a what-if policy flag, a partition or QOS written
// as "NAME:Key=Value,Key=Value" (gpuprof whatif --partition, --qos), is
// malformed.
var ErrBadPolicySpec = errors.New("malformed policy spec")

// partitionSpecKeys are the slurm.conf partition keys ParsePartitionSpec
// takes, spelled as slurm.conf(5) spells them.
var partitionSpecKeys = []string{"Nodes", "MaxTime", "DefaultTime", "PriorityTier", "PriorityJobFactor", "QOS", "AllowQOS", "Default", "State"}

// maxPriorityTier is the largest PriorityTier and PriorityJobFactor Slurm
// takes (a uint16 below its NO_VAL16 and INFINITE16 markers).
const maxPriorityTier = 65533

// ParsePartitionSpec reads a partition as gpuprof whatif --partition takes
// it: "NAME:Key=Value,Key=Value", e.g.
//
//	debug:Nodes=gpu[01-02],MaxTime=1:00:00,PriorityTier=2
//	gpu:MaxTime=2-00:00:00
//
// The keys are slurm.conf's partition keys, matched case-insensitively:
// Nodes, MaxTime, DefaultTime, PriorityTier, PriorityJobFactor, QOS,
// AllowQOS, Default, State. Values mean what they mean in slurm.conf and
// are read by the same code as ReadSchedConf's PartitionName lines, so a
// spec and the slurm.conf line with the same keys give the same
// PartitionConf; keys not given take Slurm's defaults. Commas inside square
// brackets belong to the value ("Nodes=gpu[01,03-04]"); the two list-valued
// keys, Nodes and AllowQOS, also take the items without '=' that follow
// them ("Nodes=gpu01,gpu03,MaxTime=60", "AllowQOS=normal,high"). Spaces
// around items, keys and values are ignored.
//
// given holds the keys the spec names, lowercased ("maxtime"), so that a
// caller can change only those on an existing partition.
//
// The name may hold only letters, digits, '_', '.' and '-', and may not be
// DEFAULT (slurm.conf's line of defaults). Errors wrap ErrBadPolicySpec
// (and ErrBadHostlist, ErrTooLarge or ErrBadDuration where those parsers
// refused) and name the bad part: an empty or bad name, no ':', no items,
// an empty item, an item without '=' that does not continue a list, an
// unknown key (the message lists the known ones), a key given twice, an
// empty value, and a value slurm.conf would not take: a bad hostlist, ALL
// among other nodes, a bad time (Partition_Limit is a job's limit, not a
// partition's), a PriorityTier or PriorityJobFactor that is not a whole
// number from 0 to 65533, a QOS name with other characters than a
// partition name may have, Default other than YES or NO, State other than
// UP, DOWN, DRAIN or INACTIVE. On error the PartitionConf is zero and given
// is nil.
func ParsePartitionSpec(spec string) (p PartitionConf, given map[string]bool, err error) {
	const what = "partition spec"
	bad := func(format string, a ...any) error { return policyErr(what, spec, nil, format, a...) }
	name, body, err := splitPolicySpec(what, spec)
	if err != nil {
		return PartitionConf{}, nil, err
	}
	if strings.EqualFold(name, "DEFAULT") {
		return PartitionConf{}, nil, bad("DEFAULT names slurm.conf's line of partition defaults, not a partition")
	}
	items, err := splitOutsideBrackets(body)
	if err != nil {
		return PartitionConf{}, nil, bad("%v", err)
	}
	fields := make(map[string]string)
	given = make(map[string]bool)
	last := "" // the key of the previous item, lowercased
	for _, item := range items {
		item = strings.TrimSpace(item)
		k, v, hasEq := strings.Cut(item, "=")
		switch {
		case item == "":
			return PartitionConf{}, nil, bad("empty item (two commas in a row, or one at an end)")
		case !hasEq && (last == "nodes" || last == "allowqos"):
			fields[last] += "," + item
			continue
		case !hasEq:
			return PartitionConf{}, nil, bad("item %s is not Key=Value", QuoteShort(item))
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		key, ok := lookupKey(partitionSpecKeys, k)
		switch {
		case k == "":
			return PartitionConf{}, nil, bad("item %s has no key", QuoteShort(item))
		case !ok:
			return PartitionConf{}, nil, bad("unknown key %s; the keys are %s", QuoteShort(k), strings.Join(partitionSpecKeys, ", "))
		}
		lk := strings.ToLower(key)
		switch {
		case given[lk]:
			return PartitionConf{}, nil, bad("%s given twice", key)
		case v == "":
			return PartitionConf{}, nil, bad("%s has no value", key)
		}
		fields[lk], given[lk], last = v, true, lk
	}
	if err := checkPartitionFields(spec, fields); err != nil {
		return PartitionConf{}, nil, err
	}
	p, err = parsePartition(name, fields, nil)
	if err != nil {
		return PartitionConf{}, nil, policyErr(what, spec, err, "")
	}
	return p, given, nil
}

// checkPartitionFields checks, in a fixed order, the values of a
// partition spec's keys (lowercased in fields) that parsePartition takes
// without complaint or reports without the key's name; the error is
// ParsePartitionSpec's.
func checkPartitionFields(spec string, fields map[string]string) error {
	const what = "partition spec"
	bad := func(format string, a ...any) error { return policyErr(what, spec, nil, format, a...) }
	for _, key := range partitionSpecKeys {
		v, ok := fields[strings.ToLower(key)]
		if !ok {
			continue
		}
		switch key {
		case "Nodes":
			if strings.EqualFold(v, "ALL") {
				continue
			}
			// parsePartition expands it again; this keeps ErrBadHostlist
			// and ErrTooLarge in the error.
			nodes, err := ExpandHostlist(v)
			if err != nil {
				return policyErr(what, spec, err, "Nodes")
			}
			for _, n := range nodes {
				if strings.EqualFold(n, "ALL") {
					return bad("Nodes=%s: ALL stands alone", QuoteShort(v))
				}
			}
		case "MaxTime", "DefaultTime":
			if strings.EqualFold(v, "Partition_Limit") {
				return bad("%s=%s: Partition_Limit is a job's time limit, not a partition's", key, QuoteShort(v))
			}
			if _, _, err := ParseDuration(v); err != nil {
				return policyErr(what, spec, err, "%s", key)
			}
		case "PriorityTier", "PriorityJobFactor":
			if _, ok := ParseDigits(v, maxPriorityTier); !ok {
				return bad("%s=%s: want a whole number from 0 to %d", key, QuoteShort(v), maxPriorityTier)
			}
		case "QOS":
			if !validPolicyName(v) {
				return bad("QOS=%s: a QOS name holds only letters, digits, '_', '.' and '-'", QuoteShort(v))
			}
		case "AllowQOS":
			if strings.EqualFold(v, "ALL") {
				continue
			}
			for q := range strings.SplitSeq(v, ",") {
				if !validPolicyName(q) {
					return bad("AllowQOS: %s: want ALL or QOS names of letters, digits, '_', '.' and '-'", QuoteShort(q))
				}
			}
		case "Default":
			if !strings.EqualFold(v, "YES") && !strings.EqualFold(v, "NO") {
				return bad("Default=%s: want YES or NO", QuoteShort(v))
			}
		case "State":
			switch strings.ToUpper(v) {
			case "UP", "DOWN", "DRAIN", "INACTIVE":
			default:
				return bad("State=%s: want UP, DOWN, DRAIN or INACTIVE", QuoteShort(v))
			}
		}
	}
	return nil
}

// QOSLimits is a QOS as gpuprof whatif --qos gives it: the limits of a
// Slurm QOS that decide when GPU jobs may start. A limit of 0 is no limit.
type QOSLimits struct {
	Name string
	// Priority is the QOS priority (the multifactor plugin's QOS factor is
	// Priority divided by the largest Priority of all QOS).
	Priority int
	// MaxGPUsPerUser is the GPUs one user's running jobs in the QOS may
	// hold together (MaxTRESPerUser gres/gpu).
	MaxGPUsPerUser int
	// MaxJobsPerUser is how many jobs of one user may run at once.
	MaxJobsPerUser int
	// GrpGPUs is the GPUs all running jobs in the QOS may hold together
	// (GrpTRES gres/gpu).
	GrpGPUs int
	// MaxWall is the longest time limit a job in the QOS may have.
	MaxWall time.Duration
	// Set holds the keys the spec gave, lowercased and with sacctmgr's
	// short names made long: "priority", "maxjobsperuser",
	// "maxtresperuser", "grptres", "maxwall". A TRES-valued key is in Set
	// only when its list names a GPU count (see ParseQOSSpec).
	Set map[string]bool
}

// qosSpecKey is one key ParseQOSSpec takes.
type qosSpecKey struct {
	name    string   // as sacctmgr(1) spells it
	aliases []string // other spellings sacctmgr takes
	tres    bool     // the value is a TRES list
}

var qosSpecKeys = []qosSpecKey{
	{name: "Priority"},
	{name: "MaxJobsPerUser", aliases: []string{"MaxJobs", "MaxJobsPU"}},
	{name: "MaxTRESPerUser", aliases: []string{"MaxTRESPU"}, tres: true},
	{name: "GrpTRES", tres: true},
	{name: "MaxWall", aliases: []string{"MaxWallDurationPerJob"}},
}

// qosKeyList lists the keys for an error message.
const qosKeyList = "Priority, MaxJobsPerUser (MaxJobs, MaxJobsPU), MaxTRESPerUser (MaxTRESPU), GrpTRES, MaxWall (MaxWallDurationPerJob)"

func lookupQOSKey(k string) (qosSpecKey, bool) {
	for _, q := range qosSpecKeys {
		if strings.EqualFold(k, q.name) {
			return q, true
		}
		for _, a := range q.aliases {
			if strings.EqualFold(k, a) {
				return q, true
			}
		}
	}
	return qosSpecKey{}, false
}

// maxPolicyCount bounds a count in a QOS spec (Slurm keeps them as 32-bit
// numbers).
const maxPolicyCount = math.MaxInt32

// ParseQOSSpec reads a QOS as gpuprof whatif --qos takes it:
// "NAME:Key=Value,Key=Value", e.g.
//
//	gpu-short:MaxTRESPerUser=cpu=8,gres/gpu=4,MaxJobsPerUser=2,MaxWall=4:00:00
//
// The keys are sacctmgr's QOS keys, matched case-insensitively:
// Priority=N, MaxJobsPerUser=N (also MaxJobs, MaxJobsPU),
// MaxTRESPerUser=<TRES list> (also MaxTRESPU), GrpTRES=<TRES list>,
// MaxWall=<Slurm duration> (also MaxWallDurationPerJob). As in sacctmgr, -1
// clears a limit: it gives 0, no limit, and so does MaxWall=UNLIMITED.
//
// A TRES list ("cpu=8,gres/gpu=4") has commas and '=' of its own, so the
// spec is split on every comma and an item whose text before its first '='
// is not one of the keys above continues the TRES list before it. From a
// list, gres/gpu gives MaxGPUsPerUser or GrpGPUs; when the list has no
// untyped gres/gpu, its gres/gpu:TYPE items are summed ("gres/gpu:h100=2,
// gres/gpu:a100=2" is 4), and when it has one, that is the total and the
// typed items (limits of their own in Slurm) are not modelled. Other TRES
// (cpu, mem, node, billing, energy, vmem, pages, and gres/, license/, bb/,
// fs/, ic/ names) are checked and ignored. Like sacctmgr, which changes
// only the TRES a list names, a list without a GPU count leaves the GPU
// limit alone: its key is then not put in Set.
//
// Slurm reads a limit of 0 as "nothing may run", which QOSLimits cannot
// say, so 0 is refused for MaxJobsPerUser, MaxWall and a GPU count; write
// -1 for no limit. Errors wrap ErrBadPolicySpec (and ErrBadTRES or
// ErrBadDuration where those parsers refused) and name the bad part: an
// empty or bad name (letters, digits, '_', '.', '-'), no ':', no items, an
// empty item, an unknown key, a key given twice (MaxJobs and
// MaxJobsPerUser are one key), an empty value, a number that is not a
// whole number from -1 to 2147483647, a bad time, a malformed TRES list,
// an unknown TRES, or a TRES count that is not a number.
func ParseQOSSpec(spec string) (QOSLimits, error) {
	const what = "QOS spec"
	bad := func(format string, a ...any) error { return policyErr(what, spec, nil, format, a...) }
	name, body, err := splitPolicySpec(what, spec)
	if err != nil {
		return QOSLimits{}, err
	}
	type entry struct {
		key   qosSpecKey
		value string
	}
	var entries []entry
	seen := make(map[string]bool)
	for item := range strings.SplitSeq(body, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return QOSLimits{}, bad("empty item (two commas in a row, or one at an end)")
		}
		k, v, hasEq := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		key, ok := lookupQOSKey(k)
		if !ok {
			if n := len(entries); n > 0 && entries[n-1].key.tres {
				entries[n-1].value += "," + item
				continue
			}
			switch {
			case !hasEq:
				return QOSLimits{}, bad("item %s is not Key=Value", QuoteShort(item))
			case k == "":
				return QOSLimits{}, bad("item %s has no key", QuoteShort(item))
			}
			return QOSLimits{}, bad("unknown key %s; the keys are %s", QuoteShort(k), qosKeyList)
		}
		switch {
		case seen[key.name]:
			return QOSLimits{}, bad("%s given twice", key.name)
		case !hasEq || v == "":
			return QOSLimits{}, bad("%s has no value", key.name)
		}
		seen[key.name] = true
		entries = append(entries, entry{key, v})
	}
	q := QOSLimits{Name: name, Set: make(map[string]bool)}
	for _, e := range entries {
		k, v := e.key.name, e.value
		var err error
		switch k {
		case "Priority":
			q.Priority, err = policyCount(k, v, true)
		case "MaxJobsPerUser":
			q.MaxJobsPerUser, err = policyCount(k, v, false)
		case "MaxWall":
			q.MaxWall, err = policyWall(v)
		case "MaxTRESPerUser", "GrpTRES":
			var gpus int
			var named bool
			gpus, named, err = policyTRESGPUs(k, v)
			if err == nil && !named {
				continue // no GPU count: nothing this QOS models changes
			}
			if k == "GrpTRES" {
				q.GrpGPUs = gpus
			} else {
				q.MaxGPUsPerUser = gpus
			}
		}
		if err != nil {
			return QOSLimits{}, policyErr(what, spec, err, "")
		}
		q.Set[strings.ToLower(k)] = true
	}
	return q, nil
}

// policyCount reads a count of a QOS spec: -1 (no limit, 0) or a whole
// number; zeroOK says whether 0 is a value of its own (Priority) rather
// than a limit nothing can meet.
func policyCount(key, v string, zeroOK bool) (int, error) {
	if v == "-1" {
		return 0, nil
	}
	n, ok := ParseDigits(v, maxPolicyCount)
	switch {
	case !ok:
		return 0, fmt.Errorf("%s=%s: want a whole number from -1 (no limit) to %d", key, QuoteShort(v), maxPolicyCount)
	case n == 0 && !zeroOK:
		return 0, fmt.Errorf("%s=0 lets nothing run in Slurm; write -1 for no limit", key)
	}
	return int(n), nil
}

// policyWall reads MaxWall: -1 or UNLIMITED (no limit, 0) or a Slurm
// duration above zero.
func policyWall(v string) (time.Duration, error) {
	if v == "-1" {
		return 0, nil
	}
	if strings.EqualFold(v, "Partition_Limit") {
		return 0, fmt.Errorf("MaxWall=%s: Partition_Limit is a job's time limit, not a QOS's", QuoteShort(v))
	}
	d, unlimited, err := ParseDuration(v)
	switch {
	case err != nil:
		return 0, fmt.Errorf("MaxWall: %w", err)
	case unlimited:
		return 0, nil
	case d <= 0:
		return 0, fmt.Errorf("MaxWall=%s lets nothing run in Slurm; write -1 for no limit", QuoteShort(v))
	}
	return d, nil
}

// policyTRESGPUs reads the GPU count of a TRES-valued key; named reports
// whether the list has a gres/gpu item, typed or not. Every item must be a
// TRES Slurm knows with a count: -1, a whole number, or, for sizes such as
// mem, a number with a K, M, G, T or P suffix.
func policyTRESGPUs(key, v string) (gpus int, named bool, err error) {
	tres, err := ParseTRES(v)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", key, err)
	}
	var untyped, typed int
	hasUntyped := false
	// Items in the order written, so the first bad one is the one named.
	for item := range strings.SplitSeq(v, ",") {
		name, _, _ := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		val := tres[name]
		switch {
		case name == "gres/gpu" || strings.HasPrefix(name, "gres/gpu:"):
			if typ, isTyped := strings.CutPrefix(name, "gres/gpu:"); isTyped && !validGresType(typ) {
				return 0, false, fmt.Errorf("%s: %s: a GPU type holds only letters, digits, '_', '.', '+' and '-'", key, QuoteShort(name))
			}
			n, err := policyCount(key+" "+name, val, false)
			if err != nil {
				return 0, false, err
			}
			named = true
			if name == "gres/gpu" {
				untyped, hasUntyped = n, true
			} else if typed += n; typed > maxPolicyCount {
				return 0, false, fmt.Errorf("%s: the gres/gpu:TYPE counts add up to more than %d", key, maxPolicyCount)
			}
		case !knownTRESName(name):
			return 0, false, fmt.Errorf("%s: unknown TRES %s (want cpu, mem, node, billing, energy, vmem, pages or a gres/, license/, bb/, fs/ or ic/ name such as gres/gpu), and not a key (%s)", key, QuoteShort(name), qosKeyList)
		case val != "-1" && !validTRESCount(val):
			return 0, false, fmt.Errorf("%s: %s=%s: want -1 or a count (a size may end in K, M, G, T or P)", key, name, QuoteShort(val))
		}
	}
	if hasUntyped {
		return untyped, named, nil
	}
	return typed, named, nil
}

// knownTRESName accepts the TRES names Slurm defines: the built-in types
// and the names of the typed ones ("gres/gpu:h100", "license/matlab").
func knownTRESName(name string) bool {
	switch name {
	case "cpu", "mem", "node", "billing", "energy", "vmem", "pages":
		return true
	}
	typ, rest, ok := strings.Cut(name, "/")
	switch typ {
	case "gres", "license", "bb", "fs", "ic":
	default:
		return false
	}
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == '-' || c == '+' || c == ':') {
			return false
		}
	}
	return true
}

// validTRESCount accepts a whole number, optionally followed by one of
// Slurm's size suffixes.
func validTRESCount(v string) bool {
	if n := len(v); n > 1 && strings.ContainsRune("KMGTPkmgtp", rune(v[n-1])) {
		v = v[:n-1]
	}
	_, ok := ParseDigits(v, math.MaxInt64)
	return ok
}

// splitPolicySpec splits "NAME:rest" and checks the name.
func splitPolicySpec(what, spec string) (name, body string, err error) {
	name, body, ok := strings.Cut(spec, ":")
	name, body = strings.TrimSpace(name), strings.TrimSpace(body)
	switch {
	case !ok:
		return "", "", policyErr(what, spec, nil, "no ':' after the name; want NAME:Key=Value,Key=Value")
	case name == "":
		return "", "", policyErr(what, spec, nil, "no name before ':'")
	case !validPolicyName(name):
		return "", "", policyErr(what, spec, nil, "name %s: want letters, digits, '_', '.' and '-' only", QuoteShort(name))
	case body == "":
		return "", "", policyErr(what, spec, nil, "nothing after ':'; want at least one Key=Value")
	}
	return name, body, nil
}

// validPolicyName accepts a partition or QOS name: letters, digits, '_',
// '.' and '-', at least one.
func validPolicyName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// lookupKey returns the spelling in keys of k, matched case-insensitively.
func lookupKey(keys []string, k string) (string, bool) {
	for _, key := range keys {
		if strings.EqualFold(k, key) {
			return key, true
		}
	}
	return "", false
}

// splitOutsideBrackets splits s on the commas that are not inside square
// brackets. A ']' without its '[' or a '[' left open is an error.
func splitOutsideBrackets(s string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth == 0 {
				return nil, fmt.Errorf("']' without '[' at byte %d", i+1)
			}
			depth--
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
	}
	if depth > 0 {
		return nil, errors.New("'[' without ']'")
	}
	return append(items, s[start:]), nil
}

// policyErr formats an error of a policy spec: what, the spec quoted, the
// bad part, the cause when there is one, and ErrBadPolicySpec.
func policyErr(what, spec string, cause error, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	switch {
	case cause == nil:
		return fmt.Errorf("%s %s: %s: %w", what, QuoteShort(spec), msg, ErrBadPolicySpec)
	case msg == "":
		return fmt.Errorf("%s %s: %w: %w", what, QuoteShort(spec), cause, ErrBadPolicySpec)
	}
	return fmt.Errorf("%s %s: %s: %w: %w", what, QuoteShort(spec), msg, cause, ErrBadPolicySpec)
}
