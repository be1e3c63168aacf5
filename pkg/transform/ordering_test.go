package transform_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/plan"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// orderedJobSet is a one-group JobSet with extra annotations (a flow
// map's contents after the selector, each starting with ", ").
func orderedJobSet(annotations string) string {
	return hRLHead + hJobSetItem("js", annotations, `    replicatedJobs:
    - name: w
      template:
        spec:
          completions: 2
          template:
            spec:
              containers: [{name: app, image: app, command: [hostname]}]
`)
}

// TestGeneratedObjectsOrderedBeforeTheJobSet: Argo CD and Helm apply the
// generated ConfigMap and Secret in the JobSet's phase and wave (or hook
// event) and before it, and keep them as long: they carry the JobSet's
// sync wave, hooks, delete policies and resource policy, its Helm weight
// less one (Helm breaks a tie by name, and the JobSet's name sorts
// first), and of its Argo CD sync options only those that decide pruning
// and deletion. A JobSet with none of them gives objects with none.
func TestGeneratedObjectsOrderedBeforeTheJobSet(t *testing.T) {
	for _, c := range []struct {
		name, annotations string
		want              map[string]string
	}{
		{"none", `, team: a`, nil},
		{"argo wave", `, argocd.argoproj.io/sync-wave: "-1"`, map[string]string{"argocd.argoproj.io/sync-wave": "-1"}},
		{"argo presync hook", `, argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: HookSucceeded`,
			map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}},
		{"argo skip", `, argocd.argoproj.io/hook: Skip`, map[string]string{"argocd.argoproj.io/hook": "Skip"}},
		{"argo sync options", `, argocd.argoproj.io/sync-options: "Replace=true, Prune=false,ServerSideApply=true,Delete=confirm"`,
			map[string]string{"argocd.argoproj.io/sync-options": "Prune=false,Delete=confirm"}},
		{"argo sync options without lifetime", `, argocd.argoproj.io/sync-options: "Replace=true"`, nil},
		{"helm pre-install hook", `, helm.sh/hook: "pre-install,pre-upgrade", helm.sh/hook-weight: "5", helm.sh/hook-delete-policy: before-hook-creation`,
			map[string]string{"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "4", "helm.sh/hook-delete-policy": "before-hook-creation"}},
		{"helm hook without weight", `, helm.sh/hook: post-install`, map[string]string{"helm.sh/hook": "post-install", "helm.sh/hook-weight": "-1"}},
		{"helm weight Helm cannot read", `, helm.sh/hook: pre-install, helm.sh/hook-weight: " 3"`,
			map[string]string{"helm.sh/hook": "pre-install", "helm.sh/hook-weight": "-1"}},
		{"helm negative weight", `, helm.sh/hook-weight: "-10"`, map[string]string{"helm.sh/hook-weight": "-11"}},
		{"helm keep", `, helm.sh/resource-policy: keep`, map[string]string{"helm.sh/resource-policy": "keep"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl, ok, out, err := hKRM(t, hProcessor(t), []byte(orderedJobSet(c.annotations)))
			if err != nil || !ok {
				t.Fatalf("refused (%v): %s", err, hDump(rl))
			}
			for kind, name := range map[string]string{"ConfigMap": "js" + plan.ConfigMapSuffix, "Secret": "js" + plan.SecretSuffix} {
				obj := hFind(rl, kind, name)
				if obj == nil {
					t.Fatalf("no %s in %s", kind, out)
				}
				got := map[string]string{}
				for k, v := range obj.GetAnnotations() {
					if strings.HasPrefix(k, "argocd.argoproj.io/") || strings.HasPrefix(k, "helm.sh/") {
						got[k] = v
					}
				}
				if len(got) == 0 {
					got = nil
				}
				if !maps.Equal(got, c.want) {
					t.Errorf("%s carries %v, want %v", kind, got, c.want)
				}
			}
			// The function on its own output changes nothing.
			rl2, ok, again, err := hKRM(t, hProcessor(t), out)
			if err != nil || !ok {
				t.Fatalf("second render refused (%v): %s", err, hDump(rl2))
			}
			if string(hItemsOnly(again)) != string(hItemsOnly(out)) {
				t.Errorf("second render differs:\n%s\nfirst:\n%s", again, out)
			}
		})
	}
}

// TestLowestHelmWeightRefused: the generated objects must come before the
// JobSet, which is impossible below the lowest weight Helm reads.
func TestLowestHelmWeightRefused(t *testing.T) {
	rl, ok, _, err := hKRM(t, hProcessor(t), []byte(orderedJobSet(`, helm.sh/hook: pre-install, helm.sh/hook-weight: "-9223372036854775808"`)))
	if err != nil {
		t.Fatal(err)
	}
	errs := hErrors(rl)
	if ok || len(errs) != 1 || errs[0].Field == nil || errs[0].Field.Path != "metadata.annotations[helm.sh/hook-weight]" || errs[0].Severity != fn.Error {
		t.Fatalf("want one error at the weight and the render refused (ok %v): %s", ok, hDump(rl))
	}
}
