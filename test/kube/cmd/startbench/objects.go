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

// ending is the part of a JobSet, Job or TrainJob the benchmark reads:
// its conditions.
type ending struct {
	Status struct {
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// end is "Completed" or "Failed" once the object has the condition that
// ends it: a JobSet's Completed or Failed, a Job's or a TrainJob's
// Complete or Failed. why keeps the condition's own words.
func (o *ending) end() (state, why string) {
	for _, c := range o.Status.Conditions {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case "Completed", "Complete":
			state = "Completed"
		case "Failed":
			state = "Failed"
		default:
			continue
		}
		return state, c.Type + " " + c.Reason + ": " + c.Message
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

func decodeEnding(raw json.RawMessage) (*ending, error) {
	var o ending
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("decode the end object: %w", err)
	}
	return &o, nil
}
