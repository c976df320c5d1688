//go:build race

package sandbox

// raceEnabled tells that the test binary, the sandbox's helper inside, is a
// race-enabled build: it maps terabytes of shadow memory, which RLIMIT_DATA
// counts.
const raceEnabled = true
