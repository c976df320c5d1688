//go:build !unix

package live

// onResize: no signal tells of a resize here; the width is read at each
// frame.
func onResize(func()) bool { return false }
