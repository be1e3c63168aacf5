package settings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// Setting is one row of the settings table: everything about a setting
// but the Settings field it fills and the templates that read it. README's
// settings table is generated from these rows (table_test.go fails with
// the rows it expects), and krmfunction.yaml declares the same fields,
// types, defaults, bounds and enums (config_schema_test.go).
type Setting struct {
	// Name is the annotation flux-framework.org/<Name> and the key of a
	// ConfigMap config.
	Name string
	// Field is the field of a JobSetFlux spec.
	Field string
	// Type is Field's type in the schema.
	Type Type
	// Env is the Kubeflow Trainer Flux plugin's environment variable for
	// the setting on the wrapped container, or "" for none.
	Env string
	// Default is the default as a user would write it, or "" when there
	// is none or the plan derives one; DefaultDoc then says so in README's
	// words ("none" when it is empty too).
	Default, DefaultDoc string
	// Doc is README's meaning of the setting (Markdown).
	Doc string
	// Verbatim marks shell text shipped as a file of its own (setup.sh),
	// never spliced into a generated script: any character is fine in
	// it, so the checks that every other accepted value is free of shell,
	// TOML and URI syntax do not apply to it.
	Verbatim bool

	rule rule
}

// rule says how one setting's raw values are checked and stored.
type rule struct {
	// parse checks raw and stores what it means in s.
	parse func(s *Settings, raw string) error
	// set stores a default without checking it (TestDefaultsValid does),
	// so that the defaults compile none of the checks' patterns: most
	// renders never check most settings, and every render needs the
	// defaults.
	set func(s *Settings, raw string)
	// clear stores "none" (or "derived") in a setting that has no
	// default: what an empty value means (Apply).
	clear func(s *Settings)
	// enum and lo..hi (when bounded) are the values parse accepts, for
	// the schema test.
	enum    []string
	lo, hi  int
	bounded bool
}

