//go:build ignore

// ckpt_equal decodes two run checkpoints with this build's code and says
// whether they are equal (reflect.DeepEqual of the decoded Checkpoint).
// Run from the repository root:
//
//	go run scripts/ckpt_equal.go A/checkpoint B/checkpoint
package main

import (
	"fmt"
	"os"
	"reflect"

	"github.com/ptsghmc/ptsghmc/rundir"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/ckpt_equal.go A B")
		os.Exit(2)
	}
	a, err := rundir.ReadCheckpoint(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b, err := rundir.ReadCheckpoint(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !reflect.DeepEqual(a, b) {
		fmt.Printf("checkpoints differ: %s %s\n", os.Args[1], os.Args[2])
		os.Exit(1)
	}
	fmt.Printf("checkpoints equal: %s %s\n", os.Args[1], os.Args[2])
}
