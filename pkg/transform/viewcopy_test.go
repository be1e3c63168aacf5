package transform_test

import (
	"bytes"
	"reflect"
	"testing"
)

// epVolume is the pod's volume called name, nil when it has none.
func epVolume(pod map[string]any, name string) map[string]any {
	items, _ := pod["volumes"].([]any)
	for _, item := range items {
		if v, _ := item.(map[string]any); v["name"] == name {
			return v
		}
	}
	return nil
}

// TestViewCopyMedium: view-mount copy puts the software tree in a
// memory-backed emptyDir unless view-copy-medium is disk; the broker's
// state (flux-install) stays on the node's disk either way; image mode
// has no software volume. Each render renders again unchanged.
func TestViewCopyMedium(t *testing.T) {
	for _, c := range []struct {
		annotations, medium string
		software            bool
	}{
		{"", "Memory", true},
		{`, flux-framework.org/view-copy-medium: memory`, "Memory", true},
		{`, flux-framework.org/view-copy-medium: disk`, "", true},
		{`, flux-framework.org/view-mount: image`, "", false},
		{`, flux-framework.org/view-mount: image, flux-framework.org/view-copy-medium: disk`, "", false},
	} {
		_, out, pod := epPod(t, c.annotations, epApp)
		software := epVolume(pod, "flux-software")
		if (software != nil) != c.software {
			t.Fatalf("%q: flux-software volume %v, want one: %v", c.annotations, software, c.software)
		}
		if software != nil {
			want := map[string]any{}
			if c.medium != "" {
				want["medium"] = c.medium
			}
			if dir, ok := software["emptyDir"].(map[string]any); !ok || !reflect.DeepEqual(dir, want) {
				t.Errorf("%q: flux-software %v, want emptyDir %v", c.annotations, software, want)
			}
		}
		if install, _ := epVolume(pod, "flux-install")["emptyDir"].(map[string]any); install == nil || len(install) != 0 {
			t.Errorf("%q: flux-install %v, want a plain emptyDir on the node's disk", c.annotations, epVolume(pod, "flux-install"))
		}
		epRerender(t, out)
	}
}

// TestViewCopyMediumRerendered: a render whose software volume is on the
// disk (an earlier release's, or view-copy-medium changed since) renders
// again as a fresh render of the current setting, with one volume.
func TestViewCopyMediumRerendered(t *testing.T) {
	_, memory, _ := epPod(t, "", epApp)
	_, disk, _ := epPod(t, `, flux-framework.org/view-copy-medium: disk`, epApp)
	inMemory := []byte("              - name: flux-software\n                emptyDir:\n                  medium: Memory\n")
	onDisk := []byte("              - name: flux-software\n                emptyDir: {}\n")
	if !bytes.Contains(memory, inMemory) || !bytes.Contains(disk, onDisk) {
		t.Fatalf("the renders do not hold the software volumes as this test expects:\n%s\n---\n%s", memory, disk)
	}
	for _, c := range []struct {
		name        string
		input, want []byte
	}{
		{"an earlier release's render", bytes.Replace(memory, inMemory, onDisk, 1), memory},
		{"disk, then the annotation taken away", bytes.Replace(disk, []byte(", flux-framework.org/view-copy-medium: disk"), nil, 1), memory},
		{"memory, then the annotation set to disk", bytes.Replace(memory, []byte(`flux-framework.org/enabled: "true"`), []byte(`flux-framework.org/enabled: "true", flux-framework.org/view-copy-medium: disk`), 1), disk},
	} {
		if bytes.Equal(c.input, memory) || bytes.Equal(c.input, disk) {
			t.Fatalf("%s: the edit did not apply", c.name)
		}
		rl, ok, again, err := hKRM(t, hProcessor(t), c.input)
		if err != nil || !ok {
			t.Fatalf("%s: re-render refused (%v): %s", c.name, err, hDump(rl))
		}
		if !bytes.Equal(hItemsOnly(again), hItemsOnly(c.want)) {
			t.Errorf("%s: re-rendered as\n%s\n--- want\n%s", c.name, hItemsOnly(again), hItemsOnly(c.want))
		}
	}
}
