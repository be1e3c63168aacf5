package jobset

import (
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The fields below say how Kubernetes retries, restarts, orders and names
// the pods of a JobSet. Their semantics can break an instance whose
// brokers must all start once and find each other by name; package plan
// judges them, this file only reads them.

// Policies are the JobSet-level fields: failurePolicy and startupPolicy.
type Policies struct {
	// MaxRestarts is spec.failurePolicy.maxRestarts (nil when unset).
	MaxRestarts *int
	// FailureRules are spec.failurePolicy.rules, in order.
	FailureRules []FailureRule
	// StartupOrder is spec.startupPolicy.startupPolicyOrder ("" when unset).
	StartupOrder string
	// RestartStrategy is spec.failurePolicy.restartStrategy ("" when unset).
	RestartStrategy string
	// Success is spec.successPolicy, nil when unset.
	Success *SuccessPolicy
	// Coordinator is spec.coordinator, nil when unset.
	Coordinator *Coordinator
}

// SuccessPolicy is a JobSet's spec.successPolicy: the JobSet completes
// when all (operator All) or any (Any) of the Jobs of the targeted
// replicatedJobs complete; no targets means every replicatedJob.
type SuccessPolicy struct {
	Operator string
	Targets  []string
}

// Coordinator is a JobSet's spec.coordinator: the pod whose stable
// network endpoint the controller writes into a label of every pod.
type Coordinator struct {
	ReplicatedJob      string
	JobIndex, PodIndex int
}

// FailureRule is one rule of a JobSet's failurePolicy.
type FailureRule struct {
	// Path is the rule's field path.
	Path   string
	Action string
	// Reasons, Messages and Targets are onJobFailureReasons,
	// onJobFailureMessagePatterns and targetReplicatedJobs: a rule
	// without any matches every failure.
	Reasons, Messages, Targets []string
}

// MatchesAll reports whether the rule matches every failure.
func (r FailureRule) MatchesAll() bool {
	return len(r.Reasons) == 0 && len(r.Messages) == 0 && len(r.Targets) == 0
}

// Retries are the Job fields that retry or keep a failed pod's index.
type Retries struct {
	BackoffLimitPerIndex, MaxFailedIndexes *int
	// PodFailureActions are the actions of podFailurePolicy.rules, with
	// the path of each.
	PodFailureActions []Field
	// SuccessIndexes are the succeededIndexes of the Job's own
	// successPolicy.rules, with the path of each rule ("" for a rule
	// without them, which succeededCount alone meets).
	SuccessIndexes []Field
}

// Field is a string field as written, and its path.
type Field struct {
	Path, Value string
}

// Dependency is one entry of a replicatedJob's dependsOn.
type Dependency struct {
	Path, Name, Status string
}

// DNS is how a pod resolves names: dnsPolicy and dnsConfig.searches.
type DNS struct {
	Policy   string
	Searches []string
}

// Values of the fields above that the checks name, as in the APIs.
const (
	DNSDefault                 = "Default"                           // corev1.DNSDefault
	DNSNone                    = "None"                              // corev1.DNSNone
	PodFailurePolicyIgnore     = "Ignore"                            // batchv1.PodFailurePolicyActionIgnore
	FailJobSet                 = "FailJobSet"                        // jobsetv1alpha2.FailJobSet
	StartupInOrder             = "InOrder"                           // jobsetv1alpha2.InOrder
	DependencyComplete         = "Complete"                          // jobsetv1alpha2.DependencyComplete
	DependencyReady            = "Ready"                             // jobsetv1alpha2.DependencyReady
	RestartJobSet              = "RestartJobSet"                     // jobsetv1alpha2.RestartJobSet
	RestartIgnoringMaxRestarts = "RestartJobSetAndIgnoreMaxRestarts" // jobsetv1alpha2.RestartJobSetAndIgnoreMaxRestarts
	RestartJob                 = "RestartJob"                        // jobsetv1alpha2.RestartJob
	RestartJobIgnoringMax      = "RestartJobAndIgnoreMaxRestarts"    // jobsetv1alpha2.RestartJobAndIgnoreMaxRestarts
	DNSClusterFirstWithHostNet = "ClusterFirstWithHostNet"           // corev1.DNSClusterFirstWithHostNet
	PodFailurePolicyFailIndex  = "FailIndex"                         // batchv1.PodFailurePolicyActionFailIndex
	InPlaceRestart             = "InPlaceRestart"                    // jobsetv1alpha2.InPlaceRestart
	SuccessAny                 = "Any"                               // jobsetv1alpha2.OperatorAny
)

// Field paths of the JobSet-level policies.
var (
	FailurePolicyPath = yamltree.Key(SpecKey, "failurePolicy")
	StartupPolicyPath = yamltree.Key(SpecKey, "startupPolicy")
	SuccessPolicyPath = yamltree.Key(SpecKey, "successPolicy")
	CoordinatorPath   = yamltree.Key(SpecKey, "coordinator")
)

// policies reads spec.failurePolicy and spec.startupPolicy.
func (r *reader) policies(spec *yaml.Node) Policies {
	var p Policies
	if fp := r.mapping(spec, SpecKey, "failurePolicy"); fp != nil {
		p.MaxRestarts = r.integer(fp, FailurePolicyPath, "maxRestarts")
		rules := yamltree.Key(FailurePolicyPath, "rules")
		for i, rule := range r.list(fp, FailurePolicyPath, "rules") {
			path := yamltree.Index(rules, i)
			p.FailureRules = append(p.FailureRules, FailureRule{
				Path:     path,
				Action:   r.str(rule, path, "action"),
				Reasons:  r.strings(rule, path, "onJobFailureReasons"),
				Messages: r.strings(rule, path, "onJobFailureMessagePatterns"),
				Targets:  r.strings(rule, path, "targetReplicatedJobs"),
			})
		}
	}
	if sp := r.mapping(spec, SpecKey, "startupPolicy"); sp != nil {
		p.StartupOrder = r.str(sp, StartupPolicyPath, "startupPolicyOrder")
	}
	if fp := r.mapping(spec, SpecKey, "failurePolicy"); fp != nil {
		p.RestartStrategy = r.str(fp, FailurePolicyPath, "restartStrategy")
	}
	if sp := r.mapping(spec, SpecKey, "successPolicy"); sp != nil {
		p.Success = &SuccessPolicy{
			Operator: r.str(sp, SuccessPolicyPath, "operator"),
			Targets:  r.strings(sp, SuccessPolicyPath, "targetReplicatedJobs"),
		}
	}
	if c := r.mapping(spec, SpecKey, "coordinator"); c != nil {
		p.Coordinator = &Coordinator{ReplicatedJob: r.str(c, CoordinatorPath, "replicatedJob")}
		if n := r.integer(c, CoordinatorPath, "jobIndex"); n != nil {
			p.Coordinator.JobIndex = *n
		}
		if n := r.integer(c, CoordinatorPath, "podIndex"); n != nil {
			p.Coordinator.PodIndex = *n
		}
	}
	return p
}

// retries reads the Job spec's per-index retries and podFailurePolicy.
func (r *reader) retries(job *yaml.Node, path string) Retries {
	rt := Retries{
		BackoffLimitPerIndex: r.integer(job, path, "backoffLimitPerIndex"),
		MaxFailedIndexes:     r.integer(job, path, "maxFailedIndexes"),
	}
	pfp := r.mapping(job, path, "podFailurePolicy")
	pfpPath := yamltree.Key(path, "podFailurePolicy")
	rules := yamltree.Key(pfpPath, "rules")
	for i, rule := range r.list(pfp, pfpPath, "rules") {
		at := yamltree.Index(rules, i)
		rt.PodFailureActions = append(rt.PodFailureActions, Field{Path: yamltree.Key(at, "action"), Value: r.str(rule, at, "action")})
	}
	sp := r.mapping(job, path, "successPolicy")
	spPath := yamltree.Key(path, "successPolicy")
	spRules := yamltree.Key(spPath, "rules")
	for i, rule := range r.list(sp, spPath, "rules") {
		at := yamltree.Index(spRules, i)
		rt.SuccessIndexes = append(rt.SuccessIndexes, Field{Path: at, Value: r.str(rule, at, "succeededIndexes")})
	}
	return rt
}

// dependsOn reads a replicatedJob's dependsOn.
func (r *reader) dependsOn(item *yaml.Node, path string) []Dependency {
	var deps []Dependency
	list := yamltree.Key(path, "dependsOn")
	for i, d := range r.list(item, path, "dependsOn") {
		at := yamltree.Index(list, i)
		deps = append(deps, Dependency{Path: at, Name: r.str(d, at, "name"), Status: r.str(d, at, "status")})
	}
	return deps
}

// dns reads a pod spec's dnsPolicy and dnsConfig.searches.
func (r *reader) dns(pod *yaml.Node, path string) DNS {
	d := DNS{Policy: r.str(pod, path, "dnsPolicy")}
	if cfg := r.mapping(pod, path, "dnsConfig"); cfg != nil {
		d.Searches = r.strings(cfg, yamltree.Key(path, "dnsConfig"), "searches")
	}
	return d
}