// table is the settings, in documentation order. A new setting is a row
// here, a field of Settings, the template that reads it and its field in
// krmfunction.yaml's schema.
var table = []Setting{
	{Name: "view-image", Field: "viewImage", Type: String, Env: "FLUX_VIEW_IMAGE",
		// Ubuntu 22.04's view (glibc 2.35): a view's binaries run only in
		// images whose glibc is as new or newer, and this one runs in the
		// 22.04 images GPU stacks still build on (NGC's, for one) as well
		// as in 24.04 ones; the 24.04 view would fail in the former.
		Default: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
		Doc:     "image Flux is copied from; its glibc must be no newer than your image's (see Troubleshooting). `none`: your image has Flux (the first `flux` on its PATH, or under `flux-path`): no `flux-installer` init container, no view volumes",
		rule:    textRule(func(s *Settings) *string { return &s.ViewImage }, checkViewImage)},
	{Name: "view-mount", Field: "viewMount", Type: String,
		Default: ViewMountCopy,
		Doc:     "how the view reaches the pods: `copy` (the `flux-installer` init container copies it into emptyDirs, any cluster) or `image` (mounted read-only as an image volume, pulled once per node, nothing copied: Kubernetes 1.35+, or 1.33+ with the `ImageVolume` feature gate, and containerd 2.1+ or CRI-O 1.31+; see \"Choosing view-mount\"); needs a flux-view `view-image`, not `none`",
		rule:    oneOf(func(s *Settings) *string { return &s.ViewMount }, ViewMountCopy, ViewMountImage)},
	{Name: "view-copy-medium", Field: "viewCopyMedium", Type: String,
		Default: ViewCopyMemory,
		Doc:     "with `view-mount: copy`, where the copy of the view's software tree goes: `memory` (a memory-backed emptyDir, 41 MB for the default view, counted toward the pod's memory; the fastest start) or `disk` (the node's disk: for pods with a tight memory limit); see \"Choosing view-mount\"",
		rule:    oneOf(func(s *Settings) *string { return &s.ViewCopyMedium }, ViewCopyMemory, ViewCopyDisk)},
	{Name: "tasks-per-node", Field: "tasksPerNode", Type: Integer,
		DefaultDoc: "GPUs per node when more than one, else 1",
		Doc:        "tasks per pod for `flux run -n` (on the pods the job runs on, below)",
		rule:       numberRule(func(s *Settings) *int { return &s.TasksPerNode }, 1, MaxTasksPerNode)},
	{Name: "cores-per-node", Field: "coresPerNode", Type: Integer,
		DefaultDoc: "each wrapped container's CPU limit, else request, in whole cores (`7500m` is 7, less than 1 is 1); else tasks-per-node",
		Doc:        "cores per pod in the broker's resources (`-c` = cores/tasks)",
		rule:       numberRule(func(s *Settings) *int { return &s.CoresPerNode }, 1, MaxCoresPerNode)},
	{Name: "gpus-per-node", Field: "gpusPerNode", Type: Integer,
		DefaultDoc: "each wrapped container's GPU limit, else request: `nvidia.com/gpu`, `amd.com/gpu`, `gpu.intel.com/i915`, `gpu.intel.com/xe`",
		Doc:        "GPUs per pod (`-g` = GPUs/tasks, per task)",
		rule:       optionalNumber(func(s *Settings) **int { return &s.GPUsPerNode }, 0, MaxGPUsPerNode)},
	{Name: "network-device", Field: "networkDevice", Type: String, Env: "FLUX_NETWORK_DEVICE",
		Default: "eth0",
		Doc:     "interface brokers bind; `*` for all",
		rule:    textRule(func(s *Settings) *string { return &s.NetworkDevice }, checkDevice)},
	{Name: "ip-family", Field: "ipFamily", Type: String,
		// Not derived from the pod: the render cannot see the cluster,
		// and binding IPv6 where the kernel has none fails every broker.
		Default: IPv4,
		Doc:     "`ipv4` or `ipv6`: the address family the brokers bind `network-device` and reach each other with; `ipv6` on a single-stack IPv6 cluster (Flux's `[bootstrap] enable_ipv6`); a dual-stack cluster keeps the family of its Services' first address",
		rule:    oneOf(func(s *Settings) *string { return &s.IPFamily }, IPv4, IPv6)},
	{Name: "port", Field: "port", Type: Integer,
		Default: "8050",
		Doc:     "TBON port",
		rule:    numberRule(func(s *Settings) *int { return &s.Port }, 1, 65535)},
	{Name: "network-policy", Field: "networkPolicy", Type: Boolean,
		// Opt-in: a namespace without a default-deny policy needs none,
		// and a cluster whose network plugin ignores NetworkPolicies
		// would only gain an object that promises isolation it lacks.
		Default: "false",
		Doc:     "`\"true\"`: also generate a NetworkPolicy `<jobset>-flux-network` that lets the instance's pods reach each other on every port (TBON, MPI, the jobs' own) and nothing else reach them or be reached by them, for namespaces that deny traffic by default; it opens no DNS, which the namespace's own policy must allow (see Security)",
		rule:    flagRule(func(s *Settings) *bool { return &s.NetworkPolicy })},
	{Name: "queue-policy", Field: "queuePolicy", Type: String, Env: "FLUX_QUEUE_POLICY",
		Default: "fcfs",
		Doc:     "`fcfs`, `easy`, `conservative`, `hybrid`",
		rule:    oneOf(func(s *Settings) *string { return &s.QueuePolicy }, "fcfs", "easy", "conservative", "hybrid")},
	{Name: "queues", Field: "queues", Type: Boolean,
		// Opt-in: once named queues exist Flux refuses a job that names
		// none unless a default is set, and a run-mode job spanning
		// several replicatedJobs could no longer be placed; every JobSet
		// that does not ask keeps Flux's one anonymous queue.
		Default: "false",
		Doc:     "`\"true\"`: every replicatedJob that joins becomes a Flux queue of its name whose jobs run only on its pods (`flux submit -q gpu ...`); a job that names no queue goes to the default queue: the replicatedJob the command's `flux run` runs on (one only: a job runs in one queue), or with `launcher` or `interactive` rank 0's. broker-config may then set no `[queues]` and no `policy.jobspec.defaults.system.queue`. See \"Queues\"",
		rule:    flagRule(func(s *Settings) *bool { return &s.Queues })},
	{Name: "connect-timeout", Field: "connectTimeout", Type: String,
		Default: "5s",
		Doc:     "`tbon.connect_timeout`",
		rule:    textRule(func(s *Settings) *string { return &s.ConnectTimeout }, checkDuration)},
	{Name: "start-timeout", Field: "startTimeout", Type: String,
		// A busy cluster may take minutes to schedule a gang and pull
		// images; ten minutes waits out an ordinary queue of pods and
		// a cold image pull, and still frees a stuck instance's nodes
		// long before anyone would notice by hand (docs/contributing/faults.md).
		Default: "10m",
		Doc:     "how long the brokers wait for the whole instance to form (every pod scheduled, resolvable and connected): after it, rank 0 exits 124 naming the ranks that never joined and why, the other brokers exit 124 too, and the JobSet fails instead of holding its pods forever; a whole number with `s`, `m` or `h` (seconds without a unit); `0` or `none` waits forever",
		rule:    startTimeout(func(s *Settings) *int { return &s.StartTimeout })},
	{Name: "deadline", Field: "deadline", Type: String,
		// None: a bound right for one instance kills another's work.
		Doc:  "the longest the whole instance may take, from the start of its Jobs (once Kueue admits the JobSet, when it is queued) to its end, waiting for pods to be admitted, scheduled and started included; a Flux duration (`30m`, `2h`, `1.5d`; seconds without a unit). When it passes, Kubernetes fails every Job (reason `DeadlineExceeded`) and the JobSet fails. It is each Job's `activeDeadlineSeconds`: the only bound on an instance whose pods are never admitted (a namespace's Pod Security, quota or LimitRange refusing them), which start-timeout cannot end since it runs in the pods",
		rule: deadlineRule(func(s *Settings) *int { return &s.Deadline })},
	{Name: "topology", Field: "topology", Type: String,
		Default: "kary:256",
		Doc:     "`tbon.topo`: `kary:K` or `binomial` (a tree keeps rank 0's fan-in bounded)",
		rule:    textRule(func(s *Settings) *string { return &s.Topology }, checkTopology)},
	{Name: "replicated-jobs", Field: "replicatedJobs", Type: CommaList,
		DefaultDoc: "all, in spec order",
		Doc:        "which replicatedJobs join, in rank order (comma-separated); rank 0 is pod 0 of job 0 of the first",
		rule:       listRule(func(s *Settings) *[]string { return &s.ReplicatedJobs }, parseNameList)},
	{Name: "min-size", Field: "minSize", Type: String,
		DefaultDoc: "each replicatedJob's size as rendered",
		Doc:        "with `launcher` or `interactive`, the fewest pods per Job a replicatedJob may shrink to while the instance runs: `<replicatedJob>=<pods>` (comma-separated), or a number when one replicatedJob joins; the brokers start once that many have joined (`broker.quorum`), and the instance has formed then. See \"Elastic instances\"",
		rule:       sizeRule(func(s *Settings) *[]GroupSize { return &s.MinSize })},
	{Name: "max-size", Field: "maxSize", Type: String,
		DefaultDoc: "each replicatedJob's size as rendered",
		Doc:        "with `launcher` or `interactive`, the most pods per Job a replicatedJob may grow to while the instance runs (JobSet's elastic update of `parallelism` and `completions`): the same form as `min-size`; the hostlist and resources are written at this size, and ranks not yet there are `offline`, not a failure. See \"Elastic instances\"",
		rule:       sizeRule(func(s *Settings) *[]GroupSize { return &s.MaxSize })},
	{Name: "container", Field: "container", Type: String,
		DefaultDoc: "the first container",
		Doc:        "the container to wrap",
		rule:       textRule(func(s *Settings) *string { return &s.Container }, checkLabel)},
	{Name: "interactive", Field: "interactive", Type: Boolean,
		DefaultDoc: "when the container has neither command nor args",
		Doc:        "keep the instance up (`broker.rc2_none`) until `flux shutdown`",
		rule:       optionalFlag(func(s *Settings) **bool { return &s.Interactive })},
	{Name: "launcher", Field: "launcher", Type: Boolean,
		Default: "false",
		Doc:     "`\"true\"`: the command is the instance's initial program, run once on rank 0 inside the instance (`flux start ... <command>`), for scripts that `flux submit`/`flux batch` their own jobs; its exit code is the leader's. Not with `interactive`, `tasks-per-node`, `run-options` or `time-limit`",
		rule:    flagRule(func(s *Settings) *bool { return &s.Launcher })},
	{Name: "run-options", Field: "runOptions", Type: WordList,
		Doc:  "extra `flux run` options, e.g. `-o pmi=simple,pmix` for Open MPI 5 (PMIx beside the simple PMI that MPICH needs); which options each MPI needs: see MPI below",
		rule: listRule(func(s *Settings) *[]string { return &s.RunOptions }, parseRunOptions)},
	{Name: "time-limit", Field: "timeLimit", Type: String,
		// None: a limit right for one job ends another's work; the
		// examples set one.
		Doc:  "the longest the command's job may run, a Flux duration (`30m`, `2h`, `1.5d`; seconds without a unit), passed as `flux run -t`: when it passes, Flux kills every task, the leader exits non-zero and the JobSet fails, instead of running on when a rank hangs (an MPI_Finalize deadlock). Not with `launcher` (give the `flux submit -t` yourself) or a `-t` in `run-options`",
		rule: timeLimitValue()},
	{Name: "state-claim", Field: "stateClaim", Type: String,
		// Opt-in: a claim outlives the instance, and only the user knows
		// which storage may hold it.
		Doc:  "a PersistentVolumeClaim that keeps rank 0's Flux state (job history with outputs and exit codes, the queue, the KVS) across preemption, suspend, restarts and deletion: the name of one of the JobSet's own `volumeClaimPolicies` templates (the JobSet creates the claim, and deletes it with itself when `whenDeleted: Delete`) or of an existing claim. Mounted at `/mnt/flux/state` in the pods of rank 0's replicatedJob; on SIGTERM rank 0 stops its queues, marks its running jobs lost and dumps; the next instance restores the dump, and its initial program sees `JOBSET_FLUX_RESTORED=1` (see \"Durable instances\")",
		rule: textRule(func(s *Settings) *string { return &s.StateClaim }, checkObjectName("PersistentVolumeClaim"))},
	{Name: "infra-restarts", Field: "infraRestarts", Type: Integer,
		// Opt-in: a restart reruns the command, which only the user
		// knows to be safe.
		Default: "0",
		Doc:     "how many times the JobSet restarts the whole instance after an infrastructure failure: a rank's pod deleted or evicted, its node lost, a broker that failed, a hung rank cut off, an instance that never formed (the JobSet's `failurePolicy` and each Job's `podFailurePolicy`, which the render writes); an application failure (rank 0's command failed with every rank there) fails the JobSet at once. Rank 0 then exits 120 for a rank lost, 122 hung, 124 never formed, and its command's own code otherwise (1 in place of a code of those or 129, 137, 143), and writes a JSON termination message. With `state-claim` the restarted instance resumes its queue. `0`: every failure fails the JobSet, as without it",
		rule:    numberRule(func(s *Settings) *int { return &s.InfraRestarts }, 0, 1000)},
	{Name: "owner-references", Field: "ownerReferences", Type: Boolean,
		// Opt-in: it adds a Role, a RoleBinding and a token to rank 0's
		// pod, which a namespace's policy may not allow.
		Default: "false",
		Doc:     "`\"true\"`: the generated ConfigMap, Secret, Role and RoleBinding are deleted with their JobSet (`kubectl delete jobset`, `ttlSecondsAfterFinished`): rank 0 sets their `ownerReferences` to its JobSet at start, through a Role `<jobset>-flux-owner` that lets the pod's ServiceAccount patch exactly those objects by name and nothing else, and a token volume on rank 0's pods. Needs `metadata.namespace`; where the API server is out of reach (a NetworkPolicy denying egress) rank 0 only warns and the objects stay, as without it. See \"Durable instances\"",
		rule:    flagRule(func(s *Settings) *bool { return &s.OwnerReferences })},
	{Name: "broker-attributes", Field: "brokerAttributes", Type: WordList,
		Doc:  "extra `flux start -Sname=value` words, e.g. `broker.quorum=2`; each checked; none jobset-flux sets (`rundir`, `statedir`, `local-uri`, `tbon.topo`, `tbon.fanout`, `tbon.connect_timeout`, `broker.rc2_none`, `log-stderr-level`, `config.path`), none the broker does not know, none read-only, and none that booting, ranks or the instance's paths depend on (`hostname`, `hostlist`, `broker.boot-method`, `broker.recovery-mode`, `broker.rc1_path`, `broker.rc3_path`, `broker.exit-norestart`, `tbon.interface-hint`, `tbon.prefertcp`, `conf.shell_initrc`, `conf.shell_pluginpath`): the error says why",
		rule: listRule(func(s *Settings) *[]string { return &s.BrokerAttributes }, parseBrokerAttributes)},
	{Name: "broker-config", Field: "brokerConfig", Type: String,
		Doc: "extra broker TOML (tables only), merged into `broker.toml`, e.g. `[resource]` `exclude = \"0\"`; an error on keys jobset-flux writes (`[bootstrap]`, `resource.config`/`path`/`noverify`, `sched-fluxion-qmanager.queue-policy`, `access.allow-root-owner`, `tbon.topo`/`connect_timeout`; with `queues`, `[queues]` and `policy.jobspec.defaults.system.queue`), and on a `tbon.torpid_min`/`torpid_max` Flux would refuse at boot (not a duration string, a zero minimum, a maximum other than 0 not longer than the minimum; `broker-attributes` words count too)",
		rule: rule{parse: func(s *Settings, raw string) error {
			doc, err := parseBrokerConfig(raw)
			if err != nil {
				return err
			}
			s.BrokerConfig = doc
			return nil
		}, clear: func(s *Settings) { s.BrokerConfig = nil }}},
	{Name: "log-level", Field: "logLevel", Type: Integer,
		DefaultDoc: "Flux's",
		Doc:        "the brokers' `log-stderr-level`, 0-7",
		rule:       optionalNumber(func(s *Settings) **int { return &s.LogLevel }, 0, 7)},
	{Name: "flux-path", Field: "fluxPath", Type: String,
		Doc:  "prefix of the Flux in your image (`<prefix>/bin/flux`, e.g. `/usr` or `/opt/flux`); implies `view-image: none`",
		rule: textRule(func(s *Settings) *string { return &s.FluxPath }, checkFluxPath)},
	{Name: "setup", Field: "setup", Type: String, Verbatim: true,
		Doc:  "shell text sourced on every pod before Flux starts (`. /opt/intel/oneapi/setvars.sh`, `module load ...`, staging); shipped as its own file `setup.sh` in the generated ConfigMap, never spliced into the scripts; what it exports reaches the broker and every job; a non-zero status stops the pod",
		rule: textRule(func(s *Settings) *string { return &s.Setup }, checkSetup)},
	{Name: "curve-secret", Field: "curveSecret", Type: String,
		Doc:  "use this existing Secret (key `curve.cert`); generate none",
		rule: textRule(func(s *Settings) *string { return &s.CurveSecret }, checkObjectName("Secret"))},
	{Name: "shm-size", Field: "shmSize", Type: String,
		Doc:  "`sizeLimit` of the `/dev/shm` emptyDir; below 4.25 MiB per task of a pod, what MPICH needs, a warning (see MPI)",
		rule: textRule(func(s *Settings) *string { return &s.ShmSize }, checkQuantity)},
}

