package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"

	"github.com/jobset-flux/jobset-flux/test/apiserver/internal/cluster"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// jobsetModule is the JobSet release whose CRD the tests install.
const jobsetModule = "sigs.k8s.io/jobset@v0.12.0"

const crdPath = "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"

var keepDir = flag.Bool("keep", false, "keep the cluster's temporary directory (logs, etcd data)")

// env is the cluster shared by every test in the package.
var env struct {
	startErr error // why there is no cluster; tests fail (CI) or skip on it
	cluster  *cluster.Cluster
	dyn      dynamic.Interface
	mapper   meta.RESTMapper
	warnings *warningCollector
	warnDyn  dynamic.Interface // a client whose warnings land in warnings
}

// repoRoot is the jobset-flux repository holding this module.
var repoRoot = func() string {
	p, err := testsupport.RepoRoot()
	if err != nil {
		panic(err)
	}
	return p
}()

// pathFromEnv returns $name when set, otherwise def.
func pathFromEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func kubeAPIServerBin() string {
	return pathFromEnv("KUBE_APISERVER_BIN", filepath.Join(repoRoot, "bin", "kube-apiserver"))
}
func etcdBin() string { return pathFromEnv("ETCD_BIN", filepath.Join(repoRoot, "bin", "etcd")) }
func jobsetFluxBin() string {
	return pathFromEnv("JOBSET_FLUX_BIN", filepath.Join(repoRoot, "bin", "jobset-flux"))
}
func examplesDir() string {
	return pathFromEnv("JOBSET_FLUX_EXAMPLES", filepath.Join(repoRoot, "examples"))
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		begin := time.Now()
		// Read the CRD (go mod download) while the cluster starts.
		type crdResult struct {
			obj *unstructured.Unstructured
			err error
		}
		crdCh := make(chan crdResult, 1)
		go func() {
			obj, err := loadJobSetCRD()
			crdCh <- crdResult{obj, err}
		}()
		opts := cluster.Options{KubeAPIServer: kubeAPIServerBin(), Etcd: etcdBin()}
		c, err := cluster.Start(ctx, opts)
		// A free port can be taken by another process before etcd or
		// kube-apiserver binds it: try again with new ports.
		for attempt := 2; err != nil && !errors.Is(err, cluster.ErrMissingBinary) && attempt <= 3 && ctx.Err() == nil; attempt++ {
			fmt.Fprintf(os.Stderr, "apiserver tests: start failed, attempt %d: %v\n", attempt, err)
			c, err = cluster.Start(ctx, opts)
		}
		if err != nil {
			env.startErr = err
			fmt.Fprintf(os.Stderr, "apiserver tests: no cluster: %v\n", err)
			return m.Run()
		}
		env.cluster = c
		defer func() {
			stopBegin := time.Now()
			c.Stop()
			fmt.Fprintf(os.Stderr, "apiserver tests: cluster stopped in %s\n", time.Since(stopBegin).Round(time.Millisecond))
		}()
		if *keepDir {
			c.KeepDir()
			fmt.Fprintf(os.Stderr, "apiserver tests: keeping %s\n", c.Dir)
		}
		fmt.Fprintf(os.Stderr, "apiserver tests: etcd + kube-apiserver ready at %s in %s (kube-apiserver used %s of CPU; load average %s)\n",
			c.URL, c.StartTime.Round(time.Millisecond), c.StartCPU.Round(10*time.Millisecond), loadAverage())
		crd := <-crdCh
		if err := crd.err; err != nil {
			env.startErr = fmt.Errorf("JobSet CRD: %w", err)
			fmt.Fprintf(os.Stderr, "apiserver tests: %v\n", env.startErr)
		} else if err := setup(ctx, c, crd.obj); err != nil {
			env.startErr = fmt.Errorf("cluster setup: %w\n%s", err, c.Logs(30))
			fmt.Fprintf(os.Stderr, "apiserver tests: %v\n", env.startErr)
		} else {
			fmt.Fprintf(os.Stderr, "apiserver tests: JobSet CRD established, cluster usable after %s\n", time.Since(begin).Round(time.Millisecond))
		}
		code := m.Run()
		if code != 0 {
			fmt.Fprintf(os.Stderr, "%s", c.ErrorLogs(10))
		}
		return code
	}()
	os.Exit(code)
}

// setup installs the JobSet CRD, waits until it is served, and builds the clients.
func setup(ctx context.Context, c *cluster.Cluster, crd *unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	env.dyn = dyn
	env.warnings = &warningCollector{}
	wc := rest.CopyConfig(c.Config)
	wc.WarningHandler = env.warnings
	if env.warnDyn, err = dynamic.NewForConfig(wc); err != nil {
		return err
	}

	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create JobSet CRD: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("JobSet CRD not Established: %w", err)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return err
	}
	// Discovery can lag behind Established for a moment.
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		groups, err := restmapper.GetAPIGroupResources(dc)
		if err != nil {
			return false, nil
		}
		mapper := restmapper.NewDiscoveryRESTMapper(groups)
		if _, err := mapper.RESTMapping(schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"}, "v1alpha2"); err != nil {
			return false, nil
		}
		env.mapper = mapper
		return true, nil
	})
}

// loadJobSetCRD reads the CRD shipped in the JobSet module, from the Go
// module cache (downloading the module through the proxy if needed).
func loadJobSetCRD() (*unstructured.Unstructured, error) {
	tmp, err := os.MkdirTemp("", "jobset-mod-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", jobsetModule)
	cmd.Dir = tmp // outside any module, so the download does not touch go.mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go mod download %s: %w (%s)", jobsetModule, err, out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, err
	}
	if mod.Error != "" || mod.Dir == "" {
		return nil, fmt.Errorf("go mod download %s: %s", jobsetModule, mod.Error)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, crdPath))
	if err != nil {
		return nil, err
	}
	objs, err := decodeObjects(data)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: want one CustomResourceDefinition, got %d objects", crdPath, len(objs))
	}
	return objs[0], nil
}

// requireCluster fails the test (CI=true) or skips it (a developer without
// the binaries) when the cluster could not be started.
func requireCluster(t *testing.T) {
	t.Helper()
	if env.startErr == nil {
		return
	}
	testsupport.SkipOrFail(t, "no API server (run `make test-apiserver` to build kube-apiserver and etcd): %v", env.startErr)
}

// decodeObjects splits multi-document YAML (or JSON) into objects, skipping
// empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 4096)
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// dryRunCreate sends obj to the API server as a server-side dry-run create
// (dryRun=All) in namespace ns (for namespaced kinds) and returns the
// server's error, if any.
func dryRunCreate(ctx context.Context, client dynamic.Interface, obj *unstructured.Unstructured, ns string) error {
	gvk := obj.GroupVersionKind()
	mapping, err := env.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("no resource for %s: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		obj = obj.DeepCopy()
		obj.SetNamespace(ns)
		ri = client.Resource(mapping.Resource).Namespace(ns)
	}
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}

// describeErr renders an API error with its status details (causes), the
// way the API server reported it.
func describeErr(err error) string {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return err.Error()
	}
	st := se.Status()
	s := fmt.Sprintf("%s (HTTP %d %s)", st.Message, st.Code, st.Reason)
	return s
}

// warningCollector records API server warnings (e.g. Pod Security "warn").
type warningCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningCollector) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns and clears the recorded warnings.
func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.msgs
	w.msgs = nil
	return m
}

// loadAverage is the 1-minute load average, to put start-up times in context.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}
