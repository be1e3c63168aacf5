package kubelet

import (
	"context"
	"fmt"
	"slices"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// JobSetResult is how a JobSet ended.
type JobSetResult struct {
	Name string
	// Completed or Failed (or Running when Wait gave up).
	State  string
	Reason string
	Pods   []*Pod
}

// jobSetRun plays the JobSet and Job controllers for one JobSet: a Job per
// replicatedJob replica, pods per completion index (at most parallelism at
// once), failed pods retried up to backoffLimit, the success policy, the
// volumes of volumeClaimPolicies, and the deletion of still-active Jobs
// once the JobSet has finished.
type jobSetRun struct {
	c    *Cluster
	js   *v1alpha2.JobSet
	jobs []*jobRun

	mu     sync.Mutex
	state  string
	reason string
}

type jobRun struct {
	replicatedJob string
	index         int
	spec          batchv1.JobSpec
	pods          []*Pod
	state         string // "", Complete or Failed
}

func newJobSetRun(c *Cluster, js *v1alpha2.JobSet) (*jobSetRun, error) {
	r := &jobSetRun{c: c, js: js, state: "Running"}
	namespace := namespaceOr(js.Namespace)
	subdomain := js.Name
	dnsHostnames := true
	if n := js.Spec.Network; n != nil {
		if n.Subdomain != "" {
			subdomain = n.Subdomain
		}
		if n.EnableDNSHostnames != nil {
			dnsHostnames = *n.EnableDNSHostnames
		}
	}
	if err := validateVolumeClaimPolicies(js); err != nil {
		return nil, fmt.Errorf("JobSet %s: %w", js.Name, err)
	}
	for _, rj := range js.Spec.ReplicatedJobs {
		if len(rj.DependsOn) > 0 {
			return nil, fmt.Errorf("JobSet %s: replicatedJob %s: dependsOn is not simulated", js.Name, rj.Name)
		}
		template := rj.Template.DeepCopy()
		addClaimVolumes(js, &template.Spec.Template.Spec)
		// A missing claim would only fail the pods once they start; a test
		// wants to hear about it from Start.
		for _, v := range template.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				if _, err := claimDir(c.opts.Claims, namespace, v); err != nil {
					return nil, fmt.Errorf("JobSet %s: replicatedJob %s: %w", js.Name, rj.Name, err)
				}
			}
		}
		replicas := int(rj.Replicas)
		if replicas == 0 {
			replicas = 1
		}
		for j := range replicas {
			job := &jobRun{replicatedJob: rj.Name, index: j, spec: *template.Spec.DeepCopy()}
			completions := 1
			if job.spec.Completions != nil {
				completions = int(*job.spec.Completions)
			}
			for i := range completions {
				spec := job.spec.Template.Spec.DeepCopy()
				hostname := fmt.Sprintf("%s-%s-%d-%d", js.Name, rj.Name, j, i)
				p := &Pod{
					JobSet: js.Name, ReplicatedJob: rj.Name, JobIndex: j, Index: i,
					Hostname: hostname, Namespace: namespace, spec: spec,
				}
				if dnsHostnames {
					p.Domain = fmt.Sprintf("%s.%s.svc.%s", subdomain, namespace, c.opts.Domain)
				}
				if slices.Contains(c.opts.Held, hostname) {
					p.release = make(chan struct{})
				}
				job.pods = append(job.pods, p)
				c.pods = append(c.pods, p)
			}
			r.jobs = append(r.jobs, job)
		}
	}
	return r, nil
}

// claimName is the name the JobSet controller gives the claim it creates
// from a volumeClaimPolicies template.
func claimName(js *v1alpha2.JobSet, template string) string {
	return template + "-" + js.Name
}

// addClaimVolumes adds to a replicatedJob's pod template what the JobSet
// controller adds to the Jobs it creates: a volume for the claim of every
// volumeClaimPolicies template that a container or init container mounts
// by the template's name. A template the pod does not mount adds nothing.
func addClaimVolumes(js *v1alpha2.JobSet, pod *corev1.PodSpec) {
	for _, policy := range js.Spec.VolumeClaimPolicies {
		for _, t := range policy.Templates {
			if !mountsVolume(pod, t.Name) {
				continue
			}
			pod.Volumes = append(pod.Volumes, corev1.Volume{
				Name: t.Name,
				VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(js, t.Name)},
				},
			})
		}
	}
}

