package sandbox

import "fmt"

// tmpSize is the size of a call's private /tmp and /dev/shm.
func (b *Box) tmpSize() int64 {
	if b.cfg.MaxTmp > 0 {
		return b.cfg.MaxTmp
	}
	return DefaultLimits.Tmp
}

// Limits say how each call's limits are enforced on this machine.
func Limits(c Config) []string {
	return []string{"temporary space (/tmp, /dev/shm): " + sizeText(cmpOr(c.MaxTmp, DefaultLimits.Tmp)) + " each (a tmpfs)"}
}

func cmpOr(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

func sizeText(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
