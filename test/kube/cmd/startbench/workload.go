package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/yaml"
)

// outputMark starts the line every task (Flux) or pod (floor) prints
// first: the mark, its own clock as `date +%s.%N`, and who printed it (the
// host, and the Flux task rank where there is one: the brokers of Flux's
// own test-size instance share one host).
const outputMark = "startbench-output"

// fluxStartMark is the line Flux's own start prints just before `flux
// start --test-size`, with its clock.
const fluxStartMark = "startbench-flux-start"

// printLine is the first line of every job script.
const printLine = `echo "` + outputMark + ` $(date +%s.%N) $(hostname)${FLUX_TASK_RANK:+/$FLUX_TASK_RANK}"`

// jobScript is the user's command in every variant. Every task prints its
// clock first: that line is "the job's first output". Task 0 of a Flux job
// then prints rank 0's broker log ring (flux dmesg), whose entries carry
// the broker's own microsecond timestamps, among them the moment the last
// broker joined (quorum-full). In the floor FLUX_URI is unset and the
// script ends after its line.
const jobScript = printLine + `
if [ -n "${FLUX_URI:-}" ] && [ "${FLUX_TASK_RANK:-}" = 0 ]; then flux dmesg; fi`

// failScript is the failing command: every task prints its line and
// exits 3.
const failScript = printLine + `
exit 3`

// holdScript keeps the pods of the warm-up run up while their emptyDirs
// are measured; the namespace is deleted afterwards.
const holdScript = `sleep 600`

// The images every variant uses, and where the mounted view is (as
// jobset-flux's view-mount image lays it out).
const (
	defaultAppImage = "jobset-flux.test/debian:bookworm"
	viewImage       = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
	mountedView     = "/opt/views/view"
)

// spec is one workload of the benchmark.
type spec struct {
	v                      variant
	name, namespace, image string
	pods                   int
	script                 string
}

// newSpec is the workload of one run; hold makes its command the warm-up's.
func newSpec(v variant, name, namespace, image string, pods int, hold bool) spec {
	s := spec{v: v, name: name, namespace: namespace, image: image, pods: pods, script: jobScript}
	switch {
	case hold:
		s.script = holdScript
	case v.fail:
		s.script = failScript
	}
	return s
}

// input writes the JobSet a user would write: one replicatedJob, one Job
// of completions = parallelism = pods, one app container running script
// under bash. Only the annotations tell Flux from the floor, and one
// view-mount mode from the other.
func (s spec) input() ([]byte, error) {
	meta := map[string]any{"name": s.name, "namespace": s.namespace}
	if s.v.rendered() {
		ann := map[string]string{"flux-framework.org/enabled": "true"}
		if s.v.kind != kindCopy {
			ann["flux-framework.org/view-mount"] = s.v.kind
		}
		meta["annotations"] = ann
	}
	container := map[string]any{
		"name": "app", "image": s.image,
		"command": []string{"bash", "-c", s.script},
	}
	job := map[string]any{
		"completions": s.pods, "parallelism": s.pods,
		"template": map[string]any{"spec": map[string]any{"containers": []any{container}}},
	}
	return encode(map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   meta,
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "w", "replicas": 1, "template": map[string]any{"spec": job},
		}}},
	})
}

// fluxOwnPod is one pod of the app image with the view image mounted the
// way view-mount image mounts it, which times `flux start --test-size=N`
// running the same job over N brokers: Flux's own start on this machine,
// with no Kubernetes, network or DNS between the brokers. The environment
// points Flux at Fluxion as the entrypoint does.
func (s spec) fluxOwnPod() ([]byte, error) {
	n := strconv.Itoa(s.pods)
	script := `view=` + mountedView + `
export FLUX_MODULE_PATH_PREPEND="$view/lib/flux/modules" FLUX_MODPROBE_PATH_APPEND="$view/etc/flux/modprobe" FLUX_RC_EXTRA="$view/etc/flux"
echo "` + fluxStartMark + ` $(date +%s.%N)"
exec "$view/bin/flux" start --test-size=` + n + ` "$view/bin/flux" run -N ` + n + ` -n ` + n + ` bash -c "$STARTBENCH_JOB"`
	mount := func(sub string) map[string]any {
		return map[string]any{"name": "flux-view", "mountPath": "/" + sub, "subPath": sub, "readOnly": true}
	}
	return encode(map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": s.name, "namespace": s.namespace},
		"spec": map[string]any{
			"restartPolicy": "Never",
			"containers": []any{map[string]any{
				"name": "app", "image": s.image,
				"command":      []string{"bash", "-c", script},
				"env":          []any{map[string]any{"name": "STARTBENCH_JOB", "value": s.script}},
				"volumeMounts": []any{mount("opt/software"), mount("opt/views"), map[string]any{"name": "shm", "mountPath": "/dev/shm"}},
			}},
			"volumes": []any{
				map[string]any{"name": "flux-view", "image": map[string]any{"reference": viewImage, "pullPolicy": "IfNotPresent"}},
				map[string]any{"name": "shm", "emptyDir": map[string]any{"medium": "Memory"}},
			},
		},
	})
}

// manifest is what gets applied: a Flux JobSet rendered by the function
// in standalone mode (JobSet, ConfigMap, Secret), the floor as written,
// Flux's own start as one pod, an anchor's objects. Rendering happens
// before the clock starts: it is not start-up.
func (s spec) manifest(function, dir string) ([]byte, error) {
	switch {
	case s.v.kind == kindFluxOwn:
		return s.fluxOwnPod()
	case s.v.anchor():
		return s.anchorManifest()
	}
	in, err := s.input()
	if err != nil || !s.v.rendered() {
		return in, err
	}
	path := filepath.Join(dir, s.name+".in.yaml")
	if err := os.WriteFile(path, in, 0o644); err != nil {
		return nil, fmt.Errorf("write render input: %w", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(function, path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("render %s with %s: %w: %s", s.name, function, err, stderr.String())
	}
	return out, nil
}

// endResource is what the run's end is read from: the JobSet, the anchor's
// own object, or (Flux's own start) the pod itself.
func (s spec) endResource() string {
	switch s.v.kind {
	case kindFluxOwn:
		return ""
	case kindOperator:
		return operatorEndResource
	case kindTrainer:
		return trainerEndResource
	}
	return "jobsets.jobset.x-k8s.io"
}

// encode is YAML of one object, with a document separator after it.
func encode(obj map[string]any) ([]byte, error) {
	out, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %v: %w", obj["kind"], err)
	}
	return append(out, "---\n"...), nil
}
