module github.com/jobset-flux/jobset-flux/hack/kube/registry

go 1.26.0
