// Package jobsettest builds JobSets (jobset.x-k8s.io/v1alpha2) for the
// tests of the function's packages, the way kubernetes-sigs/jobset's
// pkg/util/testing wrappers do: a fluent builder that starts from the
// smallest JobSet the function renders (one replicatedJob of one pod,
// one container with a command, annotated for Flux) and sets what a test
// is about. It writes YAML, the function's input.
package jobsettest

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// JobSet is a JobSet under construction.
type JobSet struct {
	meta, spec map[string]any
	jobs       []*ReplicatedJob
}

// New returns a JobSet named name, annotated flux-framework.org/enabled:
// "true", with no replicatedJobs yet (see Jobs; YAML adds one named
// "workers" when there are none).
func New(name string) *JobSet {
	return &JobSet{
		meta: map[string]any{"name": name, "annotations": map[string]any{"flux-framework.org/enabled": "true"}},
		spec: map[string]any{},
	}
}

// Namespace sets metadata.namespace.
func (j *JobSet) Namespace(ns string) *JobSet { j.meta["namespace"] = ns; return j }

// Annotation sets one annotation (a setting: flux-framework.org/<name>).
func (j *JobSet) Annotation(key, value string) *JobSet {
	j.meta["annotations"].(map[string]any)[key] = value
	return j
}

// Label sets one label of the JobSet.
func (j *JobSet) Label(key, value string) *JobSet {
	labels, _ := j.meta["labels"].(map[string]any)
	j.meta["labels"] = setKey(labels, key, value)
	return j
}

// Spec sets a field of the JobSet's spec (failurePolicy, startupPolicy,
// network, ...) to value, a map or list as YAML would decode it.
func (j *JobSet) Spec(field string, value any) *JobSet { j.spec[field] = value; return j }

// Jobs appends replicatedJobs, in rank order.
func (j *JobSet) Jobs(rjs ...*ReplicatedJob) *JobSet { j.jobs = append(j.jobs, rjs...); return j }

// Obj returns the JobSet as YAML decodes it.
func (j *JobSet) Obj() map[string]any {
	jobs := j.jobs
	if len(jobs) == 0 {
		jobs = []*ReplicatedJob{Job("workers")}
	}
	var rjs []any
	for _, rj := range jobs {
		rjs = append(rjs, rj.obj())
	}
	spec := map[string]any{"replicatedJobs": rjs}
	for k, v := range j.spec {
		spec[k] = v
	}
	return map[string]any{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": j.meta, "spec": spec}
}

// YAML returns the JobSet as a YAML document, keys in sorted order.
func (j *JobSet) YAML() string {
	out, err := yaml.Marshal(j.Obj())
	if err != nil {
		panic(fmt.Sprintf("jobsettest: %v", err)) // only maps, lists and scalars go in
	}
	return string(out)
}

// ReplicatedJob is one entry of spec.replicatedJobs under construction.
type ReplicatedJob struct {
	name      string
	replicas  int
	job, pod  map[string]any
	container map[string]any
	others    []any
	deps      []any
	// jobMeta and podMeta are the annotations of the Job and pod templates.
	jobMeta, podMeta map[string]any
}

// Job returns a replicatedJob named name: one Job of one pod, whose
// container "app" (image "app") runs the command ["run"].
func Job(name string) *ReplicatedJob {
	return &ReplicatedJob{
		name: name, replicas: 1, job: map[string]any{}, pod: map[string]any{},
		container: map[string]any{"name": "app", "image": "app", "command": []any{"run"}},
	}
}

// Replicas sets the number of Jobs.
func (r *ReplicatedJob) Replicas(n int) *ReplicatedJob { r.replicas = n; return r }

// Completions sets the pods per Job.
func (r *ReplicatedJob) Completions(n int) *ReplicatedJob { return r.JobField("completions", n) }

// JobField sets a field of the Job spec (backoffLimit, podFailurePolicy, ...).
func (r *ReplicatedJob) JobField(field string, value any) *ReplicatedJob {
	r.job[field] = value
	return r
}

// PodField sets a field of the pod spec (dnsPolicy, hostNetwork, ...).
func (r *ReplicatedJob) PodField(field string, value any) *ReplicatedJob {
	r.pod[field] = value
	return r
}

// ContainerField sets a field of the container "app" (command, env,
// resources, ...); a nil value removes it.
func (r *ReplicatedJob) ContainerField(field string, value any) *ReplicatedJob {
	if value == nil {
		delete(r.container, field)
	} else {
		r.container[field] = value
	}
	return r
}

// JobAnnotation sets an annotation of the Job template's metadata.
func (r *ReplicatedJob) JobAnnotation(key, value string) *ReplicatedJob {
	r.jobMeta = setKey(r.jobMeta, key, value)
	return r
}

// PodAnnotation sets an annotation of the pod template's metadata.
func (r *ReplicatedJob) PodAnnotation(key, value string) *ReplicatedJob {
	r.podMeta = setKey(r.podMeta, key, value)
	return r
}

func setKey(m map[string]any, key, value string) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[key] = value
	return m
}

// DependsOn sets the replicatedJob's dependsOn, as YAML decodes it.
func (r *ReplicatedJob) DependsOn(deps []any) *ReplicatedJob { r.deps = deps; return r }

// Sidecar appends a container after "app", as YAML decodes it.
func (r *ReplicatedJob) Sidecar(container map[string]any) *ReplicatedJob {
	r.others = append(r.others, container)
	return r
}

func (r *ReplicatedJob) obj() map[string]any {
	pod := map[string]any{"containers": append([]any{r.container}, r.others...)}
	for k, v := range r.pod {
		pod[k] = v
	}
	podTemplate := map[string]any{"spec": pod}
	if r.podMeta != nil {
		podTemplate["metadata"] = map[string]any{"annotations": r.podMeta}
	}
	job := map[string]any{"template": podTemplate}
	for k, v := range r.job {
		job[k] = v
	}
	jobTemplate := map[string]any{"spec": job}
	if r.jobMeta != nil {
		jobTemplate["metadata"] = map[string]any{"annotations": r.jobMeta}
	}
	rj := map[string]any{"name": r.name, "replicas": r.replicas, "template": jobTemplate}
	if r.deps != nil {
		rj["dependsOn"] = r.deps
	}
	return rj
}
