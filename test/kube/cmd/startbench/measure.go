package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// watchSettle is how long the watches get to list and start watching
// before the clock starts. kubectl lists first, so an event before that is
// not lost, only stamped late; a second keeps the stamps exact.
const watchSettle = time.Second

// applyAndWatch starts the watches, applies the manifest and follows the
// events until the JobSet ends (or, with hold, until every pod runs).
func (b *bench) applyAndWatch(r *result, s spec, manifest []byte, hold bool) (*tracker, error) {
	pw, err := b.c.watch(r.Namespace, "pods")
	if err != nil {
		return nil, err
	}
	defer pw.stop()
	t := &tracker{pods: r.Pods, created: map[string]time.Time{}, started: map[string]time.Time{}, uids: map[string]string{}}
	ends := &watch{} // Flux's own start ends with its pod: no second watch
	if res := s.endResource(); res != "" {
		if ends, err = b.c.watch(r.Namespace, res); err != nil {
			return nil, err
		}
		defer ends.stop()
	} else {
		t.podEnds, t.pods = true, 1
	}
	time.Sleep(watchSettle)
	r.Load1 = load1()
	t.t0 = time.Now()
	r.Start = t.t0
	if out, err := b.c.run(time.Minute, manifest, "apply", "-f", "-"); err != nil {
		return nil, fmt.Errorf("apply: %w\n%s", err, out)
	}
	return t, b.follow(t, pw, ends, hold, s.v.fail)
}

// follow consumes watch events until the run's end or timeout. A run
// whose command fails ends as it ends; any other must complete.
func (b *bench) follow(t *tracker, pw, ends *watch, hold, fail bool) error {
	timeout := time.After(b.timeout)
	for {
		select {
		case e, ok := <-pw.events:
			if !ok {
				return fmt.Errorf("the pod watch ended: %v %s", <-pw.done, pw.stderr.String())
			}
			if err := t.pod(e); err != nil {
				return err
			}
		case e, ok := <-ends.events: // nil for Flux's own start: never ready
			if !ok {
				return fmt.Errorf("the watch of the end object ended: %v %s", <-ends.done, ends.stderr.String())
			}
			if err := t.ended(e); err != nil {
				return err
			}
		case <-timeout:
			return fmt.Errorf("not done after %s: %d/%d pods created, %d started, end %q", b.timeout, len(t.created), t.pods, len(t.started), t.end)
		}
		if _, all := t.latest(t.started); hold && all {
			return nil
		}
		switch {
		case t.end == "":
		case t.end == "Completed" || fail:
			return nil
		default:
			return fmt.Errorf("the run failed: %s", t.why)
		}
	}
}

// collect reads the pods' final status and logs and fills the milestones.
func (b *bench) collect(r *result, s spec, t *tracker) error {
	r.End, r.EndWhy = t.end, t.why
	pods, err := b.finalPods(r, t.pods)
	if err != nil {
		return err
	}
	m := r.Milestones
	created, _ := t.latest(t.created)
	running, ok := t.latest(t.started)
	if !ok {
		return fmt.Errorf("only %d of %d pods were seen started", len(t.started), t.pods)
	}
	m[msCreated], m[msRunning], m[msCompleted] = t.since(created), t.since(running), t.since(t.endAt)
	clocks := map[string]time.Time{}
	for _, p := range pods {
		container := "app"
		if s.v.anchor() {
			container = "" // every container: the anchors name theirs
		}
		app, err := b.logs(r.Namespace, p.Metadata.Name, container)
		if err != nil && r.Fail {
			continue // a failed run's pod may be gone already
		}
		if err != nil {
			return err
		}
		if err := outputs(app, clocks); err != nil {
			return err
		}
		if err := b.fluxPod(r, t, p, app); err != nil {
			return err
		}
	}
	// Every task prints before it fails, but a failed run's pods may be
	// stopped before theirs reached a log: one line is enough there.
	if len(clocks) != r.Pods && !(r.Fail && len(clocks) > 0) {
		return fmt.Errorf("%d tasks printed their line, want %d", len(clocks), r.Pods)
	}
	var all []time.Time
	for _, at := range clocks {
		all = append(all, at)
	}
	slices.SortFunc(all, func(a, b time.Time) int { return a.Compare(b) })
	m[msFirstOutput], m[msLastOutput] = t.since(all[0]), t.since(all[len(all)-1])
	return nil
}

// fluxPod adds one Flux pod's view copy, broker start and (on rank 0)
// broker events to the run.
func (b *bench) fluxPod(r *result, t *tracker, p pod, app []logLine) error {
	v := r.variant()
	m := r.Milestones
	if at, ok := brokerEvent(app, "rc1-success"); ok {
		m[msRC1] = t.since(at)
	}
	if at, ok := brokerEvent(app, "quorum-full"); ok {
		m[msJoined] = t.since(at)
	}
	if v.kind == kindFluxOwn {
		at, err := fluxStart(app)
		if err != nil {
			return err
		}
		m[msBrokerStart] = t.since(at)
	}
	if !v.rendered() || v.fail {
		return nil
	}
	name := p.Metadata.Name
	// A mounted view (view-mount image) has no flux-installer to time.
	if v.copies() {
		inst, err := b.logs(r.Namespace, name, "flux-installer")
		if err != nil {
			return err
		}
		start, done, err := installerSpan(inst)
		if err != nil {
			return fmt.Errorf("pod %s: %w", name, err)
		}
		r.InitCopy = append(r.InitCopy, done.Sub(start).Seconds())
		if s, f, ok := p.initStatus(); ok {
			r.InitStatus = append(r.InitStatus, s+" "+f)
		}
		m[msInitStart] = max(m[msInitStart], t.since(start))
		m[msInitDone] = max(m[msInitDone], t.since(done))
	}
	exec, ok := firstWith(app, "jobset-flux: starting:")
	if !ok {
		return fmt.Errorf("pod %s: the entrypoint never logged starting", name)
	}
	m[msBrokerStart] = max(m[msBrokerStart], t.since(exec))
	return nil
}

// finalPods lists the run's pods after the end and checks that every one
// of them succeeded once: a retried or restarted pod is not start-up.
func (b *bench) finalPods(r *result, want int) ([]pod, error) {
	out, err := b.c.run(time.Minute, nil, "get", "-n", r.Namespace, "pods", "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("decode pods: %w", err)
	}
	var pods []pod
	for _, raw := range list.Items {
		p, err := decodePod(raw)
		if err != nil {
			return nil, err
		}
		if r.Fail { // it ends as it ends: its pods may still be stopping
			pods = append(pods, *p)
			continue
		}
		if p.Status.Phase != "Succeeded" || p.restarts() > 0 {
			return nil, fmt.Errorf("pod %s: phase %s, %d restarts", p.Metadata.Name, p.Status.Phase, p.restarts())
		}
		pods = append(pods, *p)
	}
	if len(pods) != want && !(r.Fail && len(pods) > 0) {
		return nil, fmt.Errorf("%d pods, want %d", len(pods), want)
	}
	return pods, nil
}

// logs returns a container's log ("" for all of them) with the runtime's
// timestamps.
func (b *bench) logs(ns, pod, container string) ([]logLine, error) {
	args := []string{"logs", "-n", ns, pod, "--timestamps"}
	if container == "" {
		args = append(args, "--all-containers")
	} else {
		args = append(args, "-c", container)
	}
	out, err := b.c.run(time.Minute, nil, args...)
	if err != nil {
		return nil, err
	}
	return parseLog(string(out)), nil
}