// byName finds a setting's row. A linear search of the few dozen settings
// is as fast as a map here, and builds nothing at start-up.
func byName(name string) (*Setting, bool) {
	for i := range table {
		if table[i].Name == name {
			return &table[i], true
		}
	}
	return nil, false
}

// The kinds of value, each bound to its Settings field.

// textRule is a string checked by check.
func textRule(field func(*Settings) *string, check func(string) error) rule {
	return rule{
		parse: func(s *Settings, raw string) error {
			if err := check(raw); err != nil {
				return err
			}
			*field(s) = raw
			return nil
		},
		set:   func(s *Settings, raw string) { *field(s) = raw },
		clear: func(s *Settings) { *field(s) = "" },
	}
}

// oneOf is a string from a fixed list.
func oneOf(field func(*Settings) *string, allowed ...string) rule {
	v := textRule(field, checkEnum(allowed...))
	v.enum = allowed
	return v
}

// numberRule is a whole number from lo to hi.
func numberRule(field func(*Settings) *int, lo, hi int) rule {
	return rule{
		parse: func(s *Settings, raw string) error {
			n, err := parseInt(raw, lo, hi)
			if err != nil {
				return err
			}
			*field(s) = n
			return nil
		},
		set:     func(s *Settings, raw string) { *field(s), _ = strconv.Atoi(raw) },
		clear:   func(s *Settings) { *field(s) = 0 },
		lo:      lo,
		hi:      hi,
		bounded: true,
	}
}

