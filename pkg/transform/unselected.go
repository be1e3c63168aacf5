package transform

import (
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// jobSetGroup is the API group of every JobSet version.
const jobSetGroup = "jobset.x-k8s.io/"

// checkUnselected reports the flux-framework.org/ annotations of a
// JobSet the function does not render (no enabled annotation, or
// "false"): README promises that a misspelt annotation under the prefix
// is an error, and a misspelt selector (enable, Enabled) is the worst
// kind, since it leaves the JobSet unrendered with exit 0. A setting
// spelt right on such a JobSet is a warning: it does nothing.
func checkUnselected(item *fn.KubeObject, reports *[]report) {
	if item.GetKind() != "JobSet" || !strings.HasPrefix(item.GetAPIVersion(), jobSetGroup) {
		return
	}
	annotations := item.GetAnnotations()
	if item.IsLocalConfig() || annotations[settings.EnabledAnnotation] == "true" {
		return
	}
	var found finding.List
	_, selector := annotations[settings.EnabledAnnotation]
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		name, ok := strings.CutPrefix(key, settings.AnnotationPrefix)
		if !ok || key == settings.EnabledAnnotation {
			continue
		}
		path := "metadata.annotations[" + key + "]"
		switch {
		case looksLikeEnabled(name):
			found.Errorf(path, "is not an annotation jobset-flux reads (did you mean %q?): this JobSet is not rendered for Flux; write %s: \"true\" to select it", settings.EnabledAnnotation, settings.EnabledAnnotation)
		case !isKnown(name):
			found.Errorf(path, "is not an annotation jobset-flux reads: %v; fix or remove it", settings.Check(name, ""))
		case !selector:
			found.Warnf(path, "sets a Flux setting, but the JobSet has no %s annotation, so it is not rendered and the setting does nothing; add %s: \"true\", or remove the setting", settings.EnabledAnnotation, settings.EnabledAnnotation)
		}
	}
	if len(found) > 0 {
		*reports = append(*reports, report{item, found})
	}
}

// isKnown reports whether name is a setting.
func isKnown(name string) bool { return slices.Contains(settings.Names(), name) }

// looksLikeEnabled reports whether an annotation name is a misspelling
// of enabled: another case, a plural or tense, or one or two letters off.
func looksLikeEnabled(name string) bool {
	const want = "enabled"
	n := strings.ToLower(strings.TrimSpace(name))
	return n == want || n == "enable" || n == "enables" || n == "enabling" || !isKnown(name) && distance(n, want) <= 2
}

// distance is the edit distance of two short strings.
func distance(a, b string) int {
	if len(a) > 32 || len(b) > 32 {
		return 32
	}
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
