//go:build race

package cli_test

// raceEnabled tells that the programs run by the scripts are race-enabled
// builds, whose memory is several times larger.
const raceEnabled = true
