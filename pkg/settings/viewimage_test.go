package settings_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// glibc of the flux-view images: a view's binaries need a glibc at least
// as new as the one they were built on, so a view runs in an app image
// whose glibc is the same or newer, never older.
var viewGlibc = map[string]float64{
	"ghcr.io/converged-computing/flux-view-ubuntu:tag-noble": 2.39, // Ubuntu 24.04
	"ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy": 2.35, // Ubuntu 22.04
	"ghcr.io/converged-computing/flux-view-ubuntu:tag-focal": 2.31, // Ubuntu 20.04
	"ghcr.io/converged-computing/flux-view-rocky:tag-9":      2.34, // Rocky Linux 9
	"ghcr.io/converged-computing/flux-view-rocky:tag-8":      2.28, // Rocky Linux 8
}

// glibc of the examples' app images (the wrapped containers).
var imageGlibc = map[string]float64{
	"nvcr.io/nvidia/pytorch:24.08-py3":        2.35, // NGC 24.08 is built on Ubuntu 22.04
	"jobset-flux.test/lammps-mpi:bookworm":    2.36, // Debian 12 (hack/kube/images' MPI app image)
	"ghcr.io/flux-framework/flux-sched:noble": 2.39, // Ubuntu 24.04
	"ubuntu:24.04": 2.39,
}

// TestExampleViewsRunInTheirImages: in every rendered example, each
// wrapped container's image can run the binaries of its pod's view image,
// which the default view-image must make true without per-example
// settings wherever it can.
func TestExampleViewsRunInTheirImages(t *testing.T) {
	if _, ok := viewGlibc[settings.Defaults().ViewImage]; !ok {
		t.Fatalf("the default view-image %s is not in the table: add its glibc", settings.Defaults().ViewImage)
	}
	files, _ := filepath.Glob("../../examples/*/expected.yaml")
	if len(files) == 0 {
		t.Fatal("no examples/*/expected.yaml")
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(data))}).Read()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, n := range nodes {
			if n.GetKind() != "JobSet" {
				continue
			}
			rjs, _ := n.Pipe(yaml.Lookup("spec", "replicatedJobs"))
			elements, _ := rjs.Elements()
			for _, rj := range elements {
				pod, _ := rj.Pipe(yaml.Lookup("template", "spec", "template", "spec"))
				view := ""
				inits, _ := pod.Pipe(yaml.Lookup("initContainers"))
				if inits != nil {
					items, _ := inits.Elements()
					for _, c := range items {
						if yaml.GetValue(c.Field("name").Value) == "flux-installer" {
							view = yaml.GetValue(c.Field("image").Value)
						}
					}
				}
				if view == "" {
					continue // not in the Flux instance
				}
				containers, _ := pod.Pipe(yaml.Lookup("containers"))
				items, _ := containers.Elements()
				for _, c := range items {
					cmd, _ := c.Pipe(yaml.Lookup("command"))
					if cmd == nil || len(cmd.YNode().Content) == 0 || cmd.YNode().Content[0].Value != "/mnt/flux/config/entrypoint.sh" {
						continue
					}
					image := yaml.GetValue(c.Field("image").Value)
					vg, ok := viewGlibc[view]
					ig, ok2 := imageGlibc[image]
					switch {
					case !ok:
						t.Errorf("%s: view image %s is not in the table", file, view)
					case !ok2:
						t.Errorf("%s: app image %s is not in the table: add its glibc", file, image)
					case vg > ig:
						t.Errorf("%s: the view %s (glibc %.2f) cannot run in %s (glibc %.2f): use a view built on the same or an older glibc", file, view, vg, image, ig)
					}
					checked++
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no wrapped container found in the examples")
	}
}
