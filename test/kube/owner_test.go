package kube

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// owner-references on the real cluster: rank 0 makes its JobSet the owner
// of the objects generated for it, so that the garbage collector deletes
// them with the JobSet, and its credentials patch nothing else.

// ownedObjects are the objects owner-references hands to the JobSet.
func ownedObjects(name string) []string {
	return []string{"configmap/" + name + "-flux-entrypoint", "secret/" + name + "-flux-curve",
		"role/" + name + "-flux-owner", "rolebinding/" + name + "-flux-owner"}
}

// ownedJobSet renders a 2-pod JobSet with owner-references in the
// namespace, running command, with more annotations and extra spec fields.
func ownedJobSet(t *testing.T, n *namespace, name string, command []string, annotations map[string]string, spec map[string]any) []byte {
	t.Helper()
	ann := map[string]string{"flux-framework.org/owner-references": "true"}
	maps.Copy(ann, annotations)
	in := decode(t, []byte(jobSet(t, name, ann, command, group{name: "w", replicas: 1, completions: 2})))
	set(t, in[0], n.name, "metadata", "namespace")
	for k, v := range spec {
		set(t, in[0], v, "spec", k)
	}
	return render(t, string(in.encode(t)))
}

// waitOwned waits until every object has its JobSet as owner.
func waitOwned(t *testing.T, n *namespace, jobSet string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, obj := range ownedObjects(jobSet) {
		for {
			out, _ := n.run(nil, "get", obj, "-o", "jsonpath={.metadata.ownerReferences[*].kind}/{.metadata.ownerReferences[*].name}")
			if string(out) == "JobSet/"+jobSet {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: owner %q, want JobSet/%s", obj, out, jobSet)
			}
			time.Sleep(time.Second)
		}
	}
}

// waitGone waits until none of the objects is left.
func waitGone(t *testing.T, n *namespace, objects []string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, obj := range objects {
		for {
			out, err := n.run(nil, "get", obj, "--ignore-not-found", "-o", "name")
			if err == nil && strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is still there 2m after its JobSet went", obj)
			}
			time.Sleep(time.Second)
		}
	}
}

// patchWithPodToken runs, in rank 0's pod, a strategic-merge PATCH of
// the API path with the pod's token and prints the HTTP status.
const patchWithPodToken = `import json, os, ssl, sys, urllib.request, urllib.error
host = os.environ["KUBERNETES_SERVICE_HOST"]
if ":" in host:
    host = "[" + host + "]"
token = open("/mnt/flux/owner/token").read().strip()
request = urllib.request.Request("https://" + host + ":" + os.environ.get("KUBERNETES_SERVICE_PORT", "443") + "/" + sys.argv[1],
    data=json.dumps({"metadata": {"labels": {"patched": "yes"}}}).encode(), method="PATCH",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/strategic-merge-patch+json"})
try:
    print(urllib.request.urlopen(request, context=ssl.create_default_context(cafile="/mnt/flux/owner/ca.crt")).status)
except urllib.error.HTTPError as e:
    print(e.code)
`

// TestOwnerReferences: with owner-references, rank 0 makes the JobSet the
// owner of its ConfigMap, Secret, Role and RoleBinding; the pod's token
// can patch none of the namespace's other objects (a test tries: another
// ConfigMap, another Secret, the JobSet); kubectl delete jobset takes
// the four objects with it, and so does ttlSecondsAfterFinished.
func TestOwnerReferences(t *testing.T) {
	t.Parallel()
	n := newNamespace(t, "owner")
	n.apply([]byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: %[1]s}\ndata: {a: b}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: other, namespace: %[1]s}\nstringData: {a: b}\n", n.name)))
	n.apply(ownedJobSet(t, n, "own", []string{"sleep", "30"}, nil, nil))
	start := time.Now()
	waitOwned(t, n, "own")
	t.Logf("+%s the JobSet owns its 4 objects", time.Since(start).Round(time.Second))

	leader := podNow(t, n, "w", 0)
	core := "api/v1/namespaces/" + n.name + "/"
	for path, want := range map[string]string{
		core + "configmaps/own-flux-entrypoint":                                   "200",
		core + "configmaps/other":                                                 "403",
		core + "secrets/other":                                                    "403",
		"apis/jobset.x-k8s.io/v1alpha2/namespaces/" + n.name + "/jobsets/own":     "403",
		"apis/rbac.authorization.k8s.io/v1/namespaces/" + n.name + "/roles/other": "403",
	} {
		out, err := n.run(nil, "exec", leader, "-c", "app", "--", "/mnt/flux/install/view/bin/flux", "python", "-c", patchWithPodToken, path)
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("PATCH %s with rank 0's token: %q (%v), want %s", path, got, err, want)
		}
	}
	n.expectEnd("own", jobSetCompleted, instanceTimeout)
	if out, err := n.run(nil, "delete", "jobset", "own", "--wait=false"); err != nil {
		t.Fatalf("delete jobset: %v: %s", err, out)
	}
	deleted := time.Now()
	waitGone(t, n, ownedObjects("own"))
	t.Logf("kubectl delete jobset: its 4 objects gone %s later", time.Since(deleted).Round(time.Second))
	if out, _ := n.run(nil, "get", "configmap/other", "secret/other", "-o", "name"); strings.Count(string(out), "/other") != 2 {
		t.Errorf("the namespace's other objects are gone too: %q", out)
	}

	n.apply(ownedJobSet(t, n, "ttl", []string{"true"}, nil, map[string]any{"ttlSecondsAfterFinished": 5}))
	waitOwned(t, n, "ttl")
	n.expectEnd("ttl", jobSetCompleted, instanceTimeout)
	ended := time.Now()
	waitGone(t, n, append(ownedObjects("ttl"), "jobset/ttl"))
	t.Logf("ttlSecondsAfterFinished 5: the JobSet and its 4 objects gone %s after Completed", time.Since(ended).Round(time.Second))
}

// TestOwnerReferencesDenied: where rank 0 cannot reach the API server (a
// namespace that denies every flow but DNS, and the render's own
// NetworkPolicy for the instance), rank 0 warns in its log, the instance
// Completes as it would have, and the objects stay, with no owner.
func TestOwnerReferencesDenied(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	n := newNamespace(t, "owner-denied")
	n.apply([]byte(denyAllButDNS(clusterDNS(t).server)))
	n.apply(ownedJobSet(t, n, "fenced", []string{"sleep", "60"}, map[string]string{"flux-framework.org/network-policy": "true"}, nil))
	n.expectEnd("fenced", jobSetCompleted, instanceTimeout)

	leader := podNow(t, n, "w", 0)
	log := n.logs(leader, "app")
	i := strings.Index(log, "warning: owner-references: ")
	if i < 0 {
		t.Fatalf("rank 0's log has no owner-references warning:\n%s", log)
	}
	t.Logf("rank 0: %s", strings.SplitN(log[i:], "\n", 2)[0])
	for _, obj := range ownedObjects("fenced") {
		out, err := n.run(nil, "get", obj, "-o", "jsonpath={.metadata.ownerReferences}")
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s: owners %q (%v), want it there with none", obj, out, err)
		}
	}
}
