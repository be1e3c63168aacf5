package jobsetrender

import (
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/jobset-flux/jobset-flux/pkg/yamltree"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The failure policies infra-restarts writes (see plan/restarts.go): the
// JobSet restarts up to maxRestarts times, but fails at once when a Job
// failed by its podFailurePolicy, which each Job of the instance has.

// failurePolicyKey and podFailurePolicyKey are the fields written.
const (
	failurePolicyKey    = "failurePolicy"
	podFailurePolicyKey = "podFailurePolicy"
)

// jobSetFailurePolicy is the JobSet's spec.failurePolicy.
func jobSetFailurePolicy(maxRestarts *yaml.Node) *yaml.Node {
	return yamltree.Map(
		yamltree.KV("maxRestarts", maxRestarts),
		yamltree.KV("rules", yamltree.Seq(yamltree.Map(
			yamltree.KV("name", yamltree.String(plan.ApplicationFailureRule)),
			yamltree.KV("action", yamltree.String(jobset.FailJobSet)),
			yamltree.KV("onJobFailureReasons", yamltree.Strings("PodFailurePolicy")),
		))),
	)
}

// podFailurePolicy is a Job's podFailurePolicy: a pod the cluster took
// away, or whose wrapped container exited with an infrastructure code,
// is counted (and fails the Job, whose backoffLimit is 0, for the JobSet
// to restart); any other failure of the wrapped container fails the Job
// as an application failure.
func podFailurePolicy(container *yaml.Node) *yaml.Node {
	codes := make([]*yaml.Node, len(plan.InfraExitCodes))
	for i, c := range plan.InfraExitCodes {
		codes[i] = yamltree.Int(c)
	}
	values := yamltree.Seq(codes...)
	values.Style = yaml.FlowStyle
	return yamltree.Map(yamltree.KV("rules", yamltree.Seq(
		yamltree.Map(
			yamltree.KV("action", yamltree.String("Count")),
			yamltree.KV("onPodConditions", yamltree.Seq(yamltree.Map(
				yamltree.KV("type", yamltree.String("DisruptionTarget")),
				yamltree.KV("status", yamltree.String("True")),
			))),
		),
		yamltree.Map(
			yamltree.KV("action", yamltree.String("FailJob")),
			yamltree.KV("onExitCodes", yamltree.Map(
				yamltree.KV("containerName", container),
				yamltree.KV("operator", yamltree.String("NotIn")),
				yamltree.KV("values", values),
			)),
		),
	)))
}

// setRestartPolicies writes the failure policies of infra-restarts.
func setRestartPolicies(root *yaml.Node, p *plan.Plan, jobs map[int]*yaml.Node) {
	spec := yamltree.Get(root, jobset.SpecKey)
	yamltree.Set(spec, failurePolicyKey, jobSetFailurePolicy(yamltree.Int(p.Settings.InfraRestarts)), jobset.ReplicatedJobsKey)
	for _, g := range p.Groups {
		yamltree.Set(jobs[g.Index], podFailurePolicyKey, podFailurePolicy(yamltree.String(g.ContainerName)), jobset.TemplateKey)
	}
}

// stripRestartPolicies removes the failure policies infra-restarts wrote,
// recognised by their whole shape (any maxRestarts, any container).
func stripRestartPolicies(root *yaml.Node) {
	spec := yamltree.Get(root, jobset.SpecKey)
	if fp, ok := yamltree.Lookup(spec, failurePolicyKey); ok && matches(fp, jobSetFailurePolicy(yamltree.String(anyNode))) {
		removeKey(spec, failurePolicyKey)
	}
	rjs, _ := jobset.ReplicatedJobNodes(root)
	for _, rj := range rjs {
		job := jobset.JobSpec(rj)
		if pfp, ok := yamltree.Lookup(job, podFailurePolicyKey); ok && matches(pfp, podFailurePolicy(yamltree.String(anyString))) {
			removeKey(job, podFailurePolicyKey)
		}
	}
}
