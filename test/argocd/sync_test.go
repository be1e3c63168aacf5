package argocd

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/gitops-engine/pkg/cache"
	"github.com/argoproj/gitops-engine/pkg/sync"
	"github.com/argoproj/gitops-engine/pkg/sync/common"
	"github.com/argoproj/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/gitops-engine/pkg/utils/tracing"
	"github.com/jobset-flux/jobset-flux/test/testsupport"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
	"sigs.k8s.io/yaml"
)

// syncMark labels every object a test syncs, with the test's namespace:
// the objects the engine manages (isManaged), as an Application's
// tracking label does.
const syncMark = "test.jobset-flux.flux-framework.org/sync"

// syncCluster is the project's test cluster with a client config for
// gitops-engine: make test-kube's session runs the TestCluster tests
// (mk/argocd.mk).
type syncCluster struct {
	*testsupport.Cluster
	config *rest.Config
}

func needSyncCluster(t *testing.T) *syncCluster {
	t.Helper()
	c := &syncCluster{Cluster: testsupport.NeedCluster(t)}
	config, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", c.Kubeconfig, err)
	}
	c.config = config
	return c
}

// syncedJobSet is a 2-pod Flux JobSet with extra annotations, in ns, on
// the images the test cluster holds (the app image and jobset-flux's
// default view).
func syncedJobSet(ns string, annotations map[string]string) string {
	var extra strings.Builder
	for k, v := range annotations {
		fmt.Fprintf(&extra, "    %s: %q\n", k, v)
	}
	return `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: synced
  namespace: ` + ns + `
  annotations:
    flux-framework.org/enabled: "true"
    flux-framework.org/start-timeout: 2m
` + extra.String() + `spec:
  replicatedJobs:
    - name: w
      template:
        spec:
          completions: 2
          template:
            spec:
              containers:
                - name: app
                  image: jobset-flux.test/debian:bookworm
                  command: [hostname]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ` + ns + `
data: {wave: "0"}
`
}

// renderForSync renders docs with bin/jobset-flux (a fixed key seed) and
// returns the objects, each marked for the engine.
func renderForSync(t *testing.T, docs, ns string) []*unstructured.Unstructured {
	t.Helper()
	root, err := testsupport.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "jobset-flux")
	if err := testsupport.Executable(bin); err != nil {
		testsupport.SkipOrFail(t, "jobset-flux: %v (make build)", err)
	}
	cmd := exec.Command(bin, "-")
	cmd.Env = []string{"JOBSET_FLUX_KEY_SEED=" + exampleSeed}
	cmd.Stdin = strings.NewReader(docs)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("jobset-flux: %v\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(out.String(), "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("reading the render: %v\n%s", err, doc)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[syncMark] = ns
		u.SetLabels(labels)
		objs = append(objs, u)
	}
	return objs
}

// syncResult is what one sync by Argo CD's engine did.
type syncResult struct {
	err     error
	results []common.ResourceSyncResult
	took    time.Duration
}

// order is the execution order of the synced object of kind and name.
func (r syncResult) order(kind, name string) (int, bool) {
	for _, res := range r.results {
		if res.ResourceKey.Kind == kind && res.ResourceKey.Name == name {
			return res.Order, true
		}
	}
	return 0, false
}

// argoSync syncs objs into ns as Argo CD's application controller does:
// every pass reads the live objects from a cluster cache of the
// namespace, reconciles them with objs and runs one step of
// gitops-engine's sync context, carrying the operation's state from the
// pass before (the controller's loop: a sync context of its own keeps the
// live objects it started with, so it never sees a created object become
// healthy). The JobSet health check of deploy/argocd runs in Argo CD's
// Lua VM, so a multi-step sync waits for a JobSet to Complete. It gives
// up after timeout.
func argoSync(t *testing.T, c *syncCluster, ns string, objs []*unstructured.Unstructured, timeout time.Duration) syncResult {
	t.Helper()
	overrides := healthOverrides(t, patchedArgoCDConfigMap(t))
	log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(0)))
	clusterCache := cache.NewClusterCache(c.config,
		cache.SetNamespaces([]string{ns}),
		cache.SetLogr(log),
		cache.SetPopulateResourceInfoHandler(func(un *unstructured.Unstructured, _ bool) (any, bool) {
			mark := un.GetLabels()[syncMark]
			return mark, mark != ""
		}),
	)
	if err := clusterCache.EnsureSynced(); err != nil {
		t.Fatalf("gitops-engine cluster cache: %v", err)
	}
	defer clusterCache.Invalidate()
	kubectl := &kube.KubectlCmd{Log: log, Tracer: tracing.NopTracer{}}
	isManaged := func(r *cache.Resource) bool { return r.Info == ns }
	start := time.Now()
	var (
		phase   common.OperationPhase
		message string
		results []common.ResourceSyncResult
	)
	startedAt := metav1.Now()
	for {
		live, err := clusterCache.GetManagedLiveObjs(objs, isManaged)
		if err != nil {
			return syncResult{err: err, results: results, took: time.Since(start)}
		}
		reconciled := sync.Reconcile(objs, live, ns, clusterCache)
		syncCtx, cleanup, err := sync.NewSyncContext("rev1", reconciled, c.config, c.config, kubectl, ns, clusterCache.GetOpenAPISchema(),
			sync.WithLogr(log), sync.WithHealthOverride(lua.ResourceHealthOverrides(overrides)),
			sync.WithInitialState(phase, message, results, startedAt))
		if err != nil {
			return syncResult{err: err, took: time.Since(start)}
		}
		syncCtx.Sync()
		phase, message, results = syncCtx.GetState()
		cleanup()
		if phase.Completed() {
			if phase != common.OperationSucceeded {
				err = fmt.Errorf("sync %s: %s", phase, message)
			}
			return syncResult{err: err, results: results, took: time.Since(start)}
		}
		if time.Since(start) > timeout {
			return syncResult{err: fmt.Errorf("still %s after %s: %s", phase, timeout, message), results: results, took: time.Since(start)}
		}
		time.Sleep(time.Second)
	}
}

