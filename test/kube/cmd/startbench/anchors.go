package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// The anchors' end objects: the Flux Operator's MiniCluster runs its pods
// as one Indexed Job (named as the MiniCluster); the Trainer's TrainJob
// carries its own Complete and Failed conditions.
const (
	operatorEndResource = "jobs.batch"
	trainerEndResource  = "trainjobs.trainer.kubeflow.org"
)

// scriptMount is where the anchors' pods find the job script: both split
// their command into words, so `bash -c SCRIPT` would not reach them
// intact; the script comes in a ConfigMap and the command is `bash FILE`.
const scriptMount = "/mnt/startbench"

// scriptConfigMap holds the run's script for an anchor's pods.
func (s spec) scriptConfigMap() ([]byte, error) {
	return encode(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": s.name + "-script", "namespace": s.namespace},
		"data":     map[string]any{"job.sh": s.script + "\n"},
	})
}

// anchorManifest is an anchor's objects for the run: the script's
// ConfigMap and a MiniCluster, or a ClusterTrainingRuntime (cluster-wide,
// named as the run, deleted after it) and a TrainJob.
func (s spec) anchorManifest() ([]byte, error) {
	cm, err := s.scriptConfigMap()
	if err != nil {
		return nil, err
	}
	var objs []map[string]any
	switch s.v.kind {
	case kindOperator:
		objs = []map[string]any{s.miniCluster()}
	case kindTrainer:
		objs = []map[string]any{s.trainingRuntime(), s.trainJob()}
	default:
		return nil, fmt.Errorf("%s is not an anchor", s.v.kind)
	}
	out := cm
	for _, o := range objs {
		b, err := encode(o)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// miniCluster is the Flux Operator's workload: size pods, one task each,
// the jammy view, the app image running the script.
func (s spec) miniCluster() map[string]any {
	return map[string]any{
		"apiVersion": "flux-framework.org/v1alpha2",
		"kind":       "MiniCluster",
		"metadata":   map[string]any{"name": s.name, "namespace": s.namespace},
		"spec": map[string]any{
			"size":  s.pods,
			"tasks": s.pods,
			"flux":  map[string]any{"container": map[string]any{"image": viewImage}},
			"containers": []any{map[string]any{
				"image":   s.image,
				"command": "bash " + scriptMount + "/job.sh",
				// The operator names the pod's volume after the ConfigMap
				// and the mount after the key: the two must be the same.
				"volumes": map[string]any{s.name + "-script": map[string]any{
					"configMapName": s.name + "-script", "path": scriptMount, "items": map[string]any{"job.sh": "job.sh"},
				}},
			}},
		},
	}
}

// trainingRuntime is a flux ClusterTrainingRuntime of size pods, named as
// the run.
func (s spec) trainingRuntime() map[string]any {
	return map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1",
		"kind":       "ClusterTrainingRuntime",
		"metadata":   map[string]any{"name": s.name, "labels": map[string]any{"trainer.kubeflow.org/framework": "flux"}},
		"spec": map[string]any{
			"mlPolicy": map[string]any{"numNodes": s.pods, "flux": map[string]any{}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{map[string]any{
				"name": "node",
				// The step label makes the TrainJob's trainer (image,
				// command) apply to this replicatedJob's node container.
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
					"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
						"containers": []any{map[string]any{
							"name": "node", "image": s.image,
							"volumeMounts": []any{map[string]any{"name": "script", "mountPath": scriptMount}},
						}},
						"volumes": []any{map[string]any{"name": "script", "configMap": map[string]any{"name": s.name + "-script"}}},
					}}}},
			}}}},
		},
	}
}

// trainJob runs the script on the run's runtime.
func (s spec) trainJob() map[string]any {
	return map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1",
		"kind":       "TrainJob",
		"metadata":   map[string]any{"name": s.name, "namespace": s.namespace},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": s.name},
			"trainer": map[string]any{
				"numNodes": s.pods,
				"image":    s.image,
				"command":  []string{"bash", scriptMount + "/job.sh"},
			},
		},
	}
}

// deleteClusterScoped deletes what a run made outside its namespace: the
// Trainer's ClusterTrainingRuntime.
func (b *bench) deleteClusterScoped(s spec) {
	if s.v.kind != kindTrainer {
		return
	}
	if out, err := b.c.run(time.Minute, nil, "delete", "clustertrainingruntimes.trainer.kubeflow.org", s.name, "--ignore-not-found"); err != nil {
		fmt.Fprintf(os.Stderr, "startbench: %v %s\n", err, strings.TrimSpace(string(out)))
	}
}
