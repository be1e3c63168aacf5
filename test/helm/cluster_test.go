package helm

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobset-flux/jobset-flux/test/testsupport"
)

// cluster is the project's test cluster, with the release checks below;
// make test-kube's session runs these tests (mk/helm.mk).
type cluster struct{ *testsupport.Cluster }

// needCluster returns the cluster, or fails the test under CI=true (and
// skips it elsewhere) when there is none or a tool is missing.
func needCluster(t *testing.T) *cluster {
	t.Helper()
	needTools(t)
	return &cluster{testsupport.NeedCluster(t)}
}

// snapshot is what an upgrade that changes nothing leaves alone: each
// object's uid and resourceVersion (the JobSet's generation instead, as
// its controller writes its status), and every pod's uid.
func (c *cluster) snapshot(t *testing.T, ns, release string) map[string]string {
	t.Helper()
	out, err := c.Run(nil, "get", "-n", ns, "-o", "json",
		"jobsets.jobset.x-k8s.io/"+release, "configmap/"+release+"-flux-entrypoint", "secret/"+release+"-flux-curve")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := c.Run(nil, "get", "-n", ns, "pods", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var list, podList struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name, UID, ResourceVersion string
				Generation                 int
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(pods), &podList); err != nil {
		t.Fatal(err)
	}
	snap := map[string]string{}
	for _, o := range list.Items {
		version := o.Metadata.ResourceVersion
		if o.Kind == "JobSet" {
			version = fmt.Sprintf("generation %d", o.Metadata.Generation)
		}
		snap[o.Kind+"/"+o.Metadata.Name] = o.Metadata.UID + " " + version
	}
	for _, p := range podList.Items {
		snap["Pod/"+p.Metadata.Name] = p.Metadata.UID
	}
	return snap
}

// gone waits until none of the release's objects is left.
func (c *cluster) gone(t *testing.T, ns, release string) {
	t.Helper()
	objs := []string{"jobsets.jobset.x-k8s.io/" + release, "configmap/" + release + "-flux-entrypoint", "secret/" + release + "-flux-curve"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, err := c.Run(nil, append([]string{"get", "-n", ns, "--ignore-not-found", "-o", "name"}, objs...)...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after helm uninstall these objects are still there:\n%s", out)
		}
		time.Sleep(2 * time.Second)
	}
}

// helm install of the chart through jobset-flux runs on the real
// cluster: the JobSet reaches Completed, every pod having run in one
// Flux instance. helm upgrade of the unchanged chart (the same key
// seed) changes nothing: the same manifest, no object rewritten, no pod
// replaced, revision 2 deployed. helm uninstall removes the JobSet and
// the ConfigMap and Secret the function added, which belong to the
// release.
func TestClusterInstallUpgradeUninstall(t *testing.T) {
	for _, major := range []int{3, 4} {
		t.Run(fmt.Sprintf("helm%d", major), func(t *testing.T) {
			t.Parallel()
			c := needCluster(t)
			h := newHelm(t, major)
			h.kubeconfig = c.Kubeconfig
			ns := c.Namespace(t, fmt.Sprintf("helm%d", major))
			const release = "hello"
			chart, err := filepath.Abs(chartDir())
			if err != nil {
				t.Fatal(err)
			}
			deploy := func(verb string) string {
				h.must(append([]string{verb, release, chart, "--namespace", ns}, h.postRender()...)...)
				return h.must("get", "manifest", release, "--namespace", ns)
			}
			installed := deploy("install")
			for _, want := range []string{"kind: JobSet", "name: hello-flux-entrypoint", "name: hello-flux-curve"} {
				if !strings.Contains(installed, want) {
					t.Errorf("the release's manifest lacks %q:\n%s", want, installed)
				}
			}
			if _, err := c.Run(nil, "wait", "-n", ns, "--for=condition=Completed", "--timeout=300s", "jobsets.jobset.x-k8s.io/"+release); err != nil {
				t.Fatalf("the JobSet did not complete: %v", err)
			}
			before := c.snapshot(t, ns, release)
			upgraded := deploy("upgrade")
			if upgraded != installed {
				t.Errorf("helm upgrade of the unchanged chart changed the manifest:\n--- installed\n%s\n--- upgraded\n%s", installed, upgraded)
			}
			if after := c.snapshot(t, ns, release); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("helm upgrade of the unchanged chart changed objects or pods:\nbefore %v\nafter  %v", before, after)
			}
			checkHistory(t, h.must("history", release, "--namespace", ns, "-o", "json"))
			h.must("uninstall", release, "--namespace", ns)
			c.gone(t, ns, release)
		})
	}
}