// TestClusterSyncWaveAndHook: Argo CD's own sync (gitops-engine, with the
// JobSet health check) of a Flux JobSet in sync wave -1, and of one that
// is a PreSync hook, each beside a plain ConfigMap in wave 0. The
// generated ConfigMap and Secret carry the JobSet's wave or hook, so the
// engine applies them before the JobSet, whose pods start, and the sync
// Succeeds once the JobSet Completes. The control strips the copied
// annotations from the generated objects, as renders did before: the
// engine waits in wave -1 for a JobSet whose pods wait for a ConfigMap
// of wave 0, and neither comes.
func TestClusterSyncWaveAndHook(t *testing.T) {
	c := needSyncCluster(t)
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		strip       bool
	}{
		{"wave", map[string]string{"argocd.argoproj.io/sync-wave": "-1"}, false},
		{"presync-hook", map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}, false},
		{"wave-unordered", map[string]string{"argocd.argoproj.io/sync-wave": "-1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := c.Namespace(t, "argo-"+tc.name)
			objs := renderForSync(t, syncedJobSet(ns, tc.annotations), ns)
			if tc.strip {
				for _, o := range objs {
					if o.GetKind() != "JobSet" {
						o.SetAnnotations(withoutArgo(o.GetAnnotations()))
					}
				}
				r := argoSync(t, c, ns, objs, 60*time.Second)
				if r.err == nil {
					t.Fatalf("the sync succeeded in %s; the control expects it to wait for the JobSet", r.took.Round(time.Second))
				}
				if out, _ := c.Run(nil, "get", "-n", ns, "configmap", "synced-flux-entrypoint", "--ignore-not-found", "-o", "name"); out != "" {
					t.Errorf("the wave-0 ConfigMap exists: %s", out)
				}
				t.Logf("unordered: the sync still waits after %s (%v); no ConfigMap for the pods", r.took.Round(time.Second), r.err)
				return
			}
			r := argoSync(t, c, ns, objs, 5*time.Minute)
			if r.err != nil {
				t.Fatalf("sync: %v (after %s)", r.err, r.took.Round(time.Second))
			}
			js, ok := r.order("JobSet", "synced")
			if !ok {
				t.Fatalf("the JobSet was not synced: %+v", r.results)
			}
			for _, kind := range []string{"ConfigMap", "Secret"} {
				name := "synced-flux-entrypoint"
				if kind == "Secret" {
					name = "synced-flux-curve"
				}
				if o, ok := r.order(kind, name); !ok || o >= js {
					t.Errorf("%s %s synced at %d (found %v), the JobSet at %d: want it before", kind, name, o, ok, js)
				}
			}
			if app, ok := r.order("ConfigMap", "app"); !ok || app <= js {
				t.Errorf("the wave-0 ConfigMap synced at %d (found %v), the JobSet at %d: want it after", app, ok, js)
			}
			state, err := c.Run(nil, "get", "-n", ns, "jobsets.jobset.x-k8s.io/synced", "-o", `jsonpath={.status.conditions[?(@.status=="True")].type}`)
			if err != nil || !strings.Contains(state, "Completed") {
				t.Errorf("JobSet conditions %q (%v), want Completed", state, err)
			}
			t.Logf("synced in %s; order: %s", r.took.Round(time.Second), orderOf(r.results))
		})
	}
}

// withoutArgo is annotations without Argo CD's.
func withoutArgo(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if !strings.HasPrefix(k, "argocd.argoproj.io/") {
			out[k] = v
		}
	}
	return out
}

// orderOf is the sync's results in execution order, for the log.
func orderOf(results []common.ResourceSyncResult) string {
	byOrder := map[int]string{}
	for _, r := range results {
		byOrder[r.Order] += fmt.Sprintf("%s/%s(%s) ", r.ResourceKey.Kind, r.ResourceKey.Name, r.SyncPhase)
	}
	var s strings.Builder
	for i := 0; i <= len(results); i++ {
		s.WriteString(byOrder[i])
	}
	return strings.TrimSpace(s.String())
}
