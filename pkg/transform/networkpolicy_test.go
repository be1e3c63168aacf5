package transform_test

// Issue 41, class 3: the network-policy setting generates a NetworkPolicy
// that lets the instance's pods, and only them, talk to each other, for
// namespaces that deny traffic by default.

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

const npName = "js" + plan.NetworkPolicySuffix

// npJobSet is orderedJobSet in namespace team.
func npJobSet(annotations string) string {
	return strings.Replace(orderedJobSet(annotations), "    name: js\n", "    name: js\n    namespace: team\n", 1)
}

const npOn = `, flux-framework.org/network-policy: "true"`

// npRender renders in, which must succeed, and returns the list and its text.
func npRender(t *testing.T, in []byte) (*fn.ResourceList, []byte) {
	t.Helper()
	rl, ok, out, err := hKRM(t, hProcessor(t), in)
	if err != nil || !ok {
		t.Fatalf("refused (%v): %s", err, hDump(rl))
	}
	return rl, out
}

// TestNetworkPolicySpecAndMetadata: the policy selects the JobSet's pods
// by the JobSet controller's label, for both directions, with one rule
// each way whose only peers are those pods, on every port; its metadata
// are those of the ConfigMap: namespace, labels back to the JobSet, the
// JobSet's sync wave, and a digest.
func TestNetworkPolicySpecAndMetadata(t *testing.T) {
	_, out := npRender(t, []byte(npJobSet(npOn+`, argocd.argoproj.io/sync-wave: "-1"`)))
	policy, ok := hMeaning(t, out)["NetworkPolicy/"+npName].(map[string]any)
	if !ok {
		t.Fatalf("no NetworkPolicy %s in:\n%s", npName, out)
	}
	meta := policy["metadata"].(map[string]any)
	annotations := meta["annotations"].(map[string]any)
	if d, _ := annotations[plan.DigestAnnotation].(string); !strings.HasPrefix(d, "sha256:") {
		t.Errorf("digest annotation %q", d)
	}
	delete(annotations, plan.DigestAnnotation)
	pods := map[string]any{"matchLabels": map[string]any{"jobset.sigs.k8s.io/jobset-name": "js"}}
	peers := []any{map[string]any{"podSelector": pods}}
	want := map[string]any{
		"apiVersion": "networking.k8s.io/v1",
		"kind":       "NetworkPolicy",
		"metadata": map[string]any{
			"name":        npName,
			"namespace":   "team",
			"labels":      map[string]any{plan.ManagedByLabel: plan.ManagedByValue, plan.JobSetLabel: "js"},
			"annotations": map[string]any{"argocd.argoproj.io/sync-wave": "-1"},
		},
		"spec": map[string]any{
			"podSelector": pods,
			"policyTypes": []any{"Ingress", "Egress"},
			"ingress":     []any{map[string]any{"from": peers}},
			"egress":      []any{map[string]any{"to": peers}},
		},
	}
	if !reflect.DeepEqual(policy, want) {
		t.Errorf("NetworkPolicy:\n%#v\nwant:\n%#v", policy, want)
	}
}

// TestNoNetworkPolicyUnlessAsked: without the setting, or with it
// "false", the function writes no NetworkPolicy; the function config
// can ask for it for every JobSet, and an annotation say no to it.
func TestNoNetworkPolicyUnlessAsked(t *testing.T) {
	for _, c := range []struct {
		name, annotations, config string
		want                      bool
	}{
		{"unset", "", "", false},
		{"false", `, flux-framework.org/network-policy: "false"`, "", false},
		{"annotation", npOn, "", true},
		{"function config", "", "network-policy: \"true\"\n", true},
		{"function config, annotation false", `, flux-framework.org/network-policy: "false"`, "network-policy: \"true\"\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := npJobSet(c.annotations)
			if c.config != "" {
				in += "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: flux}\n  data:\n" + indentLines(c.config, "    ")
			}
			rl, out := npRender(t, []byte(in))
			if got := hFind(rl, "NetworkPolicy", npName) != nil; got != c.want {
				t.Errorf("NetworkPolicy generated: %t, want %t:\n%s", got, c.want, out)
			}
		})
	}
}

// TestNetworkPolicyRerenderSameBytes: the function on its own output,
// the policy included, writes the same bytes.
func TestNetworkPolicyRerenderSameBytes(t *testing.T) {
	first, second := hTwice(t, npJobSet(npOn))
	if !bytes.Contains(first, []byte("kind: NetworkPolicy")) {
		t.Fatalf("no NetworkPolicy:\n%s", first)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("the second render differs: %s", firstDiff(string(second), string(first)))
	}
}

