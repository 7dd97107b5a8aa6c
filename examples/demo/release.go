//go:build !upgrade

package main

// The released demo. Building with `-tags upgrade` gives its next release instead (see
// upgrade.go), which the drift tests use as a simulated application upgrade.
const (
	release  = "1.0.0"
	upgraded = false
)
