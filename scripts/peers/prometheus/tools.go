//go:build tools

// Package peers pins the prometheus and promtool commands for `go build`.
package peers

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