// TestNetworkPolicyPrunedWhenNoLongerAsked: the policy of a previous
// render goes when the setting is turned off, when the JobSet is
// switched off, or when it is gone; the ConfigMap and Secret stay while
// the JobSet renders. A JobSet with an error is left as it was, and so
// is its policy; a policy changed since it was written is kept, with a
// warning that says why.
func TestNetworkPolicyPrunedWhenNoLongerAsked(t *testing.T) {
	_, rendered := npRender(t, []byte(npJobSet(npOn)))
	on := `flux-framework.org/network-policy: "true"`
	for _, c := range []struct {
		name       string
		edit       func(string) string
		ok, policy bool
		keepCM     bool
		phrase     string
	}{
		{name: "setting turned off", ok: true, keepCM: true, phrase: "removed: jobset-flux generated this NetworkPolicy for JobSet \"js\", whose network-policy setting is no longer \"true\"",
			edit: func(s string) string { return strings.Replace(s, on, `flux-framework.org/network-policy: "false"`, 1) }},
		{name: "setting removed", ok: true, keepCM: true, phrase: "removed:",
			edit: func(s string) string { return strings.Replace(s, on, `team: a`, 1) }},
		{name: "JobSet switched off", ok: true, phrase: "removed:",
			edit: func(s string) string {
				return strings.Replace(s, `flux-framework.org/enabled: "true"`, `flux-framework.org/enabled: "false"`, 1)
			}},
		{name: "JobSet gone", ok: true, phrase: "removed:",
			edit: func(s string) string {
				start := strings.Index(s, "- apiVersion: jobset.x-k8s.io/")
				end := start + 1 + strings.Index(s[start+1:], "\n- apiVersion: ")
				return s[:start] + s[end+1:]
			}},
		{name: "setting turned off, JobSet in error", ok: false, policy: true, keepCM: true,
			edit: func(s string) string {
				s = strings.Replace(s, on, `flux-framework.org/network-policy: "false"`, 1)
				return strings.Replace(s, `flux-framework.org/enabled: "true"`, `flux-framework.org/enabled: "true", flux-framework.org/port: "0"`, 1)
			}},
		{name: "setting turned off, policy edited since", ok: true, policy: true, keepCM: true, phrase: "is no longer what jobset-flux wrote",
			edit: func(s string) string {
				s = strings.Replace(s, on, `flux-framework.org/network-policy: "false"`, 1)
				return strings.Replace(s, "    policyTypes:\n", "    policyTypes:\n    - Egress\n", 1)
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := c.edit(string(rendered))
			if in == string(rendered) {
				t.Fatalf("the edit changed nothing")
			}
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
			if err != nil || ok != c.ok {
				t.Fatalf("ok %t (%v), want %t: %s", ok, err, c.ok, hDump(rl))
			}
			if got := hFind(rl, "NetworkPolicy", npName) != nil; got != c.policy {
				t.Errorf("NetworkPolicy kept: %t, want %t:\n%s", got, c.policy, out)
			}
			if got := hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix) != nil; got != c.keepCM {
				t.Errorf("ConfigMap kept: %t, want %t", got, c.keepCM)
			}
			all := w4Messages(rl, fn.Info) + "\n" + w4Messages(rl, fn.Warning)
			if c.phrase != "" && !strings.Contains(all, c.phrase) {
				t.Errorf("no result says %q:\n%s", c.phrase, all)
			}
			if c.phrase == "" && strings.Contains(all, "NetworkPolicy") {
				t.Errorf("a result is about the NetworkPolicy:\n%s", all)
			}
		})
	}
}

// TestUserNetworkPolicyOfTheNameRefused: a NetworkPolicy of the name the
// function would write that the function did not make is an error on
// the JobSet naming it and the ways out, and the JobSet is left as it
// was; without the setting it is none of the function's business, and a
// NetworkPolicy of another API group (Calico's) is another resource.
func TestUserNetworkPolicyOfTheNameRefused(t *testing.T) {
	user := func(apiVersion string) string {
		return indentDoc("apiVersion: " + apiVersion + "\nkind: NetworkPolicy\nmetadata:\n  name: " + npName + "\n  namespace: team\nspec:\n  podSelector: {}\n  policyTypes: [Ingress]\n")
	}
	for _, c := range []struct {
		name, annotations, apiVersion string
		refused                       bool
		policies                      int
	}{
		{"asked", npOn, "networking.k8s.io/v1", true, 1},
		{"not asked", "", "networking.k8s.io/v1", false, 1},
		{"Calico's", npOn, "projectcalico.org/v3", false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := npJobSet(c.annotations) + user(c.apiVersion)
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if ok == c.refused {
				t.Fatalf("ok %t, want %t: %s", ok, !c.refused, hDump(rl))
			}
			errs := w4Messages(rl, fn.Error)
			if c.refused {
				for _, phrase := range []string{`NetworkPolicy "` + npName + `"`, "not made by jobset-flux", "rename or remove it", "leave network-policy unset"} {
					if !strings.Contains(errs, phrase) {
						t.Errorf("the error does not say %q:\n%s", phrase, errs)
					}
				}
				if hFind(rl, "ConfigMap", "js"+plan.ConfigMapSuffix) != nil {
					t.Errorf("a ConfigMap was generated for the refused JobSet")
				}
			}
			policies := 0
			for _, it := range rl.Items {
				if it.GetKind() != "NetworkPolicy" {
					continue
				}
				policies++
				if it.GetAPIVersion() == c.apiVersion && it.GetLabels()[plan.ManagedByLabel] != "" {
					t.Errorf("the user's NetworkPolicy was replaced:\n%s", out)
				}
			}
			if policies != c.policies {
				t.Errorf("%d NetworkPolicies in the output, want %d:\n%s", policies, c.policies, out)
			}
		})
	}
}

// TestNetworkPolicyPlacedBesideTheJobSet: a JobSet read from a kpt
// package gets its policy in a file of its own beside it, and a
// re-render keeps that file.
func TestNetworkPolicyPlacedBesideTheJobSet(t *testing.T) {
	placement := `, internal.config.kubernetes.io/path: jobs/js.yaml, config.kubernetes.io/path: jobs/js.yaml`
	first, second := hTwice(t, npJobSet(npOn+placement))
	for _, key := range []string{"internal.config.kubernetes.io/path", "config.kubernetes.io/path"} {
		if want := key + ": jobs/networkpolicy_" + npName + ".yaml"; !bytes.Contains(first, []byte(want)) {
			t.Errorf("no %q in:\n%s", want, first)
		}
	}
	if !bytes.Equal(first, second) {
		t.Errorf("the second render differs: %s", firstDiff(string(second), string(first)))
	}
}
