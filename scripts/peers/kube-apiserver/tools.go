//go:build tools

// Package peers pins the kube-apiserver command for `go build`.
package peers

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
