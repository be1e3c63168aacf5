package plan

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
)

// The annotations by which Argo CD and Helm order what they apply and
// decide how long it lives. The generated objects must exist before the
// JobSet's pods mount them and as long as the JobSet does: they take the
// JobSet's phase, wave, hook and lifetime (orderingAnnotations).
const (
	ArgoSyncWave         = "argocd.argoproj.io/sync-wave"
	ArgoHook             = "argocd.argoproj.io/hook"
	ArgoHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	ArgoSyncOptions      = "argocd.argoproj.io/sync-options"
	HelmHook             = "helm.sh/hook"
	HelmHookWeight       = "helm.sh/hook-weight"
	HelmHookDeletePolicy = "helm.sh/hook-delete-policy"
	HelmResourcePolicy   = "helm.sh/resource-policy"
)

// copiedVerbatim are taken by the generated objects as the JobSet has them.
// Argo CD orders a phase's wave by kind, and every kind generated
// (ConfigMap, Secret, NetworkPolicy) sorts before a JobSet, so the same
// phase and wave put them first; a HookSucceeded hook is deleted when the
// whole sync ends, not when it is created, so the same delete policy
// keeps them while the JobSet runs. Helm deletes an event's hooks once
// all of them ran: the same policy gives both the same life.
var copiedVerbatim = []string{ArgoSyncWave, ArgoHook, ArgoHookDeletePolicy, HelmHook, HelmHookDeletePolicy, HelmResourcePolicy}

// lifetimeSyncOptions are the Argo CD sync options that decide whether an
// object is pruned or deleted with its Application: the generated objects
// share the JobSet's. The others (Replace, ServerSideApply, Validate, ...)
// are about how an object is applied, and stay the JobSet's own.
var lifetimeSyncOptions = []string{"Prune", "Delete"}

// orderingAnnotations are the annotations the generated objects carry so
// that Argo CD and Helm apply them before the JobSet and keep them as long:
// nil when the JobSet has none of them, so that its render is unchanged.
// Helm runs an event's hooks by weight, then by name, and the JobSet's
// name sorts before its generated objects' names: they take the JobSet's
// weight less one, which Argo CD also reads as the wave when sync-wave is
// unset. A weight Helm cannot read (it reads no spaces either), or none,
// counts as zero there, so here too.
func orderingAnnotations(annotations map[string]string) map[string]string {
	var out map[string]string
	put := func(key, value string) {
		if out == nil {
			out = map[string]string{}
		}
		out[key] = value
	}
	for _, key := range copiedVerbatim {
		if v, ok := annotations[key]; ok {
			put(key, v)
		}
	}
	v, weighted := annotations[HelmHookWeight]
	if _, hook := annotations[HelmHook]; weighted || hook {
		w, _ := strconv.Atoi(v)
		if w > math.MinInt {
			w--
		}
		put(HelmHookWeight, strconv.Itoa(w))
	}
	if v, ok := annotations[ArgoSyncOptions]; ok {
		var kept []string
		for _, opt := range strings.Split(v, ",") {
			key, _, _ := strings.Cut(strings.TrimSpace(opt), "=")
			if slices.Contains(lifetimeSyncOptions, key) {
				kept = append(kept, strings.TrimSpace(opt))
			}
		}
		if len(kept) > 0 {
			put(ArgoSyncOptions, strings.Join(kept, ","))
		}
	}
	return out
}

// checkOrdering refuses the one weight whose generated objects cannot
// come first: the lowest Helm reads.
func checkOrdering(js *jobset.JobSet) finding.List {
	var found finding.List
	if v, ok := js.Annotations[HelmHookWeight]; ok {
		if w, err := strconv.Atoi(v); err == nil && w == math.MinInt {
			found.Errorf("metadata.annotations["+HelmHookWeight+"]", "is the lowest weight Helm reads, so the generated ConfigMap and Secret, which must be created before the JobSet, cannot be given a lower one; raise it")
		}
	}
	return found
}
