package main

import (
	"encoding/json"
	"fmt"
)

// pod is the part of a Pod the benchmark reads.
type pod struct {
	Metadata struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Phase                 string            `json:"phase"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
	} `json:"status"`
}

type containerStatus struct {
	Name         string `json:"name"`
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running *struct {
			StartedAt string `json:"startedAt"`
		} `json:"running"`
		Terminated *struct {
			ExitCode   int    `json:"exitCode"`
			StartedAt  string `json:"startedAt"`
			FinishedAt string `json:"finishedAt"`
		} `json:"terminated"`
	} `json:"state"`
}

// started reports whether the pod's app containers have started: the pod
// is Running, or already past it. A floor pod whose command lasts a few
// milliseconds may go from Pending to Succeeded in one status update.
func (p *pod) started() bool {
	switch p.Status.Phase {
	case "Running", "Succeeded", "Failed":
		return true
	}
	return false
}

// restarts is the largest restart count of any of the pod's containers.
func (p *pod) restarts() int {
	n := 0
	for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		n = max(n, c.RestartCount)
	}
	return n
}

// initStatus returns the pod status's view of the flux-installer init
// container, if it has ended.
func (p *pod) initStatus() (started, finished string, ok bool) {
	for _, c := range p.Status.InitContainerStatuses {
		if c.Name == "flux-installer" && c.State.Terminated != nil {
			return c.State.Terminated.StartedAt, c.State.Terminated.FinishedAt, true
		}
	}
	return "", "", false
}

// jobSet is the part of a JobSet the benchmark reads.
type jobSet struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// end is "Completed" or "Failed" once the JobSet has that condition.
func (j *jobSet) end() (state, why string) {
	for _, c := range j.Status.Conditions {
		if (c.Type == "Completed" || c.Type == "Failed") && c.Status == "True" {
			return c.Type, c.Reason + ": " + c.Message
		}
	}
	return "", ""
}

func decodePod(raw json.RawMessage) (*pod, error) {
	var p pod
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("decode pod: %w", err)
	}
	return &p, nil
}

func decodeJobSet(raw json.RawMessage) (*jobSet, error) {
	var j jobSet
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("decode JobSet: %w", err)
	}
	return &j, nil
}
