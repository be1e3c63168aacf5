package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// checkMisplaced reports what a user meant for the JobSet but wrote where
// nothing reads it, so that it would be dropped without a word: a Flux
// setting as a label of the JobSet or in a Job or pod template's metadata (the render reads settings
// from the JobSet's annotations only), Kueue's queue label there (Kueue
// queues a JobSet by the JobSet's own label, so the instance would start
// unqueued), and view-copy-medium where nothing is copied.
func checkMisplaced(js *jobset.JobSet, s *settings.Settings) finding.List {
	var found finding.List
	for _, key := range slices.Sorted(maps.Keys(js.Queueing.Labels)) {
		if strings.HasPrefix(key, settings.AnnotationPrefix) {
			found.Errorf("metadata.labels["+key+"]", "is a label: jobset-flux reads its settings from metadata.annotations only, so this one does nothing; move it to metadata.annotations")
		}
	}
	_, queued := js.Queueing.Labels[QueueLabel]
	for _, rj := range js.ReplicatedJobs {
		for _, tm := range rj.Templates {
			for _, field := range []struct {
				name string
				keys []string
			}{{"annotations", tm.Annotations}, {"labels", tm.Labels}} {
				for _, key := range field.keys {
					path := fmt.Sprintf("%s.%s[%s]", tm.Path, field.name, key)
					switch {
					case strings.HasPrefix(key, settings.AnnotationPrefix):
						found.Errorf(path, "is not read here: jobset-flux reads its settings from the JobSet's own metadata.annotations, for the whole instance; move it there (or remove it)")
					case key == QueueLabel && field.name == "labels" && !queued:
						found.Warnf(path, "does not queue the JobSet: Kueue queues a JobSet by the label %s in the JobSet's own metadata.labels, so this instance starts without waiting for quota; move the label there", QueueLabel)
					}
				}
			}
		}
	}
	if o := s.Origin("view-copy-medium"); o != "" && (mountsView(s) || imageFlux(s)) {
		found.Warnf(o, "does nothing: no view is copied (view-mount: image mounts it, view-image: none or flux-path use the image's own Flux); remove it")
	}
	return found
}
