package plan

import (
	"path"
	"slices"

	"github.com/jobset-flux/jobset-flux/pkg/jobset"
	"github.com/jobset-flux/jobset-flux/pkg/settings"
)

// subdomain is the pods' DNS subdomain: spec.network.subdomain, else the
// JobSet's name (the JobSet controller's default).
func subdomain(js *jobset.JobSet) string {
	if js.Subdomain != "" {
		return js.Subdomain
	}
	return js.Name
}

// imageFlux reports whether the app image carries Flux: view-image none,
// or a flux-path, which implies it.
func imageFlux(s *settings.Settings) bool {
	return s.ViewImage == settings.NoView || s.FluxPath != ""
}

// mountedPaths are the paths the render mounts into the wrapped
// container, which the user's mounts must stay clear of: an image with
// its own Flux gets no software tree, and keeps its own /opt/software (a
// Spack installation) visible; a mounted view image adds its views.
func mountedPaths(s *settings.Settings) []string {
	var paths []string
	switch {
	case imageFlux(s):
		paths = []string{InstallDir, ConfigDir, CurveDir}
	case mountsView(s):
		paths = []string{InstallDir, SoftwareDir, ViewsDir, ConfigDir, CurveDir}
	default:
		paths = []string{InstallDir, SoftwareDir, ConfigDir, CurveDir}
	}
	if s.StateClaim != "" {
		paths = append(paths, StateMountDir)
	}
	if s.OwnerReferences {
		paths = append(paths, OwnerTokenDir)
	}
	return paths
}

// leader is rank 0's container: pod 0 of the first group, whose command
// Flux runs.
func leader(js *jobset.JobSet, groups []Group) *jobset.Container {
	return container(js, &groups[0])
}

// container is a group's wrapped container.
func container(js *jobset.JobSet, g *Group) *jobset.Container {
	return &js.ReplicatedJobs[g.Index].Pod.Containers[g.Container]
}

// hasCommand reports whether the leader has a command or args to run.
func hasCommand(js *jobset.JobSet, groups []Group) bool {
	return len(groups[0].Command) > 0 || len(leader(js, groups).Args) > 0
}

// isInteractive reports whether the instance runs no command: interactive
// when set, else when the leader has nothing to run; never a launcher.
func isInteractive(js *jobset.JobSet, s *settings.Settings, groups []Group) bool {
	switch {
	case s.Launcher:
		return false
	case s.Interactive != nil:
		return *s.Interactive
	}
	return !hasCommand(js, groups)
}

// isReserved reports whether a volume name is one the function owns.
func isReserved(name string) bool { return slices.Contains(ReservedVolumes, name) }

// cleanPath is a mount path with repeated slashes, "." and ".." resolved.
func cleanPath(p string) string { return path.Clean("/" + p) }

func mountsView(s *settings.Settings) bool {
	return !imageFlux(s) && s.ViewMount == settings.ViewMountImage
}
