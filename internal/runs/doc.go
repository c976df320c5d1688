// Package runs is what every front end (the command line, the web board,
// hooks) calls to act on jlgcli's runs with plain values, whether a run is
// made here (package local) or on the workers of a Temporal server
// (package temporal): start one with one call from a command's flags (Front
// gives what only the front end can: the configuration as it resolves it and
// the parts a run reports through), list them with their live state,
// show one, follow its events as they are written, stop it from another
// process, and resume it with new limits. It prints nothing: what it has to
// say goes through the local.Parts it is given, and its results are values.
package runs