// optionalNumber is a number whose absence (nil) means something else
// than any number.
func optionalNumber(field func(*Settings) **int, lo, hi int) rule {
	return rule{
		parse: func(s *Settings, raw string) error {
			n, err := parseInt(raw, lo, hi)
			if err != nil {
				return err
			}
			*field(s) = &n
			return nil
		},
		clear:   func(s *Settings) { *field(s) = nil },
		lo:      lo,
		hi:      hi,
		bounded: true,
	}
}

// flagRule is "true" or "false".
func flagRule(field func(*Settings) *bool) rule {
	return rule{
		parse: func(s *Settings, raw string) error {
			b, err := parseBool(raw)
			if err != nil {
				return err
			}
			*field(s) = b
			return nil
		},
		set: func(s *Settings, raw string) { *field(s) = raw == "true" },
	}
}

// optionalFlag is a flag whose absence (nil) means derived.
func optionalFlag(field func(*Settings) **bool) rule {
	return rule{parse: func(s *Settings, raw string) error {
		b, err := parseBool(raw)
		if err != nil {
			return err
		}
		*field(s) = &b
		return nil
	}, clear: func(s *Settings) { *field(s) = nil }}
}

// listRule is words or names, split and checked by parse.
func listRule(field func(*Settings) *[]string, parse func(string) ([]string, error)) rule {
	return rule{parse: func(s *Settings, raw string) error {
		items, err := parse(raw)
		if err != nil {
			return err
		}
		*field(s) = items
		return nil
	}, clear: func(s *Settings) { *field(s) = nil }}
}

