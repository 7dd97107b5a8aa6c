//go:build upgrade

package main

// The next release of the demo, for drift tests: `task archive` is new, `note search` is gone
// and `task add --priority` accepts "urgent".
const (
	release  = "1.1.0"
	upgraded = true
)