// validateVolumeClaimPolicies refuses what the JobSet webhook refuses, so
// that a JobSet the API server would reject does not run here: a template
// no replicatedJob mounts, and a pod volume with a template's name.
func validateVolumeClaimPolicies(js *v1alpha2.JobSet) error {
	for _, policy := range js.Spec.VolumeClaimPolicies {
		for _, t := range policy.Templates {
			mounted := false
			for _, rj := range js.Spec.ReplicatedJobs {
				pod := &rj.Template.Spec.Template.Spec
				for _, v := range pod.Volumes {
					if v.Name == t.Name {
						return fmt.Errorf("replicatedJob %s: volume %s conflicts with the volumeClaimPolicies template of that name", rj.Name, v.Name)
					}
				}
				mounted = mounted || mountsVolume(pod, t.Name)
			}
			if !mounted {
				return fmt.Errorf("no container of any replicatedJob mounts volumeClaimPolicies template %s", t.Name)
			}
		}
	}
	return nil
}

func mountsVolume(pod *corev1.PodSpec, name string) bool {
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for _, ct := range cs {
			if slices.ContainsFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name }) {
				return true
			}
		}
	}
	return false
}

func (r *jobSetRun) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan *jobRun)
	var wg sync.WaitGroup
	for _, job := range r.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job.state = r.runJob(ctx, job)
			select {
			case events <- job:
			case <-ctx.Done():
			}
		}()
	}
	go func() { wg.Wait(); close(events) }()
	finished := map[*jobRun]string{}
	for job := range events {
		finished[job] = job.state
		r.c.opts.Logf("job %s-%s-%d: %s", r.js.Name, job.replicatedJob, job.index, job.state)
		state, reason := r.decide(finished)
		if state != "Running" {
			r.mu.Lock()
			r.state, r.reason = state, reason
			r.mu.Unlock()
			r.c.opts.Logf("jobset %s: %s (%s)", r.js.Name, state, reason)
			cancel() // the controller deletes the Jobs still active
			break
		}
	}
	cancel()
	wg.Wait()
}

// decide applies the failure policy (no restarts are simulated: the first
// failed Job fails the JobSet) and the success policy.
func (r *jobSetRun) decide(finished map[*jobRun]string) (string, string) {
	for job, state := range finished {
		if state == "Failed" {
			return "Failed", fmt.Sprintf("job %s-%s-%d failed", r.js.Name, job.replicatedJob, job.index)
		}
	}
	operator, targets := v1alpha2.OperatorAll, []string(nil)
	if sp := r.js.Spec.SuccessPolicy; sp != nil {
		if sp.Operator != "" {
			operator = sp.Operator
		}
		targets = sp.TargetReplicatedJobs
	}
	all, any := true, false
	for _, job := range r.jobs {
		if len(targets) > 0 && !slices.Contains(targets, job.replicatedJob) {
			continue
		}
		if finished[job] == "Complete" {
			any = true
		} else {
			all = false
		}
	}
	if operator == v1alpha2.OperatorAny && any || operator == v1alpha2.OperatorAll && all {
		return "Completed", fmt.Sprintf("success policy %s met", operator)
	}
	return "Running", ""
}

// runJob runs a Job's pods, at most parallelism at once, retrying failed
// indexes while the Job's failures stay within backoffLimit.
func (r *jobSetRun) runJob(ctx context.Context, job *jobRun) string {
	parallelism := 1
	if job.spec.Parallelism != nil {
		parallelism = int(*job.spec.Parallelism)
	}
	backoffLimit := 6
	if job.spec.BackoffLimit != nil {
		backoffLimit = int(*job.spec.BackoffLimit)
	}
	jobCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, max(parallelism, 1))
	var mu sync.Mutex
	failures := 0
	failed := false
	var wg sync.WaitGroup
	for _, p := range job.pods {
		select {
		case slots <- struct{}{}:
		case <-jobCtx.Done():
		}
		if jobCtx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if p.release != nil {
				select {
				case <-p.release:
				case <-jobCtx.Done():
					return
				}
			}
			for {
				podCtx, remove := context.WithCancel(jobCtx)
				p.mu.Lock()
				p.remove = remove
				p.mu.Unlock()
				phase := r.c.runPod(podCtx, p)
				p.mu.Lock()
				p.remove = nil
				removed := p.removed
				p.mu.Unlock()
				remove()
				if phase == "Succeeded" || removed {
					return
				}
				mu.Lock()
				failures++
				over := failures > backoffLimit
				if over {
					failed = true
				}
				mu.Unlock()
				if over || jobCtx.Err() != nil {
					cancel() // a failed Job's remaining pods are deleted
					return
				}
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	switch {
	case failed:
		return "Failed"
	case ctx.Err() != nil:
		return "Deleted"
	}
	return "Complete"
}

func (r *jobSetRun) result() JobSetResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	var pods []*Pod
	for _, job := range r.jobs {
		pods = append(pods, job.pods...)
	}
	return JobSetResult{Name: r.js.Name, State: r.state, Reason: r.reason, Pods: pods}
}