// checkHistory wants two revisions, the second deployed.
func checkHistory(t *testing.T, out string) {
	t.Helper()
	var revs []struct {
		Revision int    `json:"revision"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		t.Fatalf("helm history: %v\n%s", err, out)
	}
	if len(revs) != 2 || revs[1].Revision != 2 || revs[1].Status != "deployed" {
		t.Errorf("helm history: %s; want revision 2 deployed after revision 1", out)
	}
}

// TestClusterHookJobSet: a JobSet that is a Helm 4 pre-install and
// pre-upgrade hook (Helm 3 never post-renders hooks) gets its ConfigMap
// and Secret as hooks of the same events, created before it, so its
// pods find them on install; and on an upgrade that grows the instance
// from 2 pods to 3 the hook ConfigMap is made again before the hook
// JobSet, so the 3 brokers boot from the new broker.toml, not the
// previous revision's, and the JobSet Completes again.
func TestClusterHookJobSet(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	h := newHelm(t, 4)
	h.kubeconfig = c.Kubeconfig
	ns := c.Namespace(t, "helm4-hook")
	const release = "hooked"
	chart, err := filepath.Abs(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		verb string
		pods int
	}{{"install", 2}, {"upgrade", 3}} {
		h.must(append([]string{step.verb, release, chart, "--namespace", ns,
			"--set", "hook=pre-install\\,pre-upgrade", "--set", fmt.Sprintf("pods=%d", step.pods)}, h.postRender()...)...)
		hooks, err := c.Run(nil, "get", "-n", ns, "configmap/"+release+"-flux-entrypoint", "-o", `jsonpath={.metadata.annotations.helm\.sh/hook}{" "}{.metadata.annotations.helm\.sh/hook-weight}`)
		if err != nil {
			t.Fatalf("after helm %s: %v", step.verb, err)
		}
		if hooks != "pre-install,pre-upgrade -1" {
			t.Errorf("after helm %s the ConfigMap's hook and weight are %q, want \"pre-install,pre-upgrade -1\"", step.verb, hooks)
		}
		start := time.Now()
		if _, err := c.Run(nil, "wait", "-n", ns, "--for=condition=Completed", "--timeout=300s", "jobsets.jobset.x-k8s.io/"+release); err != nil {
			t.Fatalf("after helm %s the JobSet did not complete: %v", step.verb, err)
		}
		// The previous revision's pods may still be going: count this
		// JobSet's own.
		uid, err := c.Run(nil, "get", "-n", ns, "jobsets.jobset.x-k8s.io/"+release, "-o", "jsonpath={.metadata.uid}")
		if err != nil {
			t.Fatal(err)
		}
		pods, err := c.Run(nil, "get", "-n", ns, "pods", "-l", "jobset.sigs.k8s.io/jobset-uid="+uid, "-o", "name")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Fields(pods)); n != step.pods {
			t.Errorf("after helm %s: %d pods, want %d:\n%s", step.verb, n, step.pods, pods)
		}
		t.Logf("helm %s: Completed %s after the command returned, %d pods", step.verb, time.Since(start).Round(time.Second), step.pods)
	}
}
