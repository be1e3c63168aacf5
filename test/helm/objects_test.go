package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
	"go.yaml.in/yaml/v3"
)

// objects parses a multi-document YAML stream into its objects by
// kind/namespace/name: what Kubernetes is given, whatever the order,
// formatting and comments (Helm's "# Source:" lines).
func objects(t *testing.T, stream string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	dec := yaml.NewDecoder(strings.NewReader(stream))
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the stream is not YAML: %v\n%s", err, stream)
		}
		if obj == nil {
			continue
		}
		meta, _ := obj["metadata"].(map[string]any)
		id := strings.Join([]string{str(obj["kind"]), str(meta["namespace"]), str(meta["name"])}, "/")
		if _, dup := out[id]; dup {
			t.Fatalf("%s twice in the stream:\n%s", id, stream)
		}
		out[id] = obj
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// sameObjects fails the test unless got and want hold the same objects.
func sameObjects(t *testing.T, what string, got, want map[string]map[string]any) {
	t.Helper()
	gotIDs, wantIDs := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))
	if !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("%s: objects %v, want %v", what, gotIDs, wantIDs)
	}
	for _, id := range gotIDs {
		if !reflect.DeepEqual(got[id], want[id]) {
			g, _ := json.MarshalIndent(got[id], "", "  ")
			w, _ := json.MarshalIndent(want[id], "", "  ")
			t.Errorf("%s: %s differs:\n--- got\n%s\n--- want\n%s", what, id, g, w)
		}
	}
}

// kustomizeBuild renders the objects of stream with kustomize and the
// function as its exec transformer (as examples/ do), with config as
// the transformer's JobSetFlux config, the key seed in its environment.
func kustomizeBuild(t *testing.T, stream, config string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"kustomization.yaml": "resources: [resources.yaml]\ntransformers: [flux.yaml]\n",
		"resources.yaml":     stream,
		"flux.yaml":          config,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return string(testsupport.KustomizeBuild(t, env.kustomize, env.fn, dir, "JOBSET_FLUX_KEY_SEED="+testSeed))
}

// runFunction runs jobset-flux on stdin ("-") with args, the key seed in
// its environment, and returns its stdout, stderr and exit code.
func runFunction(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(env.fn, append(args, "-")...)
	cmd.Env = append(os.Environ(), "JOBSET_FLUX_KEY_SEED="+testSeed)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}
