module github.com/jobset-flux/jobset-flux/hack/kube/registry

go 1.26.0

require (
	github.com/jobset-flux/jobset-flux/test/testsupport v0.0.0
	google.golang.org/grpc v1.72.2
)

require (
	golang.org/x/net v0.47.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	golang.org/x/text v0.31.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250528174236-200df99c418a // indirect
	google.golang.org/protobuf v1.36.8 // indirect
	k8s.io/cri-api v0.35.4
)

replace github.com/jobset-flux/jobset-flux/test/testsupport => ../../../test/testsupport