func parseBool(raw string) (bool, error) {
	switch raw {
	case "true", "false":
		return raw == "true", nil
	}
	return false, fmt.Errorf("must be \"true\" or \"false\", got %s", finding.Quote(raw))
}

func parseInt(raw string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(raw)
	if err != nil || strings.TrimSpace(raw) != raw || strings.HasPrefix(raw, "+") {
		return 0, fmt.Errorf("must be a whole number from %d to %d, got %s", lo, hi, finding.Quote(raw))
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("must be from %d to %d, got %d", lo, hi, n)
	}
	return n, nil
}

// checkViewImage accepts an image reference, or NoView.
func checkViewImage(raw string) error {
	if raw == NoView {
		return nil
	}
	return checkImage(raw)
}

// startTimeout is a duration in whole seconds, 0 for none.
func startTimeout(field func(*Settings) *int) rule { return secondsRule(field, parseStartTimeout) }

// secondsRule stores what parse reads, a number of seconds, in field; a
// cleared setting is zero.
func secondsRule(field func(*Settings) *int, parse func(string) (int, error)) rule {
	return rule{
		parse: func(s *Settings, raw string) error {
			n, err := parse(raw)
			if err != nil {
				return err
			}
			*field(s) = n
			return nil
		},
		set:   func(s *Settings, raw string) { *field(s), _ = parse(raw) },
		clear: func(s *Settings) { *field(s) = 0 },
	}
}

