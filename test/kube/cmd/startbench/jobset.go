package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// outputMark starts the line every task (Flux) or pod (floor) prints
// first: the mark, its own clock as `date +%s.%N`, its hostname.
const outputMark = "startbench-output"

// jobScript is the app container's command in both variants. Every task
// prints its clock first: that line is "the job's first output". Task 0
// of a Flux job then prints rank 0's broker log ring (flux dmesg), whose
// entries carry the broker's own microsecond timestamps, among them the
// moment the last broker joined (quorum-full). In the floor FLUX_URI is
// unset and the script ends after its line.
const jobScript = `echo "` + outputMark + ` $(date +%s.%N) $(hostname)"
if [ -n "${FLUX_URI:-}" ] && [ "${FLUX_TASK_RANK:-}" = 0 ]; then flux dmesg; fi`

// holdScript keeps the pods of the warm-up run up while their emptyDirs
// are measured; the namespace is deleted afterwards.
const holdScript = `sleep 600`

// spec is one JobSet of the benchmark.
type spec struct {
	name, namespace, image string
	pods                   int
	flux                   bool
	// viewMount is the view-mount mode of a Flux JobSet: "copy" (the
	// default, written as no annotation) or "image".
	viewMount string
	script    string
}

// input writes the JobSet a user would write: one replicatedJob, one Job
// of completions = parallelism = pods, one app container running script
// under bash. Only the annotations tell Flux from the floor, and one
// view-mount mode from the other.
func (s spec) input() ([]byte, error) {
	meta := map[string]any{"name": s.name, "namespace": s.namespace}
	if s.flux {
		ann := map[string]string{"flux-framework.org/enabled": "true"}
		if s.viewMount != "" && s.viewMount != "copy" {
			ann["flux-framework.org/view-mount"] = s.viewMount
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
	js := map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   meta,
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "w", "replicas": 1, "template": map[string]any{"spec": job},
		}}},
	}
	out, err := yaml.Marshal(js)
	if err != nil {
		return nil, fmt.Errorf("encode JobSet %s: %w", s.name, err)
	}
	return out, nil
}

// manifest is what gets applied: the Flux variant rendered by the
// function in standalone mode (JobSet, ConfigMap, Secret), the floor as
// written. Rendering happens before the clock starts: it is not start-up.
func (s spec) manifest(function, dir string) ([]byte, error) {
	in, err := s.input()
	if err != nil || !s.flux {
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
