package settings_test

import (
	"reflect"
	"testing"

	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// Issue 19, class 9: a value the function config sets for every JobSet
// can be cleared on one JobSet: an empty annotation puts a setting that
// has no default back to none/derived, whatever the config said, and
// leaves no origin (launcher mode refuses run-options by its origin).
func TestEmptyAnnotationClears(t *testing.T) {
	configValues := map[string]string{
		"run-options":       "-o cpu-affinity=per-task",
		"tasks-per-node":    "4",
		"cores-per-node":    "8",
		"gpus-per-node":     "2",
		"replicated-jobs":   "workers",
		"container":         "app",
		"interactive":       "true",
		"broker-attributes": "broker.quorum=1",
		"broker-config":     "[resource]\nexclude = \"0\"\n",
		"log-level":         "5",
		"flux-path":         "/usr",
		"setup":             "module load mpi",
		"curve-secret":      "site-curve",
		"shm-size":          "1Gi",
	}
	defaults := settings.Defaults()
	for name, value := range configValues {
		t.Run(name, func(t *testing.T) {
			config := settings.Layer{Kind: settings.FromConfig, Values: map[string]settings.Raw{name: {Value: value, Path: "data." + name}}}
			ann := settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{name: {Value: "", Path: "metadata.annotations[flux-framework.org/" + name + "]"}}}
			s, found := resolve(config)
			if len(found) > 0 || s.Origin(name) != "data."+name {
				t.Fatalf("the config's %s: %v, origin %q", name, found, s.Origin(name))
			}
			// In either order: the annotation is the higher layer.
			for _, order := range [][]settings.Layer{{config, ann}, {ann, config}} {
				s, found := resolve(order...)
				if len(found) > 0 {
					t.Errorf("%s: \"\" is refused: %v", name, found)
				}
				if o := s.Origin(name); o != "" {
					t.Errorf("%s cleared, origin %q; want none (it is at its default)", name, o)
				}
				if !sameSettings(s, defaults) {
					t.Errorf("%s cleared: %+v; want the defaults %+v", name, s, defaults)
				}
			}
		})
	}
}

// A setting with a default keeps refusing an empty value: "" is not a
// port, and clearing cannot mean anything but the default, which the
// annotation can name.
func TestEmptyValueOfSettingWithDefault(t *testing.T) {
	for _, name := range []string{"port", "view-image", "queue-policy", "launcher", "topology", "network-device", "connect-timeout"} {
		ann := settings.Layer{Kind: settings.FromAnnotation, Values: map[string]settings.Raw{name: {Value: "", Path: "ann"}}}
		if _, found := resolve(ann); len(found) != 1 {
			t.Errorf("%s: \"\" gives %v, want one error", name, found)
		}
	}
}

// sameSettings compares the exported fields of two Settings.
func sameSettings(a, b settings.Settings) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		// An empty list and no list mean the same: none.
		if fa.Kind() == reflect.Slice && fa.Len() == 0 && fb.Len() == 0 {
			continue
		}
		if fa.Kind() == reflect.Map && fa.Len() == 0 && fb.Len() == 0 {
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			return false
		}
	}
	return true
}