// MaxStartTimeout is the longest start-timeout, in seconds (a week): the
// entrypoint's arithmetic and the startup probe's threshold stay small.
const MaxStartTimeout = 7 * 24 * 3600

// parseStartTimeout reads a start-timeout: "0" or "none" for none, else a
// whole number of seconds, minutes or hours.
func parseStartTimeout(raw string) (int, error) {
	if raw == "none" || raw == "0" {
		return 0, nil
	}
	unit := 1
	digits := raw
	if n := len(raw); n > 0 {
		switch raw[n-1] {
		case 's':
			digits = raw[:n-1]
		case 'm':
			unit, digits = 60, raw[:n-1]
		case 'h':
			unit, digits = 3600, raw[:n-1]
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || digits == "" || digits[0] < '0' || digits[0] > '9' || n < 0 {
		return 0, fmt.Errorf("must be a whole number of seconds, minutes or hours like 600, 90s, 10m or 1h, or 0 or none to wait forever, got %s", finding.Quote(raw))
	}
	if n > MaxStartTimeout/unit {
		return 0, fmt.Errorf("must be at most a week (%ds), got %s", MaxStartTimeout, finding.Quote(raw))
	}
	return n * unit, nil
}

// timeLimitValue is the time-limit setting. A number without a unit
// means seconds, as README says and as a Flux Standard Duration reads it,
// but flux run -t reads a bare number as minutes (flux-core's
// cli/base.py multiplies it by 60): the value is stored with its unit
// written out, so that "600" reaches flux run as -t 600s, not as ten
// hours.
func timeLimitValue() rule {
	v := textRule(func(s *Settings) *string { return &s.TimeLimit }, checkTimeLimit)
	parse := v.parse
	v.parse = func(s *Settings, raw string) error {
		if err := parse(s, raw); err != nil {
			return err
		}
		s.TimeLimit = WithUnit(raw)
		return nil
	}
	return v
}
