// Package temporal holds jlgcli's end-to-end tests against a real Temporal
// server (go.temporal.io/server/temporaltest, in-process, SQLite in memory):
// a module of its own, so that the server's long first compile never slows
// the main module's tests, and the build cache keeps it.
package temporal
