// Package local runs a task, a loop or a batch on this machine, end to end, from a plain,
// JSON-serializable spec and the parts its caller injects (where agents are
// found, how messages reach the user, what shows progress): it creates or
// reopens the run and its worktree, takes the gate's baseline, drives the
// engine, and ends a task's git life (WIP commit, worktree removal, merge,
// push, pull request) and its reports. The command line, a batch scheduler
// and a distributed worker all call it; it knows nothing of flags.
package local
